"""Observation statistics as a recorder: count, sum and sum of squares of the raw observations an
evaluation's training episodes showed the brain (what running observation normalization merges,
:mod:`neuro_evolution.core.normalization`), ``[count, total..., squares...]`` per evaluation.

Every loop adds each observation, in step order, before the brain answers it: the scalar loop
one :class:`~neuro_evolution.core.normalization.ObservationRecorder` per episode, the lockstep
loop per lane (:func:`~neuro_evolution.core.normalization.record_batch`, the same additions),
the JAX program per lane in its dtype; an individual's value is the sum of its episodes' in
episode order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from neuro_evolution.core.normalization import ObservationRecorder, record_batch
from neuro_evolution.measures.recorder import (
    EpisodeRecording,
    EpisodeShapes,
    JaxRecording,
    LaneRecording,
    Recorder,
)


class _EpisodeStats(EpisodeRecording):
    def __init__(self, size: int):
        self.size = size
        self.episode = ObservationRecorder(size)
        self.totals: np.ndarray | None = None

    def start_episode(self) -> None:
        self.episode = ObservationRecorder(self.size)

    def act(self, observation: Any, action: Any, brain: Any) -> None:
        self.episode.add(observation)

    def end_episode(self, info: Any, terminated: bool, truncated: bool) -> None:
        episode = self.episode.as_array()  # episode totals in episode order, as lockstep adds
        self.totals = episode if self.totals is None else self.totals + episode

    def value(self) -> np.ndarray | None:
        return self.totals


class _LaneStats(LaneRecording):
    def __init__(self, count: int, size: int):
        self.stats = np.zeros((count, 1 + 2 * size))

    def act(self, observations: np.ndarray, actions: np.ndarray, stepping: np.ndarray) -> None:
        record_batch(self.stats, observations, stepping)

    def values(self, steps: np.ndarray) -> np.ndarray:
        return self.stats


@dataclasses.dataclass(frozen=True)
class ObservationStats(Recorder):
    """Observation statistics of training episodes (on when observations are normalized)."""

    name = "observation_stats"
    path = "observation_normalization"

    def scalar(self, env: Any, shapes: EpisodeShapes) -> EpisodeRecording:
        return _EpisodeStats(shapes.observation_size)

    def lanes(self, count: int, shapes: EpisodeShapes) -> LaneRecording:
        return _LaneStats(count, shapes.observation_size)

    def join(self, episodes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        total = np.zeros(episodes.shape[1:])
        for episode in episodes:
            total += episode
        return total

    def jax_form(self, shapes: EpisodeShapes) -> JaxRecording:
        from neuro_evolution.measures.jax_forms import JaxObservationStats

        return JaxObservationStats(shapes.observation_size)
