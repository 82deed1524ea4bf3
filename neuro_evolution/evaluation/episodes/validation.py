"""Held-out validation: the project's one meaning of "solved".

Every ``every_generations`` generations (and after the last one) the genome the run stands
behind -- the optimizer's distribution center, or the hall of fame's best for optimizers without
one (MU_ES) -- is scored on ``episodes`` episodes whose env seeds training never uses:

* training resets envs with seeds derived by ``SeedSequence`` and cut to 32 bits, so every
  training env seed is < 2**32;
* validation episode k resets with ``first + k`` where ``first`` = 2**32 + a 32-bit value derived
  from the run seed (:func:`neuro_evolution.support.seeds.validation_seeds`), so every
  validation seed is >= 2**32: the two sets are disjoint by construction, not by chance.
  Validation episodes draw the brain's noise from ``default_rng(seed)``, exactly like
  ``replay --seed``, so ``replay RUN_DIR --validation`` (or ``--seed FIRST --episodes M``)
  reproduces the numbers.

A training-seed maximum ("best fitness") is an optimistic draw and is never reported as a result.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from neuro_evolution.core.schema import ConfigBase, config_class, option
from neuro_evolution.evaluation.episodes.runner import EvaluationResult


@config_class
class ValidationConfig(ConfigBase):
    """Held-out validation of the genome the run stands behind."""

    every_generations: int = option(
        10, doc="validate after every N generations (and after the last one)", ge=1
    )
    episodes: int = option(
        10, doc="held-out episodes per validation (seeds training never uses)", ge=1
    )
    target: float | None = option(
        None, doc="stop the run once the validation mean reaches this score (null: never)"
    )


@dataclasses.dataclass(frozen=True)
class ValidationScore:
    """Returns of the held-out episodes of one validation."""

    generation: int  # generations completed when it was taken
    returns: tuple[float, ...]
    steps: int

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def std(self) -> float:
        return float(np.std(self.returns))

    @property
    def min(self) -> float:
        return float(np.min(self.returns))

    @classmethod
    def from_results(cls, generation: int, results: list[EvaluationResult]) -> ValidationScore:
        return cls(
            generation=generation,
            returns=tuple(float(r.fitness) for r in results),
            steps=int(sum(r.steps for r in results)),
        )


def reached(mean: float | None, target: float | None) -> bool:
    """The one rule of "solved": a validation mean reaches ``target`` when ``mean >= target``
    (equal counts); never without a mean, a target, or with a NaN mean."""
    return mean is not None and target is not None and not math.isnan(mean) and mean >= target
