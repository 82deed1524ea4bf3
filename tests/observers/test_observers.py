"""Observers: TensorBoard event files and an MLflow file store, read back with each package's
own reader, hold every log row once, also after a SIGKILL and a resume; they change no result;
a missing package is a one-line error at start-up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fault_injection import command
from helpers import require, small_config

from neuro_evolution import train
from neuro_evolution.observers import options
from neuro_evolution.run.directory import read_log

require("tensorboard")
require("mlflow")

from mlflow.tracking import MlflowClient  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)

GENERATIONS = 5


def observed_config(tmp_path: Path, observers: list[dict[str, Any]] | None, name: str) -> Path:
    data = small_config(
        number_generations=GENERATIONS,
        optimizer={"type": "CMA_ES", "population_size": 6, "sigma": 0.5},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 60},
        validation={"every_generations": 2, "episodes": 2},
        checkpoint={"every_generations": 2},
    )
    if observers is not None:
        data["observers"] = observers
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def tensorboard_scalars(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """tag -> [(step, value)] as TensorBoard's reader sees them (restarts purged)."""
    reader = EventAccumulator(str(folder))
    reader.Reload()
    return {
        tag: [(event.step, event.value) for event in reader.Scalars(tag)]
        for tag in reader.Tags()["scalars"]
    }


def expected_scalars(log: list[dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """What every row of the log should have put in: float32 values, validation when it ran."""
    expected: dict[str, list[tuple[int, float]]] = {}
    for row in log:
        for key, value in row.items():
            if key != "generation" and value is not None:
                expected.setdefault(key, []).append((row["generation"], float(np.float32(value))))
    return expected


def without_wall_time(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "wall_time"} for row in log]


def test_tensorboard_events_hold_every_row_and_change_no_result(tmp_path):
    """Every column of every generation is a scalar at step = generation (validation only where
    it ran), and the run's files equal those of the same run without observers."""
    observed = tmp_path / "observed"
    config = observed_config(tmp_path, [{"type": "tensorboard"}], "tb")
    assert train.main([str(config), "--out", str(observed), "--quiet"]) == 0
    plain = tmp_path / "plain"
    assert train.main([str(observed_config(tmp_path, None, "plain")), "--out", str(plain)]) == 0

    log = read_log(observed / "log.csv")
    assert len(log) == GENERATIONS
    scalars = tensorboard_scalars(observed / "tensorboard")
    wall = scalars.pop("wall_time")
    expected = expected_scalars(log)
    expected.pop("wall_time")
    assert scalars == expected
    assert [step for step, _ in wall] == list(range(GENERATIONS))
    assert without_wall_time(log) == without_wall_time(read_log(plain / "log.csv"))


@pytest.mark.slow
def test_killed_and_resumed_run_continues_its_tensorboard_and_mlflow_run_without_duplicates(
    tmp_path, monkeypatch
):
    """SIGKILL after generation 3 (checkpoint at 2), then ``train --resume``: generation 3 runs
    twice, yet TensorBoard and MLflow hold each step once, in the one MLflow run the run
    directory names, with params from the resolved config and the files as artifacts."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    observers = [{"type": "tensorboard"}, {"type": "mlflow", "experiment": "e"}]
    config = observed_config(tmp_path, observers, "both")
    run_dir = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        command([str(config), "--out", str(run_dir), "--quiet"], pause_after=3),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            state = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "T":
                break
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert json.loads((run_dir / "training_status.json").read_text())["generation"] == 2
    logged = MlflowClient(tracking_uri=(tmp_path / "mlruns").as_uri())
    steps = [
        m.step
        for m in logged.get_metric_history(
            json.loads((run_dir / "mlflow.json").read_text())["run_id"], "fitness_mean"
        )
    ]
    assert sorted(steps) == [0, 1, 2], "the killed session logged past its checkpoint"
    monkeypatch.chdir(tmp_path)  # the default store ./mlruns is where train ran
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0

    log = read_log(run_dir / "log.csv")
    assert len(log) == GENERATIONS
    scalars = tensorboard_scalars(run_dir / "tensorboard")
    scalars.pop("wall_time")
    expected = expected_scalars(log)
    expected.pop("wall_time")
    assert scalars == expected

    stored = json.loads((run_dir / "mlflow.json").read_text())
    client = MlflowClient(tracking_uri=(tmp_path / "mlruns").as_uri())
    experiment = client.get_experiment_by_name("e")
    runs = client.search_runs([experiment.experiment_id])
    assert [run.info.run_id for run in runs] == [stored["run_id"]]
    run = runs[0]
    assert run.info.status == "FINISHED"
    assert run.data.params["optimizer.type"] == "CMA_ES"
    assert run.data.params["random_seed"] == "7"
    for key in ("fitness_mean", "best_so_far", "validation_mean", "env_steps_total"):
        history = sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, key))
        want = [(r["generation"], float(r[key])) for r in log if r[key] is not None]
        assert history == want, key
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"log.csv", "config.json", "hall_of_fame.npz", "fitness.png"} <= artifacts
    assert "checkpoints" not in artifacts


@pytest.mark.parametrize("extra", ["tensorboard", "mlflow"])
def test_a_missing_observer_package_is_a_one_line_error_at_start_up(
    tmp_path, capsys, monkeypatch, extra
):
    real = options.importlib.util.find_spec
    monkeypatch.setattr(
        options.importlib.util, "find_spec", lambda name: None if name == extra else real(name)
    )
    out = tmp_path / "run"
    config = observed_config(tmp_path, [{"type": extra}], extra)
    assert train.main([str(config), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"observers[0]: {extra} needs the {extra} package" in err
    assert f'pip install -e ".[{extra}]"' in err and "Traceback" not in err
    assert not out.exists()


def test_a_resumed_session_names_its_event_file_after_the_earlier_sessions(tmp_path):
    """Readers take event files in name order (second, host, pid): a new session's file must not
    share the second of an earlier one, whose pid may sort after it."""
    from neuro_evolution.observers.tensorboard import wait_for_a_later_second

    now = int(time.time())
    (tmp_path / f"events.out.tfevents.{now}.host.99873.0").write_bytes(b"")
    wait_for_a_later_second(tmp_path)
    assert int(time.time()) > now
