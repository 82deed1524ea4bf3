"""The stopping criteria that end one CMA-ES search and trigger a restart (``restarts``).

They are those of A. Auger and N. Hansen, "A Restart CMA Evolution Strategy With Increasing
Population Size", CEC 2005 (Sect. 2: equalfunvalhist, TolFun, TolX, noEffectAxis,
noEffectCoord, conditionCov) and of N. Hansen, "Benchmarking a BI-Population CMA-ES on the
BBOB-2009 Function Testbed", GECCO 2009 workshop (MaxIter, stagnation); pycma's
``_CMAStopDict`` tests the same quantities. Fitness is higher-is-better here; every criterion
reads differences or medians, so it is the papers' rule on -f.

:class:`StopHistory` holds the fitness histories of the current search (part of the exact state).
"""

from __future__ import annotations

from collections.abc import Mapping
from math import ceil, sqrt
from typing import Any

import numpy as np

from neuro_evolution.optimizers.rng import state_array

STAGNATION_MAX = 20_000  # Hansen 2009: the histories hold at most this many generations


def history_length(genome_size: int, population_size: int) -> int:
    """Generations of best fitness that TolFun reads: 10 + ceil(30 n / lambda) (Auger & Hansen
    2005)."""
    return 10 + ceil(30 * genome_size / population_size)


def equal_fitness_history(recent_best: np.ndarray, length: int) -> bool:
    """equalfunvalhist (Auger & Hansen 2005): the best fitness of the last ``length``
    generations is one value."""
    return len(recent_best) >= length and float(np.ptp(recent_best)) == 0.0


def tolfun(recent_best: np.ndarray, current: np.ndarray, length: int, tolerance: float) -> bool:
    """TolFun (Auger & Hansen 2005; pycma ``tolfun``): the range of the best fitness of the last
    ``length`` generations together with every fitness of this generation is below
    ``tolerance``."""
    if len(recent_best) < length:
        return False
    values = np.concatenate([recent_best, current])
    return float(values.max() - values.min()) < tolerance


def tolx(
    sigma: float, pc: np.ndarray, variances: np.ndarray, sigma0: float, tolerance: float
) -> bool:
    """TolX (Auger & Hansen 2005; pycma ``tolx``): sigma sqrt(C_ii) and sigma pc_i are below
    ``tolerance`` sigma0 in every coordinate (sigma0: this search's initial step size)."""
    limit = tolerance * sigma0
    return bool(np.all(sigma * np.sqrt(variances) < limit) and np.all(sigma * np.abs(pc) < limit))


def no_effect_axis(mean: np.ndarray, sigma: float, axis: np.ndarray) -> bool:
    """noEffectAxis (Auger & Hansen 2005; pycma ``noeffectaxis``): adding 0.1 sigma times the
    principal axis ``axis`` = d_i b_i of C (i = generation mod n) leaves the mean unchanged."""
    return bool(np.all(mean == mean + 0.1 * sigma * axis))


def no_effect_coordinate(mean: np.ndarray, sigma: float, variances: np.ndarray) -> bool:
    """noEffectCoord (Auger & Hansen 2005; pycma ``noeffectcoord``): adding 0.2 sigma sqrt(C_ii)
    to some coordinate i leaves the mean unchanged there."""
    return bool(np.any(mean == mean + 0.2 * sigma * np.sqrt(variances)))


def condition_cov(condition: float, limit: float) -> bool:
    """conditionCov (Auger & Hansen 2005; pycma ``tolconditioncov``): the condition number of C
    exceeds ``limit`` (1e14)."""
    return condition > limit


def max_generations(genome_size: int, population_size: int) -> int:
    """MaxIter (Hansen 2009): 100 + 50 (n + 3)^2 / sqrt(lambda) generations per search."""
    return int(100 + 50 * (genome_size + 3) ** 2 / sqrt(population_size))


def stagnation_window(genome_size: int, population_size: int, generations: int) -> int:
    """Generations the stagnation test reads (Hansen 2009): the last 20% of this search, but at
    least 120 + 30 n / lambda and at most 20,000."""
    floor = int(120 + 30 * genome_size / population_size)
    return min(STAGNATION_MAX, max(floor, int(0.2 * generations)))


def stagnation(best: np.ndarray, median: np.ndarray, window: int) -> bool:
    """Stagnation (Hansen 2009): over the last ``window`` generations, in both the best and the
    median fitness history, the median of the most recent 30% is not better than the median of
    the first 30% (histories oldest first, higher is better)."""
    if len(best) < window:
        return False
    part = max(1, int(0.3 * window))
    for history in (best[-window:], median[-window:]):
        if np.median(history[-part:]) > np.median(history[:part]):
            return False
    return True


class StopHistory:
    """The fitness histories of the current search, oldest first: the best of each of the last
    ``history_length`` generations (TolFun) and the best and median of the last 20,000
    (stagnation)."""

    def __init__(self, recent_length: int):
        self.recent_length = recent_length
        self.recent_best = np.zeros(0)
        self.best = np.zeros(0)
        self.median = np.zeros(0)

    def record(self, fitness: np.ndarray) -> None:
        """Append this generation's best and median fitness."""
        best, median = float(fitness.max()), float(np.median(fitness))
        self.recent_best = np.append(self.recent_best, best)[-self.recent_length :]
        self.best = np.append(self.best, best)[-STAGNATION_MAX:]
        self.median = np.append(self.median, median)[-STAGNATION_MAX:]

    def to_state(self, prefix: str) -> dict[str, Any]:
        """The histories as arrays under ``prefix``."""
        return {
            f"{prefix}recent_best": self.recent_best.copy(),
            f"{prefix}best": self.best.copy(),
            f"{prefix}median": self.median.copy(),
        }

    def load_state(self, state: Mapping[str, Any], prefix: str) -> None:
        """Restore :meth:`to_state`."""
        recent = state_array(state, f"{prefix}recent_best", np.float64, (None,))
        best = state_array(state, f"{prefix}best", np.float64, (None,))
        median = state_array(state, f"{prefix}median", np.float64, (len(best),))
        self.recent_best, self.best, self.median = recent, best, median
