"""scripts/bench_solve.py: a case solved on held-out episodes, the validation steps counted
apart up to the solving validation, and --set changing the case's config."""

from __future__ import annotations

from types import ModuleType

import pytest
from helpers import script_module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return script_module("bench_solve")


def test_validation_steps_are_those_up_to_the_solving_validation_and_set_reaches_the_config(
    bench: ModuleType,
) -> None:
    """CartPole seed 1 on one worker: solved, with the validation env steps of every validation
    up to the solving one (10 episodes each: a solved CartPole validation alone is >= 4,750
    steps); with --set validation.episodes=2 the same search spends fewer on looking."""
    case = bench.CASES["cartpole"]._replace(limit_seconds=120.0)
    ten = bench.solve(case, 1, 1, [])
    two = bench.solve(case, 1, 1, ["validation.episodes=2"])
    for run in (ten, two):
        assert run["solved"] is not None, run
    generations = ten["solved"].generation + 1  # validated after every generation from 0
    assert ten["validation_steps"] >= 4750 and ten["validation_steps"] <= generations * 10 * 500
    assert two["validation_steps"] < ten["validation_steps"]
