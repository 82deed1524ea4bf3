"""Numerics shared by the brain types: activation functions and the active rows of batch brains.

Activations are numpy ufuncs applied with ``out=`` so a step allocates nothing; the choice is
made once when a brain is built, never per step. :class:`RowSelection` implements the ``active``
argument of ``BatchBrain.step`` for every batch brain the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

# name -> (ufunc, extra arguments): ``ufunc(x, *extra, out=y)`` computes the activation of x.
ACTIVATIONS: Mapping[str, tuple[np.ufunc, tuple[float, ...]]] = {
    "tanh": (np.tanh, ()),
    "relu": (np.maximum, (0.0,)),
}


def as_is(observation: Any) -> Any:
    """The input of a Box observation: copied into a brain's input buffer as it is (cast there)."""
    return observation


def sigmoid_(x: np.ndarray) -> None:
    """Logistic sigmoid of ``x`` in place, as 0.5 * tanh(x / 2) + 0.5 (never overflows)."""
    np.multiply(x, 0.5, out=x)
    np.tanh(x, out=x)
    np.multiply(x, 0.5, out=x)
    np.add(x, 0.5, out=x)


class Selection:
    """One step's rows: which are computed (``rows``, None = all) and which are stored back."""

    __slots__ = ("rows", "params", "write", "targets")

    def __init__(
        self,
        rows: np.ndarray | None,
        params: Mapping[str, np.ndarray],
        write: np.ndarray | None,
        targets: np.ndarray | None,
    ) -> None:
        self.rows: np.ndarray | None = rows
        self.params: Mapping[str, np.ndarray] = params
        self.write: np.ndarray | None = write  # bool over the computed rows; None = all of them
        self.targets: np.ndarray | None = targets  # absolute ids of the stored rows (with write)

    def gather(self, full: np.ndarray) -> np.ndarray:
        """The computed rows of a full (P, ...) array (the array itself when all are computed)."""
        return full if self.rows is None else full[self.rows]

    def store(self, full: np.ndarray, values: np.ndarray) -> None:
        """Write the active rows of ``values`` (one row per computed row) into ``full``."""
        if self.write is not None:
            full[self.targets] = values[self.write]
        elif self.rows is not None:
            full[self.rows] = values
        elif values is not full:
            full[...] = values

    def active_pairs(self, count: int) -> list[tuple[int, int]]:
        """(position among the computed rows, brain index) of every active row."""
        ids = np.arange(count) if self.rows is None else self.rows
        if self.write is None:
            return list(enumerate(ids.tolist()))
        positions = np.flatnonzero(self.write)
        return list(zip(positions.tolist(), ids[positions].tolist()))


class RowSelection:
    """The ``active`` bookkeeping of a batch brain over P rows.

    Inactive rows are not advanced: their state and noise generator stay as they were, so a row
    that becomes active again continues exactly like a single brain that skipped those steps.
    When fewer than half of the currently computed rows are active, the per-brain parameter
    arrays are compacted to the active rows; the computed set at least halves each time, so the
    copying stays below one full copy of the parameters per episode.
    """

    def __init__(self, params: Mapping[str, np.ndarray], count: int):
        self.full = dict(params)
        self.count = count
        self.reset()

    @property
    def computed(self) -> int:
        """How many rows a step computes while some are inactive (after compaction)."""
        return self.count if self._rows is None else self._rows.size

    def reset(self) -> None:
        """Compute every row again (at the start of an episode)."""
        self._rows: np.ndarray | None = None
        self._member = np.ones(self.count, dtype=bool)
        self._params = self.full

    def select(self, active: np.ndarray | None) -> Selection:
        """The rows one step computes and stores for an ``active`` mask (None: every row)."""
        if active is None:
            return Selection(None, self.full, None, None)
        active = np.asarray(active, dtype=bool)
        if active.shape != (self.count,):
            raise ValueError(
                f"active has shape {active.shape}, but this batch brain has {self.count} rows"
            )
        number_active = int(np.count_nonzero(active))
        if number_active == self.count:
            return Selection(None, self.full, None, None)
        outside = bool(np.any(active & ~self._member))
        if outside or 2 * number_active < self.computed:
            self._rows = np.flatnonzero(active)
            self._member = active.copy()
            self._params = {name: array[self._rows] for name, array in self.full.items()}
            return Selection(self._rows, self._params, None, None)
        if self._rows is None:
            return Selection(None, self.full, active, np.flatnonzero(active))
        write = active[self._rows]
        return Selection(self._rows, self._params, write, self._rows[write])
