"""The start point is ``center_init`` in every method; ``initial_centroid`` (its old name in the
CMA family and QD) is read as center_init with one warning line, and a run directory whose
config.json and checkpoints still say ``initial_centroid`` resumes and ends identical to a
straight run."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import QD_OPTIMIZERS, small_config, write_json

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.run.checkpoint import META_KEY
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.status import stored_config_hash
from neuro_evolution.support.atomic import load_npz, npz_bytes

CMA = {"type": "CMA_ES", "population_size": 6, "sigma": 0.4}


def old_named(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` as a release before the rename resolved it: center_init under its old name."""
    config = json.loads(json.dumps(config))
    optimizer = config["optimizer"]
    optimizer["initial_centroid"] = optimizer.pop("center_init")
    return config


def write_as_old_release(run_dir: Path) -> None:
    """Rewrite config.json, every checkpoint and the status file with the old name."""
    config = old_named(json.loads((run_dir / "config.json").read_text()))
    (run_dir / "config.json").write_text(json.dumps(config, indent=2))
    status = json.loads((run_dir / "training_status.json").read_text())
    for entry in status["checkpoints"]:
        path = run_dir / entry["file"]
        arrays = dict(load_npz(io.BytesIO(path.read_bytes())))
        meta = json.loads(str(arrays[META_KEY]))
        meta["config"] = old_named(meta["config"])
        meta["config_hash"] = stored_config_hash(meta["config"])
        arrays[META_KEY] = np.array(json.dumps(meta))
        data = npz_bytes(arrays)
        path.write_bytes(data)
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["bytes"] = len(data)
    status["config_hash"] = stored_config_hash(config)
    (run_dir / "training_status.json").write_text(json.dumps(status))


def logged(run_dir: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "wall_time"} for r in read_log(run_dir / "log.csv")]


@pytest.mark.parametrize(
    "optimizer",
    [{**CMA, "type": name} for name in ("CMA_ES", "SEP_CMA_ES", "MA_ES", "LM_MA_ES")]
    + list(QD_OPTIMIZERS.values()),
)
def test_initial_centroid_is_read_as_center_init_with_one_warning(
    optimizer: dict[str, Any],
) -> None:
    """Every type that called the start point initial_centroid now calls it center_init; the
    old name gives the same config and one warning naming both names."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = parse_config(small_config(optimizer={**optimizer, "initial_centroid": 0.25}))
    assert [str(w.message) for w in caught] == [
        "optimizer.initial_centroid is the old name of center_init; read as center_init "
        "(rename it in the config)"
    ]
    new = parse_config(small_config(optimizer={**optimizer, "center_init": 0.25}))
    assert old == new and new.optimizer.center_init == 0.25


def test_both_names_at_once_are_refused() -> None:
    with pytest.raises(ConfigError, match="optimizer.initial_centroid: is the old name of"):
        parse_config(small_config(optimizer={**CMA, "initial_centroid": 0.1, "center_init": 0.1}))


def test_the_old_name_in_a_config_file_trains_as_the_new_one(tmp_path: Path) -> None:
    """``train`` prints the warning as one stderr line; the run equals a center_init run."""
    old = write_json(tmp_path / "old.json", small_config(optimizer={**CMA, "initial_centroid": 1}))
    done = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", str(old), "--out", str(tmp_path / "old")]
        + ["--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "neuro_evolution.train: warning: optimizer.initial_centroid is the old name of "
        "center_init; read as center_init (rename it in the config)"
    ]
    new = write_json(tmp_path / "new.json", small_config(optimizer={**CMA, "center_init": 1}))
    assert train.main([str(new), "--out", str(tmp_path / "new"), "--quiet"]) == 0
    assert logged(tmp_path / "old") == logged(tmp_path / "new")
    assert (
        json.loads((tmp_path / "old" / "config.json").read_text())["optimizer"]["center_init"] == 1
    )


def test_a_run_directory_with_initial_centroid_resumes_identical(tmp_path: Path) -> None:
    """Stopped after 2 of 5 generations and rewritten with the old name (config.json, the
    checkpoints' stored config, the status hash): ``train --resume`` ends as a straight run."""
    data = small_config(
        number_generations=5,
        optimizer={**CMA, "center_init": 0.5},
        checkpoint={"every_generations": 1},
    )
    straight = tmp_path / "straight"
    Experiment(parse_config(data), run_dir=straight).run()
    old = tmp_path / "old"
    experiment = Experiment(parse_config(data), run_dir=old)
    for _ in range(2):
        experiment.step()
    experiment.close()
    write_as_old_release(old)
    assert "initial_centroid" in (old / "config.json").read_text()
    assert train.main(["--resume", str(old), "--quiet"]) == 0
    assert logged(old) == logged(straight)
