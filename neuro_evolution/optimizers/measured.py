"""Optimizers that need per-episode measures with the fitness (QD descriptors, objectives).

Such an optimizer names its measures (:meth:`MeasuredOptimizer.measure_configs`, configs of
:mod:`neuro_evolution.measures`); the experiment puts them in the ``RunnerSpec``, every handler's
episode loop returns them in ``EvaluationResult.measures``, and the experiment calls
:meth:`MeasuredOptimizer.tell_evaluations` instead of ``tell`` with a :class:`Evaluations`
record: the measures in the order named, plus what an archive keeps per genome. Optimizers
that are not measured are untouched: their ``tell``, state and checkpoints are as before.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod

import numpy as np

from neuro_evolution.hall_of_fame import HallOfFame
from neuro_evolution.measures import MeasureConfig
from neuro_evolution.normalization import ObservationScaler
from neuro_evolution.optimizers.base import Optimizer


@dataclasses.dataclass(frozen=True)
class Evaluations:
    """What a measured optimizer's tell gets besides the fitness, one row per asked genome."""

    measures: np.ndarray  # (P, M): the measures of measure_configs(), in that order
    seeds: np.ndarray  # (P,) the episode base seeds of the evaluations (replay reruns them)
    generation: int  # the generation being told
    scaler: ObservationScaler | None = None  # the generation's frozen observation scaler


class MeasuredOptimizer(Optimizer):
    """An optimizer whose tell needs each genome's measures as well as its fitness."""

    CANDIDATE_SOURCE = "center"  # how the run names the genome of center() (e.g. best_elite)
    MEASURES_FIELD = "descriptors"  # the optimizer section's field that names the measures

    @abstractmethod
    def measure_configs(self) -> tuple[MeasureConfig, ...]:
        """The per-episode measures every evaluation must return, in order."""

    @abstractmethod
    def tell_evaluations(
        self, fitness: np.ndarray, hall_of_fame: HallOfFame, evaluations: Evaluations
    ) -> None:
        """``tell`` with the measures (and seeds, scaler) of the genomes of the last ask."""

    def tell(self, fitness: np.ndarray, hall_of_fame: HallOfFame) -> None:
        """A measured optimizer cannot select on fitness alone."""
        raise RuntimeError(
            f"{type(self).__name__} needs per-episode measures: call tell_evaluations"
        )

    def log_metrics(self) -> dict[str, float]:
        """Extra ``log.csv`` columns after this generation (name -> value, same names every
        generation); none by default."""
        return {}

    def keep_scalers(self, observation_size: int) -> None:
        """Observations are normalized (``observation_size`` wide): keep the scaler that each
        stored genome was evaluated with (an archive or front does); nothing by default."""

    def center_scaler(self) -> ObservationScaler | None:
        """The observation scaler :meth:`center`'s genome goes with (None: the current one)."""
        return None


def measures_of(optimizer: Optimizer) -> tuple[MeasureConfig, ...]:
    """The measures ``optimizer`` needs per evaluation (() for an optimizer that is not
    measured: the episode loops then compute none)."""
    if isinstance(optimizer, MeasuredOptimizer):
        return optimizer.measure_configs()
    return ()
