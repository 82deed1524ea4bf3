"""Observers: mirror each generation's log row (and validation) into experiment trackers.

:func:`install_observers` is called when an experiment gets its run directory (a new run, a
resumed one, a sweep's run): every observer whose field of the ``observers`` section is set is
made (:mod:`.registry` names them, :mod:`.base` says what one is) and added to the run's hooks.
A resumed run continues the same TensorBoard folder and MLflow run: generations it redoes after
its checkpoint are not logged again.
"""

from __future__ import annotations

from pathlib import Path

from neuro_evolution.observers.base import ObservedRun, Observer
from neuro_evolution.observers.options import ObserversConfig
from neuro_evolution.observers.registry import OBSERVERS


def install_observers(experiment: ObservedRun, run_dir: Path) -> None:
    """Add the observers that ``experiment.config.observers`` turns on to the run's hooks."""
    section: ObserversConfig = experiment.config.observers
    observers: list[Observer] = []
    for name in OBSERVERS.names():
        options = getattr(section, name, None)
        if options is not None:
            _, observer_cls = OBSERVERS.get(name)
            observers.append(observer_cls(options, run_dir, experiment))
    for observer in observers:
        experiment.after_generation.append(observer)
        experiment.on_close.append(observer.close)
