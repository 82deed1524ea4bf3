"""``max_evaluations``: a run ends, validated, after the generation whose training evaluations
(genomes scored; validation not counted) reach the budget; like ``max_env_steps`` it is a run
length that a resume or a sweep may change, and a run directory written without it resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import pbt_config_data, small_config, write_json

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.pbt import cli as pbt_cli
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.resume import resume_experiment
from neuro_evolution.support.errors import ConfigError

VALIDATED = {"every_generations": 4, "episodes": 2}


def budget_config(budget: int | None, generations: int = 12, **changes) -> dict:
    return small_config(
        number_generations=generations, max_evaluations=budget, validation=VALIDATED, **changes
    )


def run_log(data: dict) -> list[dict]:
    experiment = Experiment(parse_config(data))
    summary = experiment.run()
    assert summary.evaluations == sum(row.evaluations for row in experiment.log)
    return [{k: v for k, v in row.to_dict().items() if k != "wall_time"} for row in experiment.log]


def training_columns(rows: list[dict]) -> list[dict]:
    """The rows without wall time and validation."""
    return [
        {k: v for k, v in row.items() if k != "wall_time" and not k.startswith("validation")}
        for row in rows
    ]


def population() -> int:
    return run_log(budget_config(None, generations=1))[0]["evaluations"]


def test_a_run_ends_validated_at_the_generation_whose_evaluations_reach_the_budget() -> None:
    """A budget reached during generation 4 (0-based) ends the run there, validated, with the
    training of a run without the budget up to there."""
    size = population()
    unlimited = run_log(budget_config(None))
    limited = run_log(budget_config(4 * size + 1))
    assert len(limited) == 5
    assert sum(row["evaluations"] for row in limited) == 5 * size
    assert limited[-1]["validation_mean"] is not None
    assert unlimited[4]["validation_mean"] is None  # generation 4 is not a validation one
    assert training_columns(limited) == training_columns(unlimited[:5])


def test_a_budget_met_exactly_ends_the_run_at_that_generation() -> None:
    """The generation whose evaluations equal the budget is the last."""
    assert len(run_log(budget_config(3 * population()))) == 3


def test_the_budget_that_comes_first_ends_the_run() -> None:
    """With both budgets set, whichever the training reaches first ends the run."""
    size = population()
    steps = run_log(budget_config(None))[1]["env_steps_total"]
    assert len(run_log(budget_config(6 * size, max_env_steps=steps))) == 2
    assert len(run_log(budget_config(2 * size, max_env_steps=10**9))) == 2


def test_a_resume_with_a_larger_budget_continues_like_a_straight_run(tmp_path: Path) -> None:
    """A run ended by its evaluation budget, resumed with a larger one, trains what a run given
    the larger budget from the start trains."""
    size = population()
    first = Experiment(parse_config(budget_config(3 * size)), run_dir=tmp_path / "resumed")
    first.run()
    assert first.generation == 3
    assert resume_experiment(tmp_path / "resumed").done
    resumed = resume_experiment(tmp_path / "resumed", max_evaluations=8 * size)
    assert not resumed.done
    resumed.run()
    Experiment(parse_config(budget_config(8 * size)), run_dir=tmp_path / "straight").run()
    resumed_log = read_log(tmp_path / "resumed" / "log.csv")
    straight = read_log(tmp_path / "straight" / "log.csv")
    assert len(resumed_log) == len(straight) == 8
    assert training_columns(resumed_log) == training_columns(straight)
    stored = json.loads((tmp_path / "resumed" / "config.json").read_text())
    assert stored["max_evaluations"] == 8 * size


def test_a_run_directory_written_without_the_budget_key_resumes(tmp_path: Path) -> None:
    """A config.json without max_evaluations (written before the option) resumes: the budget
    is not part of the config hash."""
    run_dir = tmp_path / "old"
    experiment = Experiment(parse_config(budget_config(None, 5)), run_dir=run_dir)
    for _ in range(2):
        experiment.step()
    experiment.close()
    stored = json.loads((run_dir / "config.json").read_text())
    del stored["max_evaluations"]
    (run_dir / "config.json").write_text(json.dumps(stored))
    resume_experiment(run_dir).run()
    assert len(read_log(run_dir / "log.csv")) == 5


def test_train_reports_the_budget_and_resume_names_the_option(tmp_path: Path, capsys) -> None:
    """train's last lines count the evaluations and name the budget that ended the run; a
    resume of it says why it stopped and that --max-evaluations trains it on."""
    size = population()
    config = write_json(tmp_path / "c.json", budget_config(2 * size))
    run_dir = tmp_path / "run"
    assert train.main([str(config), "--out", str(run_dir), "--quiet"]) == 0
    said = capsys.readouterr().out
    assert f"{2 * size} evaluations" in said and f"(reached max_evaluations {2 * size})" in said
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0
    said = capsys.readouterr().out
    assert f"reached max_evaluations {2 * size}" in said and "--max-evaluations N" in said
    more = ["--resume", str(run_dir), "--quiet", "--max-evaluations", str(5 * size)]
    assert train.main(more) == 0
    assert len(read_log(run_dir / "log.csv")) == 5


def test_train_takes_the_option_over_the_config(tmp_path: Path) -> None:
    size = population()
    config = write_json(tmp_path / "c.json", budget_config(None))
    run_dir = tmp_path / "run"
    command = [str(config), "--out", str(run_dir), "--quiet", "--max-evaluations", str(size)]
    assert train.main(command) == 0
    assert len(read_log(run_dir / "log.csv")) == 1


def test_a_pbt_config_with_an_evaluation_budget_is_refused_in_one_line(
    tmp_path: Path, capsys
) -> None:
    data = pbt_config_data()
    data["max_evaluations"] = 1000
    config = write_json(tmp_path / "pbt.json", data)
    out = tmp_path / "pbt"
    assert pbt_cli.main([str(config), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert "max_evaluations" in error and "\n" not in error
    assert not out.exists()


def test_a_budget_below_one_is_refused(capsys) -> None:
    with pytest.raises(ConfigError, match="max_evaluations"):
        parse_config(budget_config(0))
    with pytest.raises(SystemExit):
        train.main(["configs/cartpole.json", "--max-evaluations", "0"])
    assert "--max-evaluations must be >= 1" in capsys.readouterr().err
