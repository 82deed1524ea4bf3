"""The per-episode measures (:mod:`neuro_evolution.measures.base`) as one recorder.

The scalar loop computes every measure (:class:`~neuro_evolution.measures.base.MeasureRecorder`),
the lockstep loop observation, action and scalar reward measures per lane
(:class:`~neuro_evolution.measures.lanes.LaneMeasures`); info and function measures need each
lane's info dicts or whole trajectory, so they refuse the lockstep form, and the measures have
no JAX form. An individual's value is each measure's mean over its episodes, in episode order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from neuro_evolution.core.schema import ConfigError
from neuro_evolution.measures.base import MeasureConfig, MeasureRecorder
from neuro_evolution.measures.lanes import (
    LaneMeasures,
    individual_measures,
    lockstep_measures_reason,
)
from neuro_evolution.measures.recorder import (
    EpisodeRecording,
    EpisodeShapes,
    JaxRecording,
    LaneRecording,
    Recorder,
)


class _EpisodeMeasures(EpisodeRecording):
    def __init__(self, measures: tuple[MeasureConfig, ...]):
        self.recorder = MeasureRecorder(measures)

    def start_episode(self) -> None:
        self.recorder.start_episode()

    def step(self, action: Any, observation: Any, reward: Any, info: Mapping[str, Any]) -> None:
        self.recorder.step(action, observation, reward, info)

    def end_episode(self, info: Mapping[str, Any], terminated: bool, truncated: bool) -> None:
        self.recorder.end_episode(info, terminated, truncated)

    def value(self) -> np.ndarray:
        return self.recorder.vector()


class _LaneMeasures(LaneRecording):
    def __init__(self, measures: tuple[MeasureConfig, ...], count: int):
        self.lanes = LaneMeasures(measures, count)

    def step(
        self,
        actions: np.ndarray,
        observations: np.ndarray,
        rewards: np.ndarray,
        stepping: np.ndarray,
    ) -> None:
        self.lanes.step(actions, observations, rewards, stepping)

    def values(self, steps: np.ndarray) -> np.ndarray:
        return self.lanes.values()


@dataclasses.dataclass(frozen=True)
class Measures(Recorder):
    """The measures an optimizer selects on (QD descriptors, NSGA-II objectives), in order."""

    measures: tuple[MeasureConfig, ...] = ()

    name = "measures"
    path = "optimizer.descriptors"

    def scalar(self, env: Any, shapes: EpisodeShapes) -> EpisodeRecording:
        return _EpisodeMeasures(self.measures)

    def lanes(self, count: int, shapes: EpisodeShapes) -> LaneRecording:
        reason = lockstep_measures_reason(self.measures)
        if reason:
            raise self.refusal("lanes", reason)
        return _LaneMeasures(self.measures, count)

    def join(self, episodes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        runs, count = episodes.shape[:2]
        return individual_measures(episodes.reshape(runs * count, -1), count)

    def jax_form(self, shapes: EpisodeShapes) -> JaxRecording:
        # objectives (NSGA2) carry a sense, QD descriptors do not
        objectives = all(hasattr(measure, "sense") for measure in self.measures)
        field = "objectives" if objectives else "descriptors"
        what = "NSGA2 objectives" if objectives else "QD descriptors"
        raise ConfigError(
            f"optimizer.{field}",
            f"the JAX path computes no per-episode measures ({what}): recorder {self.name!r} "
            f"has no {type(self).__name__}.jax_form(); use the sequential, mp, dask or "
            "vectorized handler",
        )
