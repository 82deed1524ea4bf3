"""A library run (``Experiment(config, run_dir=...)``) writes what ``train`` writes, resumes
exactly as ``train --resume``, and never overwrites an earlier run unless asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import assert_identical, small_config

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.lock import LOCK_FILE
from neuro_evolution.run.resume import resume_experiment
from neuro_evolution.support.errors import UserError


def config(generations: int = 6):  # type: ignore[no-untyped-def]
    return parse_config(small_config(number_generations=generations))


def test_a_library_run_stopped_after_k_generations_resumes_with_train_like_a_straight_one(
    tmp_path: Path,
) -> None:
    """Three ``step()`` calls of a library run, then ``train --resume`` on its folder, equal an
    uninterrupted library run: the folder holds checkpoints and training_status.json."""
    stopped = Experiment(config(), run_dir=tmp_path / "stopped")
    for _ in range(3):
        stopped.step()
    stopped.close()
    assert (tmp_path / "stopped" / "training_status.json").is_file()
    assert (tmp_path / "stopped" / "checkpoints" / "gen-000003.npz").is_file()
    assert not (tmp_path / "stopped" / LOCK_FILE).exists()  # released by close()
    assert train.main(["--resume", str(tmp_path / "stopped"), "--quiet"]) == 0
    Experiment(config(), run_dir=tmp_path / "straight").run()
    assert_identical(tmp_path / "stopped", tmp_path / "straight")


def test_resume_experiment_continues_a_library_run_exactly(tmp_path: Path) -> None:
    """``resume_experiment(run_dir).run()`` after two generations equals a straight run."""
    stopped = Experiment(config(), run_dir=tmp_path / "stopped")
    stopped.step()
    stopped.step()
    stopped.close()
    resumed = resume_experiment(tmp_path / "stopped")
    assert resumed.generation == 2
    resumed.run()
    Experiment(config(), run_dir=tmp_path / "straight").run()
    assert_identical(tmp_path / "stopped", tmp_path / "straight")


def test_a_second_library_run_into_the_same_folder_is_refused_unless_overwrite(
    tmp_path: Path,
) -> None:
    """A new Experiment into a folder that holds a run is refused in one line naming the
    folder and both ways out, leaving the run untouched; ``overwrite=True`` replaces it."""
    run_dir = tmp_path / "run"
    Experiment(config(2), run_dir=run_dir).run()
    log = (run_dir / "log.csv").read_text()
    with pytest.raises(UserError) as refused:
        Experiment(config(3), run_dir=run_dir)
    message = str(refused.value)
    assert "\n" not in message and str(run_dir) in message
    assert "overwrite=True" in message and "--resume" in message
    assert (run_dir / "log.csv").read_text() == log
    assert not (run_dir / LOCK_FILE).exists()
    Experiment(config(3), run_dir=run_dir, overwrite=True).run()
    assert json.loads((run_dir / "config.json").read_text())["number_generations"] == 3
    assert len((run_dir / "log.csv").read_text().splitlines()) == 1 + 3
    status = json.loads((run_dir / "training_status.json").read_text())
    assert [entry["generation"] for entry in status["checkpoints"]] == [3]


def test_installing_checkpoints_again_replaces_the_one_attach_installed(tmp_path: Path) -> None:
    """Code that calls install_checkpoints after Experiment(run_dir=...) gets one
    Checkpointer, not two writing every checkpoint twice."""
    from neuro_evolution.run.checkpoint import Checkpointer, install_checkpoints

    experiment = Experiment(config(2), run_dir=tmp_path / "run")
    installed = install_checkpoints(experiment)
    checkpointers = [h for h in experiment.after_generation if isinstance(h, Checkpointer)]
    assert checkpointers == [installed]
    experiment.run()
