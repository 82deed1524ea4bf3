"""pytest set-up for the suite: headless plotting and rendering, extra modules to import, and
fixtures. Helpers that test modules import live in helpers.py."""

from __future__ import annotations

import importlib
import os
from typing import Any

import pytest

# Before anything the tests import can pick a plotting or rendering backend.
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

from helpers import small_config  # noqa: E402

# Modules to import before the tests are collected, comma-separated: the shared checks that run
# over every registered type (tests/brains/test_brains.py) then include the types they register,
# e.g.
# NEURO_EVOLUTION_TEST_IMPORTS=my_brains.elman python -m pytest tests/brains/test_brains.py
TEST_IMPORTS = "NEURO_EVOLUTION_TEST_IMPORTS"
for _module in filter(None, (m.strip() for m in os.environ.get(TEST_IMPORTS, "").split(","))):
    importlib.import_module(_module)


@pytest.fixture
def small_cartpole() -> dict[str, Any]:
    """A tiny CartPole experiment config as a dict."""
    return small_config()
