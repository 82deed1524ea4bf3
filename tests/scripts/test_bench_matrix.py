"""scripts/bench_matrix.py: its cells' scores, ranks and resumable BBOB cells."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from types import ModuleType

import pytest
from helpers import require, script_module

from neuro_evolution.compare import Run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def matrix() -> ModuleType:
    return script_module("bench_matrix")


def row(generation: int, steps: int, validation: float | None, evaluations: int = 10) -> dict:
    return {
        "generation": generation,
        "evaluations": evaluations,
        "env_steps_total": steps,
        "validation_mean": validation,
    }


def test_steps_to_target_are_those_of_the_first_validation_that_reached_it(matrix) -> None:
    """Env steps at the first held-out mean >= target within the budget; inf when none."""
    task = matrix.EpisodeTask("t", "cartpole.json", "steps", 475, 1000, 4, 1.0, 10)
    log = [row(0, 300, 100.0), row(1, 600, 480.0), row(2, 900, 500.0)]
    assert matrix.episode_score(task, log) == 600
    assert matrix.episode_score(task, log[:1]) == math.inf
    late = dataclasses.replace(task, budget=500)
    assert matrix.episode_score(late, log) == math.inf  # reached only past the budget


def test_evaluations_and_score_at_budget(matrix) -> None:
    """``evaluations`` counts the log's evaluations column; ``score`` is the last held-out mean
    at or below the budget (never one past it)."""
    evaluations = matrix.EpisodeTask("t", "x.json", "evaluations", 0.3, 25, 4, 1.0, 10)
    log = [row(0, 10, 0.1), row(1, 20, 0.35), row(2, 30, 0.4)]
    assert matrix.episode_score(evaluations, log) == 20
    score = matrix.EpisodeTask("t", "x.json", "score", None, 25, 4, 1.0, 10)
    assert matrix.episode_score(score, [row(0, 10, 0.1), row(1, 20, None), row(2, 30, 0.9)]) == 0.1


def test_a_run_is_settled_once_its_score_cannot_change(matrix) -> None:
    """Settled: the config's validation target reached (a run ends there, also on a score
    task), the budget spent or the last generation trained; a run short of all three (running,
    or stopped early) is not, so its cell leaves it out."""

    def run(log: list[dict], target: float | None = 0.5) -> Run:
        config = {"number_generations": 10, "validation": {"target": target}}
        return Run(Path("."), config, log)

    steps = matrix.EpisodeTask("t", "x.json", "steps", 0.5, 100, 4, 1.0, 10)
    assert matrix.settled(steps, run([row(0, 40, 0.1), row(1, 80, 0.6)]))  # target reached
    assert not matrix.settled(steps, run([row(0, 40, 0.1), row(1, 80, 0.2)]))
    assert matrix.settled(steps, run([row(0, 40, 0.1), row(1, 100, 0.2)]))  # budget spent
    assert matrix.settled(steps, run([row(9, 90, 0.2)]))  # the last generation
    score = matrix.EpisodeTask("t", "x.json", "score", None, 100, 4, 1.0, 10)
    assert not matrix.settled(score, run([row(0, 40, 0.4), row(1, 80, 0.4)]))
    assert matrix.settled(score, run([row(0, 40, 0.4), row(1, 80, 0.9)]))  # the config's target
    assert not matrix.settled(score, run([row(0, 40, 0.4), row(1, 80, 0.9)], target=None))
    assert matrix.settled(score, run([row(0, 40, 0.4), row(1, 120, 0.4)]))
    evaluations = matrix.EpisodeTask("t", "x.json", "evaluations", 0.3, 25, 4, 1.0, 10)
    assert not matrix.settled(evaluations, run([row(0, 10, 0.1), row(1, 20, 0.2)]))
    three = [row(0, 10, 0.1), row(1, 20, 0.2), row(2, 30, 0.2)]
    assert matrix.settled(evaluations, run(three))


def test_ranks_share_ties_and_follow_the_direction(matrix) -> None:
    medians = {"A": 10.0, "B": 30.0, "C": 10.0, "D": math.nan, "E": math.inf}
    assert matrix.ranks(medians, lower_is_better=True) == {"A": 1.5, "C": 1.5, "B": 3, "E": 4}
    assert matrix.ranks({"A": 1.0, "B": 2.0}, lower_is_better=False) == {"B": 1, "A": 2}


def test_an_unreached_seed_stays_infinite_in_the_interval(matrix) -> None:
    median, low, high = matrix.median_interval([100.0, 200.0, math.inf])
    assert median == 200.0 and low == 100.0 and high == math.inf


def test_a_bbob_cell_runs_once_and_is_read_back_after(matrix, tmp_path: Path, capsys) -> None:
    """A BBOB cell (COCO's f1 at d = 10) writes each seed's result; a second run reads it
    instead of computing, and ``--report`` tables it without running anything."""
    require("coco")
    args = ["--out", str(tmp_path), "--tasks", "sphere-10", "--optimizers", "SEP_CMA_ES"]
    assert matrix.main([*args, "--seeds", "1"]) == 0
    stored = tmp_path / "coco" / "sphere-10" / "SEP_CMA_ES" / "seed-1.json"
    written = stored.stat().st_mtime_ns
    assert matrix.main([*args, "--seeds", "1", "--report"]) == 0
    assert stored.stat().st_mtime_ns == written
    table = (tmp_path / "matrix.md").read_text()
    assert "| SEP_CMA_ES | " in table and " 1/1 " in table
    assert (tmp_path / "matrix.png").stat().st_size > 0
    assert "sphere-10 SEP_CMA_ES: " in capsys.readouterr().out


def test_each_optimizer_gets_the_tasks_population_and_one_spread_field(matrix) -> None:
    task = matrix.TASKS[-5]  # cartpole
    pgpe = matrix.section("PGPE", task, 100)
    assert pgpe["population_size"] == task.population
    assert pgpe["stdev_init"] == task.spread and "radius_init" not in pgpe  # PGPE takes one
    assert matrix.section("CMA_ES", task, 100)["sigma"] == task.spread


def test_a_cell_config_sets_the_tasks_target_generations_and_validation_period(matrix) -> None:
    """A cell is the shipped config with the task's target, generations and, where the task
    names one, its validation period (LunarLander: every generation)."""
    tasks = {task.name: task for task in matrix.TASKS}
    lunar = matrix.cell_config("SNES", tasks["lunarlander"], 18)
    assert lunar["validation"]["every_generations"] == 1
    assert lunar["validation"]["target"] == 200 and lunar["number_generations"] == 600
    cartpole = matrix.cell_config("SNES", tasks["cartpole"], 10)
    shipped = matrix.json.loads((ROOT / "configs/cartpole.json").read_text())["validation"]
    assert cartpole["validation"]["every_generations"] == shipped["every_generations"]


def test_every_episode_cell_config_is_a_valid_config(matrix) -> None:
    """Each of the package's optimizers that the episode tasks run gets a config that passes the
    config checks on each task (GA's default 20 parents need a population of 20 or more: the
    double pole has 16). Optimizers other tests registered are not the matrix's to fit."""
    from neuro_evolution.config.tree import parse_config

    names = [
        name
        for name in matrix.OPTIMIZERS.names()
        if matrix.OPTIMIZERS.get(name)[1].__module__.startswith("neuro_evolution.")
        and not matrix.measured(name)
    ]
    assert "GA" in names and "CR_FM_NES" in names
    for task in matrix.TASKS:
        if isinstance(task, matrix.EpisodeTask):
            for name in names:
                parse_config(matrix.cell_config(name, task, 10))


def test_a_run_that_failed_is_scored_on_what_it_logged_and_named(matrix, tmp_path, capsys):
    """A cell whose runs' optimizer raised at generation 2 (a method that diverged): the sweep
    exits 3, and each seed counts as not reaching the target (inf), named on stderr with its
    error, where a run merely stopped there would be left out."""
    from helpers import small_config

    from neuro_evolution.sweep import cli as sweep_cli

    data = small_config(
        number_generations=6,
        imports=["examples.diverging_snes"],
        optimizer={"type": "DIVERGING_SNES", "population_size": 6, "fail_at_generation": 2},
        validation={"every_generations": 1, "episodes": 2, "target": 475},
    )
    config = tmp_path / "cell.json"
    config.write_text(matrix.json.dumps(data))
    folder = tmp_path / "DIVERGING_SNES"
    args = [str(config), "--seeds", "1-2", "--out", str(folder), "--handler", "sequential"]
    assert sweep_cli.main([*args, "--quiet"]) == 3
    capsys.readouterr()
    task = matrix.EpisodeTask("t", "cartpole.json", "steps", 475, 10_000, 6, 0.3, 6)
    assert matrix.episode_scores(task, folder, [1, 2]) == [math.inf, math.inf]
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"t DIVERGING_SNES: seed {seed} failed (generation 2 failed: FloatingPointError: "
        "DIVERGING_SNES diverged at generation 2)"
        for seed in (1, 2)
    ]
    for seed in (1, 2):
        (folder / "base" / f"seed-{seed}" / "failure.txt").unlink()  # as if stopped by hand
    assert all(math.isnan(score) for score in matrix.episode_scores(task, folder, [1, 2]))
    assert "not ended" in capsys.readouterr().err


def test_an_episode_cell_that_never_ran_reads_as_not_run(matrix, tmp_path: Path) -> None:
    """--report over a cell with no run directory gives nan per seed (a '-' in the table)."""
    task = {task.name: task for task in matrix.TASKS}["cartpole"]
    scores = matrix.episode_scores(task, tmp_path, [1, 2, 3])
    assert len(scores) == 3 and all(math.isnan(score) for score in scores)
    assert matrix.cell_text(scores, task) == "-"
