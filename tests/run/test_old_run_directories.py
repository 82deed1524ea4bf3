"""A run directory written by an earlier release resumes: a config field added since takes its
default, in the comparison of ``config.json`` with the checkpoint and in the status file's config
hash, and the resumed run trains what a straight run trains."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import small_config

from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.checkpoint import META_KEY
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.resume import resume_experiment
from neuro_evolution.run.status import stored_config_hash
from neuro_evolution.support.atomic import load_npz, npz_bytes
from neuro_evolution.support.errors import ResumeError

LATER_FIELDS = (("episode_runner", "training_reward_shift"),)  # fields an old release lacks


def without_later_fields(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` as the earlier release resolved it."""
    config = json.loads(json.dumps(config))
    for section, key in LATER_FIELDS:
        del config[section][key]
    return config


def write_as_earlier_release(run_dir: Path) -> None:
    """Rewrite config.json, every checkpoint and the status file as a release without
    LATER_FIELDS would have written them."""
    config = without_later_fields(json.loads((run_dir / "config.json").read_text()))
    (run_dir / "config.json").write_text(json.dumps(config, indent=2))
    status = json.loads((run_dir / "training_status.json").read_text())
    for entry in status["checkpoints"]:
        path = run_dir / entry["file"]
        arrays = dict(load_npz(io.BytesIO(path.read_bytes())))
        meta = json.loads(str(arrays[META_KEY]))
        meta["config"] = without_later_fields(meta["config"])
        meta["config_hash"] = stored_config_hash(meta["config"])
        arrays[META_KEY] = np.array(json.dumps(meta))
        data = npz_bytes(arrays)
        path.write_bytes(data)
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["bytes"] = len(data)
    status["config_hash"] = stored_config_hash(config)
    (run_dir / "training_status.json").write_text(json.dumps(status))


def training_log(run_dir: Path) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in row.items() if k != "wall_time"} for row in read_log(run_dir / "log.csv")
    ]


def stopped_run(run_dir: Path, generations: int, stop_after: int) -> None:
    data = small_config(number_generations=generations, checkpoint={"every_generations": 1})
    experiment = Experiment(parse_config(data), run_dir=run_dir)
    for _ in range(stop_after):
        experiment.step()
    experiment.close()


def test_a_run_directory_of_an_earlier_release_resumes_and_ends_identical(tmp_path: Path) -> None:
    """Stopped after 2 of 5 generations, rewritten as an earlier release would have written it,
    resumed twice: the log equals a straight run's."""
    straight = tmp_path / "straight"
    Experiment(parse_config(small_config(number_generations=5)), run_dir=straight).run()
    old = tmp_path / "old"
    stopped_run(old, 5, 2)
    write_as_earlier_release(old)
    resumed = resume_experiment(old)
    resumed.step()
    resumed.close()
    resume_experiment(old).run()  # config.json and the status now carry the new field
    assert training_log(old) == training_log(straight)


def test_an_edited_status_hash_is_still_refused(tmp_path: Path) -> None:
    """Accepting the hash a checkpoint was written with does not accept any hash."""
    run_dir = tmp_path / "run"
    stopped_run(run_dir, 4, 2)
    status = json.loads((run_dir / "training_status.json").read_text())
    status["config_hash"] = "0" * 64
    (run_dir / "training_status.json").write_text(json.dumps(status))
    with pytest.raises(ResumeError, match="config_hash does not match"):
        resume_experiment(run_dir)
