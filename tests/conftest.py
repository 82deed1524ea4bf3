"""Shared test helpers: small experiment configs."""

from __future__ import annotations

import copy
import importlib
import importlib.util
import os
from typing import Any

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

# Modules to import before the tests are collected, comma-separated: the shared checks that run
# over every registered type (tests/test_brains.py) then include the types they register, e.g.
# NEURO_EVOLUTION_TEST_IMPORTS=my_brains.elman python -m pytest tests/test_brains.py
TEST_IMPORTS = "NEURO_EVOLUTION_TEST_IMPORTS"
for _module in filter(None, (m.strip() for m in os.environ.get(TEST_IMPORTS, "").split(","))):
    importlib.import_module(_module)

SMALL_CARTPOLE: dict[str, Any] = {
    "environment": {"id": "CartPole-v1"},
    "random_seed": 7,
    "number_generations": 3,
    "optimizer": {"type": "MU_ES", "mu": 6, "lambda_": 12},
    "brain": {"type": "FFNN", "hidden_layers": [4]},
    "episode_runner": {"number_fitness_runs": 2, "max_steps_per_run": 60},
    "evaluation": {"handler": "sequential"},
}


def small_config(**changes: Any) -> dict[str, Any]:
    """A deep copy of a tiny CartPole experiment with top-level keys replaced."""
    config = copy.deepcopy(SMALL_CARTPOLE)
    config.update(copy.deepcopy(changes))
    return config


VALIDATION_COLUMNS = ("validation_mean", "validation_std", "validation_min", "validation_steps")


def without_end_validation(log: list[dict[str, Any]], ended_after: int) -> list[dict[str, Any]]:
    """``log`` of a run that first ended after ``ended_after`` generations and was then extended,
    with that end's validation blanked: a run validates after its last generation, so an extended
    run holds exactly one validation more than a run that went straight through."""
    rows = [dict(row) for row in log]
    assert rows[ended_after - 1]["validation_mean"] is not None, "the run validated at its end"
    rows[ended_after - 1].update(dict.fromkeys(VALIDATION_COLUMNS))
    return rows


@pytest.fixture
def small_cartpole() -> dict[str, Any]:
    """A tiny CartPole experiment config as a dict."""
    return small_config()


def require(module: str) -> object:
    """``module``, imported; the calling test module is skipped only when it is not installed.

    Unlike ``pytest.importorskip``, an installed package that fails to import (a dependency it
    forgot to declare) fails the tests instead of silently skipping them.
    """
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed", allow_module_level=True)
    return importlib.import_module(module)
