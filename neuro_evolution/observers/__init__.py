"""Observers: mirror each generation's log row (and validation) into experiment trackers.

:func:`install_observers` is called when an experiment gets its run directory (a new run, a
resumed one, a sweep's run): every entry of the ``observers`` list (:mod:`.options`) makes the
observer its ``type`` names (:mod:`.registry` names them, :mod:`.base` says what one is), which
is added to the run's hooks.
A resumed run continues the same TensorBoard folder and MLflow run: generations it redoes after
its checkpoint are not logged again.
"""

from __future__ import annotations

from pathlib import Path

from neuro_evolution.observers.base import ObservedRun, Observer
from neuro_evolution.observers.options import ObserverList
from neuro_evolution.observers.registry import OBSERVERS


def install_observers(experiment: ObservedRun, run_dir: Path) -> None:
    """Add the observers that ``experiment.config.observers`` lists to the run's hooks, in the
    list's order."""
    section: ObserverList = experiment.config.observers
    observers: list[Observer] = []
    for options in section:
        _, observer_cls = OBSERVERS.get(options.type_name())
        observers.append(observer_cls(options, run_dir, experiment))
    for observer in observers:
        experiment.after_generation.append(observer)
        experiment.on_close.append(observer.close)
