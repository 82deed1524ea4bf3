"""Shared test helpers: small experiment configs."""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

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


@pytest.fixture
def small_cartpole() -> dict[str, Any]:
    """A tiny CartPole experiment config as a dict."""
    return small_config()
