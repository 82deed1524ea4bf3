"""What an observer is: an after-generation hook that mirrors the row just logged, and an
on-close hook that finishes up; it only reads the run it observes.

An observer class is registered by name with its config class
(:func:`~neuro_evolution.observers.registry.register_observer`) and made with
``(section, run_dir, experiment)``: its options from the ``observers`` section, the run
directory, and the run (an :class:`~neuro_evolution.run.experiment.Experiment`, read through
:class:`ObservedRun`). The row's step is its ``generation`` (0-based).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from neuro_evolution.support.frozen import FrozenABCMeta

if TYPE_CHECKING:
    from neuro_evolution.run.directory import LogRow

# log columns that are not metrics (the step itself)
NOT_METRICS = frozenset({"generation"})


class ObservedRun(Protocol):
    """What an observer reads of a run, and the hooks it is installed on."""

    config: Any  # the ExperimentConfig
    generation: int  # generations done so far (where a resumed run continues)
    log: list[LogRow]  # one row per generation, the newest last
    after_generation: list[Callable[[Any], None]]
    on_close: list[Callable[[Any], None]]

    @property
    def done(self) -> bool:
        """Whether the run ended by itself (not stopped)."""


class Observer(metaclass=FrozenABCMeta):
    """Mirrors a run's log rows somewhere; it never changes the run.

    Made as ``cls(section, run_dir, experiment)`` when the run gets its run directory (a new run, a
    resumed one, a sweep's run).
    """

    @abstractmethod
    def __init__(self, section: Any, run_dir: Path, experiment: ObservedRun) -> None:
        """Set up from the observer's options, the run directory and the run it observes."""

    @abstractmethod
    def __call__(self, experiment: ObservedRun) -> None:
        """Mirror the row the run has just logged (``experiment.log[-1]``)."""

    def close(self, experiment: ObservedRun) -> None:
        """Finish up when the run ends or stops."""


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
