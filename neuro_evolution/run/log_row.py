"""One generation's row of ``log.csv`` (:class:`LogRow`) and the columns every run logs
(:data:`LOG_FIELDS`): what the run directory writes and the fitness plot reads."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class LogRow:
    """One generation's row of ``log.csv``: the columns, in order, and their types.

    The validation columns are None (empty in the CSV) in generations without a validation;
    ``env_steps_total`` counts training steps only; ``wall_time`` includes validation time.
    """

    generation: int
    evaluations: int
    env_steps: int
    env_steps_total: int
    fitness_min: float
    fitness_mean: float
    fitness_max: float
    fitness_std: float
    best_so_far: float
    validation_mean: float | None
    validation_std: float | None
    validation_min: float | None
    validation_steps: int | None
    wall_time: float
    # the optimizer's own columns after wall_time (a measured optimizer's log_metrics, e.g. QD
    # coverage, qd_score, qd_best); () for every other optimizer, whose rows are unchanged
    metrics: tuple[tuple[str, float], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Column -> value, as ``log.csv``, checkpoints and observers take a row (the values are
        plain numbers and None, so no deep copy: 15x faster than ``dataclasses.asdict``)."""
        row = {name: getattr(self, name) for name in LOG_FIELDS}
        row.update(self.metrics)
        return row

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> LogRow:
        """The row of :meth:`to_dict`'s form (e.g. a checkpoint's log)."""
        metrics = tuple((key, value) for key, value in row.items() if key not in LOG_FIELDS)
        return cls(**{name: row[name] for name in LOG_FIELDS}, metrics=metrics)


LOG_FIELDS = tuple(field.name for field in dataclasses.fields(LogRow) if field.name != "metrics")
