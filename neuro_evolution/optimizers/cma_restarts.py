"""IPOP and BIPOP restarts of CMA_ES and SEP_CMA_ES: the ``restarts`` section and the
population schedule.

IPOP (A. Auger and N. Hansen, "A Restart CMA Evolution Strategy With Increasing Population
Size", CEC 2005): when a stopping criterion (:mod:`cma_stopping`) ends a search, the next one
starts from the initial mean and sigma0 with lambda_k = lambda_default * factor^k after k
restarts (factor 2).

BIPOP (N. Hansen, "Benchmarking a BI-Population CMA-ES on the BBOB-2009 Function Testbed",
GECCO 2009 workshop) interleaves two regimes and starts the next search in the one that has
used fewer evaluations so far (ties: large):

- large: the IPOP schedule, lambda_l = lambda_default * factor^k after k large restarts, sigma0;
- small: lambda_s = floor(lambda_default * (lambda_l / lambda_default)^(U2^2)) and
  sigma0 * 10^(-2 U1), U1, U2 ~ U[0, 1] (drawn in that order from the optimizer's generator),
  lambda_l the last large search's population; the search stops after at most half the
  evaluations the large regime has used (max_generations also applies).

The paper writes lambda_s = floor(lambda_def (lambda_l' / (2 lambda_def))^(U^2)) with lambda_l'
the *next* large population; with factor 2 that is the formula above. As in pycma's ``fmin``
(and Hansen's Matlab code) the first search, at lambda_default, counts on the small regime's
budget, so the first restart is always large; ``max_restarts`` counts large restarts only, and
once they are spent the last search runs on without further restarts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from math import floor
from typing import Any, Literal

import numpy as np

from neuro_evolution.core.schema import ConfigBase, config_class, option
from neuro_evolution.optimizers.cma_stopping import max_generations
from neuro_evolution.optimizers.rng import state_scalar

RestartKind = Literal["ipop", "bipop"]
Regime = Literal["large", "small"]


@config_class
class RestartsConfig(ConfigBase):
    """``optimizer.restarts`` of CMA_ES / SEP_CMA_ES: restart a search that a stopping criterion
    ends, with a new population size (docs/guide/optimizers.md, "Restarts")."""

    kind: RestartKind = option(
        "ipop",
        doc="ipop: lambda times population_factor at every restart; bipop: alternate that with"
        " short searches of a smaller lambda and sigma (Hansen 2009)",
    )
    population_factor: float = option(
        2.0, doc="lambda grows by this factor at every (large) restart", gt=1
    )
    max_restarts: int = option(
        9, doc="restarts with a grown lambda; after them the last search runs on", ge=0
    )
    tolfun: float = option(
        1e-12,
        doc="stop when the best fitness of the last 10 + 30 n / lambda generations and all of"
        " this generation lie within this range",
        ge=0,
    )
    tolx: float = option(
        1e-12,
        doc="stop when sigma sqrt(C_ii) and sigma pc_i are below tolx * sigma0 in every gene",
        ge=0,
    )
    max_condition: float = option(
        1e14, doc="stop when the condition number of C exceeds this", gt=1
    )
    stagnation: bool = option(
        True,
        doc="stop when the median of the recent best and median fitness no longer improves"
        " (window: the last 20% of the search, at least 120 + 30 n / lambda generations)",
    )
    max_generations: int | None = option(
        None,
        doc="generations of one search at most (null: 100 + 50 (n + 3)^2 / sqrt(lambda))",
        ge=1,
    )

    def largest_population(self, default: int) -> int:
        """The largest lambda the schedule can reach from ``default``."""
        return grown_population(default, self.population_factor, self.max_restarts)


def grown_population(default: int, factor: float, large_restarts: int) -> int:
    """lambda_default * factor^k, rounded to the nearest integer (exact for factor 2)."""
    return int(floor(default * factor**large_restarts + 0.5))


def small_population(default: int, largest: int, u: float) -> int:
    """BIPOP's lambda_s = floor(lambda_default * (lambda_l / lambda_default)^(u^2))."""
    return int(floor(default * (largest / default) ** (u * u)))


@dataclasses.dataclass(frozen=True)
class SearchPlan:
    """One search of the schedule: its regime, lambda, sigma0 factor and generation limit."""

    regime: Regime
    population_size: int
    sigma_factor: float
    generation_limit: int


class RestartSchedule:
    """Which search comes next: the regime budgets and the count of large restarts.

    State: ``large_restarts`` (k), the evaluations each regime has used, and the current
    search's plan.
    """

    def __init__(self, config: RestartsConfig, genome_size: int, default_population: int):
        self.config = config
        self.genome_size = genome_size
        self.default_population = default_population
        self.large_restarts = 0
        self.budget: dict[Regime, int] = {"large": 0, "small": 0}
        self.plan = self._plan("small", default_population, 1.0, None)  # the first search

    def _plan(
        self, regime: Regime, population: int, sigma_factor: float, budget_cap: int | None
    ) -> SearchPlan:
        limit = self.config.max_generations or max_generations(self.genome_size, population)
        if budget_cap is not None:
            limit = max(1, min(limit, budget_cap))
        return SearchPlan(regime, population, sigma_factor, limit)

    @property
    def largest(self) -> int:
        """lambda_l: the population of the last large search (lambda_default at first)."""
        c = self.config
        return grown_population(self.default_population, c.population_factor, self.large_restarts)

    def next_search(self, evaluations: int, uniforms: np.random.Generator) -> SearchPlan | None:
        """The plan after the current search ended having used ``evaluations``; None when the
        large restarts are spent (the current search then runs on)."""
        self.budget[self.plan.regime] += evaluations
        if self.large_restarts >= self.config.max_restarts:
            return None
        if self.config.kind == "bipop" and self.budget["small"] < self.budget["large"]:
            sigma_factor = 10.0 ** (-2.0 * float(uniforms.random()))
            u = float(uniforms.random())
            population = small_population(self.default_population, self.largest, u)
            cap = int(0.5 * self.budget["large"] / population)  # half the large budget
            self.plan = self._plan("small", population, sigma_factor, cap)
        else:
            self.large_restarts += 1
            self.plan = self._plan("large", self.largest, 1.0, None)
        return self.plan

    def to_state(self, prefix: str) -> dict[str, Any]:
        """The schedule's scalars (keys prefixed ``prefix``)."""
        return {
            f"{prefix}large_restarts": self.large_restarts,
            f"{prefix}budget_large": self.budget["large"],
            f"{prefix}budget_small": self.budget["small"],
            f"{prefix}regime": self.plan.regime,
            f"{prefix}population_size": self.plan.population_size,
            f"{prefix}sigma_factor": self.plan.sigma_factor,
            f"{prefix}generation_limit": self.plan.generation_limit,
        }

    def load_state(self, state: Mapping[str, Any], prefix: str) -> None:
        """Restore :meth:`to_state`."""
        regime = str(state_scalar(state, f"{prefix}regime"))
        if regime not in ("large", "small"):
            raise ValueError(f"optimizer state '{prefix}regime': large or small, got {regime!r}")
        self.large_restarts = int(state_scalar(state, f"{prefix}large_restarts"))
        self.budget = {
            "large": int(state_scalar(state, f"{prefix}budget_large")),
            "small": int(state_scalar(state, f"{prefix}budget_small")),
        }
        self.plan = SearchPlan(
            "large" if regime == "large" else "small",
            int(state_scalar(state, f"{prefix}population_size")),
            float(state_scalar(state, f"{prefix}sigma_factor")),
            int(state_scalar(state, f"{prefix}generation_limit")),
        )
