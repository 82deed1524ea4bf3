"""``max_env_steps``: a run ends, validated, after the generation whose training env steps reach
the budget; the budget is a run length like ``number_generations`` (a resume or a sweep may
change it, and a run directory written without it resumes)."""

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
from neuro_evolution.sweep import cli as sweep_cli

VALIDATED = {"every_generations": 4, "episodes": 2}


def budget_config(budget: int | None, generations: int = 12) -> dict:
    return small_config(number_generations=generations, max_env_steps=budget, validation=VALIDATED)


def straight_log(budget: int | None, generations: int = 12) -> list[dict]:
    experiment = Experiment(parse_config(budget_config(budget, generations)))
    experiment.run()
    return [row.to_dict() for row in experiment.log]


def training_columns(rows: list[dict]) -> list[dict]:
    """The rows without wall time and validation."""
    return [
        {k: v for k, v in row.items() if k != "wall_time" and not k.startswith("validation")}
        for row in rows
    ]


def without_wall_time(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "wall_time"} for row in rows]


def test_a_run_ends_validated_at_the_generation_whose_env_steps_reach_the_budget() -> None:
    """The run stops at the first generation whose env_steps_total reaches the budget, not at
    number_generations, validates that generation's candidate, and trains exactly what a run
    without the budget trains up to there."""
    unlimited = straight_log(None)
    budget = unlimited[4]["env_steps_total"] - 1  # reached during generation 4
    limited = straight_log(budget)
    assert len(limited) == 5
    assert limited[-1]["env_steps_total"] >= budget > limited[-2]["env_steps_total"]
    assert limited[-1]["validation_mean"] is not None  # the last generation is validated
    assert unlimited[4]["validation_mean"] is None  # generation 4 is not a validation one
    assert training_columns(limited) == training_columns(unlimited[:5])


def test_a_budget_beyond_number_generations_leaves_the_run_as_it_was() -> None:
    """number_generations ends the run first when the budget is not reached."""
    assert without_wall_time(straight_log(10**9)) == without_wall_time(straight_log(None))


def test_a_resume_with_a_larger_budget_continues_like_a_straight_run(tmp_path: Path) -> None:
    """A run ended by its budget, resumed with a larger one, equals a run given the larger budget
    from the start (the budget, like number_generations, may change at a resume)."""
    unlimited = straight_log(None)
    small, large = unlimited[2]["env_steps_total"], unlimited[7]["env_steps_total"]
    first = Experiment(parse_config(budget_config(small)), run_dir=tmp_path / "resumed")
    first.run()
    assert first.generation == 3
    resumed = resume_experiment(tmp_path / "resumed", max_env_steps=large)
    assert not resumed.done
    resumed.run()
    Experiment(parse_config(budget_config(large)), run_dir=tmp_path / "straight").run()
    resumed_log = without_wall_time(read_log(tmp_path / "resumed" / "log.csv"))
    straight = without_wall_time(read_log(tmp_path / "straight" / "log.csv"))
    # the first session validated generation 3 as its last; the straight run did not
    assert [r["generation"] for r in resumed_log] == [r["generation"] for r in straight]
    for row in (*resumed_log[:2], *resumed_log[3:]):
        assert row == straight[row["generation"]]
    assert json.loads((tmp_path / "resumed" / "config.json").read_text())["max_env_steps"] == large


def test_a_run_directory_written_without_the_budget_key_resumes(tmp_path: Path) -> None:
    """A run directory whose config.json has no max_env_steps (written before the option) resumes:
    the budget is not part of the config hash."""
    run_dir = tmp_path / "old"
    experiment = Experiment(parse_config(budget_config(None, 6)), run_dir=run_dir)
    for _ in range(3):
        experiment.step()
    experiment.close()
    stored = json.loads((run_dir / "config.json").read_text())
    del stored["max_env_steps"]
    (run_dir / "config.json").write_text(json.dumps(stored))
    resumed = resume_experiment(run_dir)
    assert resumed.generation == 3
    resumed.run()
    assert len(read_log(run_dir / "log.csv")) == 6


def test_a_sweep_applies_its_own_budget_to_a_run_it_resumes(tmp_path: Path) -> None:
    """A sweep run again with a larger budget in its config trains its ended runs on to it, as
    --generations extends them."""
    unlimited = straight_log(None)
    config = write_json(tmp_path / "c.json", budget_config(unlimited[1]["env_steps_total"]))
    out = tmp_path / "sweep"
    command = [str(config), "--seeds", "1", "--out", str(out), "--handler", "sequential"]
    assert sweep_cli.main([*command, "--quiet"]) == 0
    run_dir = next(out.rglob("log.csv")).parent
    assert len(read_log(run_dir / "log.csv")) == 2
    write_json(config, budget_config(unlimited[5]["env_steps_total"]))
    assert sweep_cli.main([*command, "--quiet"]) == 0
    assert len(read_log(run_dir / "log.csv")) == 6


def test_a_pbt_config_with_a_budget_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    """A PBT trains every member for number_generations: a budget is refused before any folder."""
    data = pbt_config_data()
    data["max_env_steps"] = 1000
    config = write_json(tmp_path / "pbt.json", data)
    out = tmp_path / "pbt"
    assert pbt_cli.main([str(config), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert "max_env_steps" in error and "\n" not in error
    assert not out.exists()


def test_a_budget_below_one_is_refused() -> None:
    with pytest.raises(ConfigError, match="max_env_steps"):
        parse_config(budget_config(0))


def test_train_says_the_budget_ended_the_run(tmp_path: Path, capsys) -> None:
    """The end-of-run report names the budget when it ended the run, and only then."""
    budget = straight_log(None)[1]["env_steps_total"]
    ended = write_json(tmp_path / "ended.json", budget_config(budget))
    assert train.main([str(ended), "--out", str(tmp_path / "ended"), "--quiet"]) == 0
    assert f"(reached max_env_steps {budget})" in capsys.readouterr().out
    unspent = write_json(tmp_path / "unspent.json", budget_config(10**9, generations=2))
    assert train.main([str(unspent), "--out", str(tmp_path / "unspent"), "--quiet"]) == 0
    assert "max_env_steps" not in capsys.readouterr().out


def test_train_resume_with_a_larger_budget_trains_on_to_it(tmp_path: Path, capsys) -> None:
    """A run ended by its budget: resuming it says why it ended and which option continues it;
    ``--max-env-steps`` on the command line trains it on to the larger budget, as a run given
    that budget from the start (and a new run takes the option over the config's value)."""
    unlimited = straight_log(None)
    small, large = unlimited[1]["env_steps_total"], unlimited[5]["env_steps_total"]
    config = write_json(tmp_path / "c.json", budget_config(small))
    run_dir = tmp_path / "run"
    assert train.main([str(config), "--out", str(run_dir), "--quiet"]) == 0
    capsys.readouterr()
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0
    said = capsys.readouterr().out
    assert f"reached max_env_steps {small}" in said and "--max-env-steps N" in said
    resumed = ["--resume", str(run_dir), "--quiet", "--max-env-steps", str(large)]
    assert train.main(resumed) == 0
    straight = tmp_path / "straight"
    new = [str(config), "--out", str(straight), "--quiet", "--max-env-steps", str(large)]
    assert train.main(new) == 0
    assert len(read_log(run_dir / "log.csv")) == len(read_log(straight / "log.csv")) == 6
    assert json.loads((run_dir / "config.json").read_text())["max_env_steps"] == large
