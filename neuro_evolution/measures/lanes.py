"""Per-episode measures of lockstep lanes: :class:`~neuro_evolution.measures.base.MeasureRecorder`'s
rules on (lanes,) arrays, to the bit.

Observation, action and (scalar) reward measures are kept per lane (last value, running sum in
step order, count, min, max, the value at the first event); a lane records only the steps it took
(its mask). An ``info`` or ``function`` measure needs each lane's info dicts or whole trajectory,
and a reward element beyond 0 a vector reward: such runs fall back to the per-individual loop
(:func:`lockstep_measures_reason`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neuro_evolution.measures.base import MeasureConfig


def lockstep_measures_reason(measures: Sequence[MeasureConfig]) -> str:
    """Why lockstep cannot compute ``measures`` ("" when it can)."""
    kinds = sorted({m.source for m in measures if m.source in ("info", "function")})
    if kinds:
        return f"lockstep evaluation does not compute {' or '.join(kinds)} measures"
    if any(m.source == "reward" and m.index > 0 for m in measures):
        return "lockstep evaluation computes scalar reward measures only (index 0)"
    return ""


class LaneMeasures:
    """The measures of one wave of lanes, updated after every lockstep step."""

    def __init__(self, measures: Sequence[MeasureConfig], lanes: int):
        self.measures = tuple(measures)
        width = len(self.measures)
        self.count = np.zeros(lanes, dtype=np.int64)
        self.last = np.full((lanes, width), np.nan)
        self.total = np.zeros((lanes, width))
        self.low = np.full((lanes, width), np.inf)
        self.high = np.full((lanes, width), -np.inf)
        self.at_event = np.full((lanes, width), np.nan)
        self.seen_event = np.zeros((lanes, width), dtype=bool)

    def step(
        self,
        actions: np.ndarray,
        observations: np.ndarray,
        rewards: np.ndarray,
        stepped: np.ndarray,
    ) -> None:
        """One lockstep step: the lanes of ``stepped`` took ``actions`` and got ``observations``
        and ``rewards``."""
        lanes = len(stepped)
        sources = {
            "observation": np.asarray(observations, dtype=np.float64).reshape(lanes, -1),
            "action": np.asarray(actions, dtype=np.float64).reshape(lanes, -1),
            "reward": np.asarray(rewards, dtype=np.float64).reshape(lanes, -1),
        }
        flat_observations = sources["observation"]
        rows = np.flatnonzero(stepped)
        self.count[rows] += 1
        for column, measure in enumerate(self.measures):
            values = sources[measure.source][rows, measure.index]
            self.last[rows, column] = values
            self.total[rows, column] += values
            np.minimum.at(self.low[:, column], rows, values)
            np.maximum.at(self.high[:, column], rows, values)
            if measure.reduce == "first_event":
                event = (flat_observations[rows][:, list(measure.event)] != 0).any(axis=1)
                first = event & ~self.seen_event[rows, column]
                self.at_event[rows[first], column] = values[first]
                self.seen_event[rows[first], column] = True

    def values(self) -> np.ndarray:
        """(lanes, measures): each lane's episode values, as MeasureRecorder.end_episode."""
        result = np.empty_like(self.last)
        empty = self.count == 0
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self.total / self.count[:, None]
        for column, measure in enumerate(self.measures):
            kind = measure.reduce if measure.reduce != "first_event" else measure.fallback
            plain = {
                "last": self.last[:, column],
                "mean": mean[:, column],
                "min": self.low[:, column],
                "max": self.high[:, column],
                "sum": self.total[:, column],
            }[kind]
            if measure.reduce == "first_event":
                plain = np.where(self.seen_event[:, column], self.at_event[:, column], plain)
            result[:, column] = np.where(empty, np.nan, plain)
        return result


def individual_measures(lane_values: np.ndarray, count: int) -> np.ndarray:
    """(count, measures): individual i's mean over its lanes k * count + i, summed in episode
    order (as MeasureRecorder.vector)."""
    runs = len(lane_values) // count
    total = np.zeros((count, lane_values.shape[1]))
    for k in range(runs):
        total = total + lane_values[k * count : (k + 1) * count]
    return total / runs
