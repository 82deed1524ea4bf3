"""MLflow: one run per experiment, params from the resolved config, a metric per log column per
generation, the run directory's files as artifacts (extra ``mlflow``).

The MLflow run id is kept in ``RUN_DIR/mlflow.json``, so a resumed run (``train --resume``, a
sweep run again) continues the same MLflow run; generations at or below the last step MLflow
already holds (redone after the checkpoint) are not logged again. Without a tracking URI, runs
go to a local file store ``mlruns`` in the working directory (MLflow keeps that backend in
maintenance mode and asks for an opt-in, given here only for a store we choose).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from neuro_evolution.core.schema import flatten, to_dict
from neuro_evolution.observers.base import ObservedRun, Observer, row_metrics
from neuro_evolution.observers.options import MlflowConfig
from neuro_evolution.observers.registry import register_observer
from neuro_evolution.support.atomic import atomic_write_json

STATE_FILE = "mlflow.json"
SKIPPED = ("checkpoints",)  # large and internal: not uploaded
BATCH = 100  # MLflow's limit of params per log_batch call


def default_tracking_uri() -> str:
    """The local file store ``./mlruns`` (opted in, see the module docstring)."""
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return (Path.cwd() / "mlruns").as_uri()


@register_observer("mlflow", config=MlflowConfig)
class MlflowObserver(Observer):
    """Logs a run's params once, its rows per generation, and its files at the end."""

    def __init__(self, section: MlflowConfig, run_dir: Path, experiment: ObservedRun) -> None:
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        self.section = section
        self.run_dir = Path(run_dir)
        state_path = self.run_dir / STATE_FILE
        state = json.loads(state_path.read_text()) if state_path.is_file() else {}
        uri = section.tracking_uri or state.get("tracking_uri") or default_tracking_uri()
        self.client = MlflowClient(tracking_uri=uri)
        self.run_id: str = state.get("run_id", "")
        self.last_step = -1
        if self.run_id:
            self.client.update_run(self.run_id, status="RUNNING")
            history = self.client.get_metric_history(self.run_id, "fitness_mean")
            self.last_step = max((metric.step for metric in history), default=-1)
            return
        found = self.client.get_experiment_by_name(section.experiment)
        experiment_id = (
            found.experiment_id if found else self.client.create_experiment(section.experiment)
        )
        name = f"{self.run_dir.parent.name}/{self.run_dir.name}"
        self.run_id = self.client.create_run(experiment_id, run_name=name).info.run_id
        atomic_write_json(state_path, {"tracking_uri": uri, "run_id": self.run_id})
        params = [
            Param(key, json.dumps(value) if not isinstance(value, str) else value)
            for key, value in flatten(to_dict(experiment.config)).items()
        ]
        for first in range(0, len(params), BATCH):
            self.client.log_batch(self.run_id, params=params[first : first + BATCH])

    def __call__(self, experiment: ObservedRun) -> None:
        from mlflow.entities import Metric

        row = experiment.log[-1].to_dict()
        step = row["generation"]
        if step <= self.last_step:
            return  # logged by an earlier session, which went past its last checkpoint
        stamp = int(time.time() * 1000)
        metrics = [Metric(key, value, stamp, step) for key, value in row_metrics(row).items()]
        self.client.log_batch(self.run_id, metrics=metrics)
        self.last_step = step

    def close(self, experiment: ObservedRun) -> None:
        """Upload the run directory's files; mark the run FINISHED (or KILLED when stopped)."""
        if self.section.artifacts:
            for path in sorted(self.run_dir.iterdir()):
                if path.name in SKIPPED or path.name.startswith("."):
                    continue
                if path.is_dir():
                    self.client.log_artifacts(self.run_id, str(path), artifact_path=path.name)
                else:
                    self.client.log_artifact(self.run_id, str(path))
        self.client.set_terminated(self.run_id, "FINISHED" if experiment.done else "KILLED")
