"""scripts/reproduce.py: what a case counts, every table's configs, and a whole small table run,
resumed and reported."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from types import ModuleType

import pytest
from helpers import script_module, small_config

from neuro_evolution.compare import Run
from neuro_evolution.config.tree import parse_config


@pytest.fixture(scope="module")
def reproduce() -> ModuleType:
    return script_module("reproduce")


def run_of(rows: list[tuple[int, float | None]], target: float = 1.0, episodes: int = 1) -> Run:
    log = [
        {"generation": g, "evaluations": evaluations, "validation_mean": validation}
        for g, (evaluations, validation) in enumerate(rows)
    ]
    config = {"validation": {"target": target}, "episode_runner": {"number_fitness_runs": episodes}}
    return Run(Path("."), config, log)


def test_a_case_counts_evaluations_up_to_the_first_validation_at_the_target(reproduce) -> None:
    """Generations 0-2 of 30 evaluations, generation 2 reaching the target: 90; a run that
    never reaches it: inf; episodes multiply by the episodes per evaluation."""
    case = reproduce.Case("c", "x.json", "paper")
    run = run_of([(30, 0.2), (30, None), (30, 1.0), (30, 1.0)])
    assert reproduce.counted(case, run) == 90
    assert reproduce.counted(case, run_of([(30, 0.9), (30, 0.99)])) == math.inf
    episodes = reproduce.Case("c", "x.json", "paper", count="episodes")
    assert reproduce.counted(episodes, run_of([(8, 0.2), (8, 1.5)], episodes=2)) == 32


def test_a_run_ends_at_its_target_its_budget_or_its_last_generation(reproduce) -> None:
    """A run short of all three can still change its count: not ended."""
    run = run_of([(30, 0.2), (30, None)])
    run.log[-1]["env_steps_total"] = 500
    run.config.update(number_generations=10, max_evaluations=None, max_env_steps=None)
    assert not reproduce.ended(run)
    assert reproduce.ended(dataclasses.replace(run, config={**run.config, "max_evaluations": 60}))
    assert reproduce.ended(dataclasses.replace(run, config={**run.config, "max_env_steps": 500}))
    assert reproduce.ended(dataclasses.replace(run, config={**run.config, "number_generations": 2}))
    run.log[0]["validation_mean"] = 1.0
    assert reproduce.ended(run)


def test_every_case_of_every_table_is_a_valid_config(reproduce) -> None:
    for table in reproduce.TABLES.values():
        for case in table.cases:
            parse_config(reproduce.case_config(case))


def test_a_table_runs_resumes_and_prints_one_line_per_case(reproduce, tmp_path, capsys) -> None:
    """A two-case table of CartPole runs: the first call trains and prints each case's line and
    the paper's figure; a second call trains nothing more and prints the same; an unknown case
    is refused in one line."""
    config = tmp_path / "small.json"
    data = small_config(number_generations=3, validation={"every_generations": 1, "episodes": 2})
    data["validation"]["target"] = 10.0  # reached within the 3 generations
    config.write_text(json.dumps(data))
    never = (("validation.target", 10**6),)
    table = reproduce.Table(
        "a small table",
        "1-2",
        (
            reproduce.Case("easy", str(config), "paper: 1 (Table 0)"),
            reproduce.Case("hard", str(config), "paper: 2 (Table 0)", changes=never),
        ),
    )
    reproduce.TABLES["small"] = table
    try:
        command = ["small", "--out", str(tmp_path / "out"), "--handler", "sequential"]
        assert reproduce.main(command) == 0
        first = capsys.readouterr().out
        assert re.search(
            r"^easy: mean [\d,]+, median [\d,]+ \[[\d,]+, [\d,]+\] 2/2 solved", first, re.M
        )
        assert "hard: mean inf, median inf [inf, inf] 0/2 solved (evaluations)" in first
        assert "    paper: paper: 2 (Table 0)" in first
        logs = sorted((tmp_path / "out").rglob("log.csv"))
        assert len(logs) == 4
        before = [path.read_text() for path in logs]
        assert reproduce.main(command) == 0
        assert [path.read_text() for path in logs] == before
        assert capsys.readouterr().out.endswith(first.split("a small table\n", 1)[1])
        assert reproduce.main([*command, "--cases", "easy,nope"]) == 2
        assert "--cases: unknown nope" in capsys.readouterr().err
    finally:
        del reproduce.TABLES["small"]


# ARS V2-t per task (Mania et al. 2018): N directions, b kept, alpha, nu, the reward shift; the
# shipped configs must carry them
ARS_V2T = {
    "swimmer": (1, 1, 0.02, 0.01, 0.0),
    "hopper": (8, 4, 0.01, 0.025, 1.0),
    "halfcheetah": (32, 4, 0.02, 0.03, 0.0),
    "walker2d": (40, 30, 0.03, 0.025, 1.0),
    "ant": (60, 20, 0.015, 0.025, 1.0),
}


@pytest.mark.parametrize("task", sorted(ARS_V2T))
def test_the_ars_configs_are_the_papers_v2t_protocol(reproduce, task: str) -> None:
    """Each ARS case: the paper's hyperparameters, a clipped linear policy without bias from a
    zero start, state normalization, the shift in training only, 100 held-out episodes against
    the task's threshold, training episodes counted."""
    case = next(case for case in reproduce.TABLES["ars"].cases if case.name == task)
    config = parse_config(reproduce.case_config(case))
    directions, kept, alpha, nu, shift = ARS_V2T[task]
    optimizer = config.optimizer
    assert (optimizer.population_size, optimizer.top_b) == (2 * directions, kept)
    assert (optimizer.step_size, optimizer.noise, optimizer.center_init) == (alpha, nu, 0.0)
    brain = config.brain
    assert (brain.hidden_layers, brain.use_bias, brain.output_activation) == ((), False, "clip")
    assert config.observation_normalization is not None
    assert config.episode_runner.training_reward_shift == shift
    assert config.episode_runner.number_fitness_runs == 1
    assert config.validation.episodes == 100
    assert config.validation.target == reproduce.ARS_TASKS[task][0]
    assert case.count == "episodes"
    assert config.environment.id.endswith("-v5")
