"""Observers: mirror each generation's log row (and validation) into experiment trackers.

:func:`install_observers` is called when an experiment gets its run directory (a new run, a
resumed one, a sweep's run); each observer is an after-generation hook that reads the row just
logged, and an on-close hook that finishes up. The row's step is its ``generation`` (0-based).
A resumed run continues the same TensorBoard folder and MLflow run: generations it redoes after
its checkpoint are not logged twice.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuro_evolution.observers.options import ObserversConfig

if TYPE_CHECKING:
    from neuro_evolution.run.experiment import Experiment

# log columns that are not metrics (the step itself)
NOT_METRICS = frozenset({"generation"})


def row_metrics(row: dict[str, Any]) -> dict[str, float]:
    """The numeric columns of a log row that hold a value (validation only when it ran)."""
    return {
        key: float(value)
        for key, value in row.items()
        if key not in NOT_METRICS
        and isinstance(value, int | float)
        and not isinstance(value, bool)
        and not math.isnan(value)
    }


def install_observers(experiment: Experiment, run_dir: Path) -> None:
    """Add the observers of ``experiment.config.observers`` to its hooks."""
    section: ObserversConfig = experiment.config.observers
    observers: list[Any] = []
    if section.tensorboard is not None:
        from neuro_evolution.observers.tensorboard import TensorBoardObserver

        observers.append(TensorBoardObserver(section.tensorboard, run_dir, experiment.generation))
    if section.mlflow is not None:
        from neuro_evolution.observers.mlflow import MlflowObserver

        observers.append(MlflowObserver(section.mlflow, run_dir, experiment))
    for observer in observers:
        experiment.after_generation.append(observer)
        experiment.on_close.append(observer.close)
