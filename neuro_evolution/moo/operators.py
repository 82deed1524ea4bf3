"""The operators of NSGA2 (Deb et al. 2002): variation as vectorized numpy re-writings of
DEAP's (simulated binary crossover, unbounded and bounded, and Deb's polynomial mutation),
binary tournaments on (rank, crowding) and the environmental selection of the survivors.

Each variation operator takes its uniform draws as an argument (one per gene, drawn by the
optimizer's own generator), so the number of draws per generation is fixed and a resumed run
repeats them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuro_evolution.moo.pareto import crowded_order, crowding_distance, non_dominated_ranks


def sbx(
    first: np.ndarray, second: np.ndarray, eta: float, uniform: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """DEAP's ``cxSimulatedBinary`` on rows of parents, one uniform draw per gene."""
    beta = np.where(uniform <= 0.5, 2.0 * uniform, 1.0 / (2.0 * (1.0 - uniform)))
    beta = beta ** (1.0 / (eta + 1.0))
    child1 = 0.5 * (((1 + beta) * first) + ((1 - beta) * second))
    child2 = 0.5 * (((1 - beta) * first) + ((1 + beta) * second))
    return child1, child2


def _spread(beta: np.ndarray, eta: float, uniform: np.ndarray) -> np.ndarray:
    alpha = 2.0 - beta ** -(eta + 1)
    return np.where(
        uniform <= 1.0 / alpha,
        (uniform * alpha) ** (1.0 / (eta + 1)),
        (1.0 / (2.0 - uniform * alpha)) ** (1.0 / (eta + 1)),
    )


def sbx_bounded(
    first: np.ndarray,
    second: np.ndarray,
    eta: float,
    bounds: tuple[Any, Any],  # (low, high): scalars or one per gene
    draws: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """DEAP's ``cxSimulatedBinaryBounded``; ``draws`` (3, ...) are per gene: apply (<= 1/2),
    spread, swap (<= 1/2). Genes closer than 1e-14 are not crossed."""
    low, high = bounds
    apply, uniform, swap = draws
    x1, x2 = np.minimum(first, second), np.maximum(first, second)
    active = (apply <= 0.5) & (np.abs(first - second) > 1e-14)
    gap = np.where(active, x2 - x1, 1.0)
    q1 = _spread(1.0 + (2.0 * (np.where(active, x1, low) - low) / gap), eta, uniform)
    q2 = _spread(1.0 + (2.0 * (high - np.where(active, x2, high)) / gap), eta, uniform)
    c1 = np.minimum(np.maximum(0.5 * (x1 + x2 - q1 * (x2 - x1)), low), high)
    c2 = np.minimum(np.maximum(0.5 * (x1 + x2 + q2 * (x2 - x1)), low), high)
    swapped = swap <= 0.5
    child1 = np.where(active, np.where(swapped, c2, c1), first)
    child2 = np.where(active, np.where(swapped, c1, c2), second)
    return child1, child2


def polynomial_bounded(
    genomes: np.ndarray,
    eta: float,
    bounds: tuple[Any, Any],  # (low, high): scalars or one per gene
    prob: float,
    draws: np.ndarray,
) -> np.ndarray:
    """DEAP's ``mutPolynomialBounded``; ``draws`` (2, ...) are per gene: apply (<= prob), shape."""
    low, high = bounds
    apply, uniform = draws
    width = high - low
    delta_1, delta_2 = (genomes - low) / width, (high - genomes) / width
    power = 1.0 / (eta + 1.0)
    lower = uniform < 0.5
    xy = np.where(lower, 1.0 - delta_1, 1.0 - delta_2)
    low_val = 2.0 * uniform + (1.0 - 2.0 * uniform) * xy ** (eta + 1)
    high_val = 2.0 * (1.0 - uniform) + 2.0 * (uniform - 0.5) * xy ** (eta + 1)
    delta_q = np.where(lower, low_val**power - 1.0, 1.0 - high_val**power)
    mutated = np.minimum(np.maximum(genomes + delta_q * width, low), high)
    return np.where(apply <= prob, mutated, genomes)


def binary_tournament(
    rng: np.random.Generator, ranks: np.ndarray, crowding: np.ndarray, count: int
) -> np.ndarray:
    """``count`` winners of tournaments between two uniformly drawn entrants (with
    replacement): lower rank wins, then larger crowding, then the first drawn."""
    entrants = rng.integers(0, len(ranks), size=(count, 2))
    a, b = entrants[:, 0], entrants[:, 1]
    second_wins = (ranks[b] < ranks[a]) | ((ranks[b] == ranks[a]) & (crowding[b] > crowding[a]))
    return np.where(second_wins, b, a)


def environmental_selection(objectives: np.ndarray, count: int) -> tuple[np.ndarray, ...]:
    """(chosen indices in increasing order, their ranks, their crowding): the ``count`` best by
    whole fronts, the last front cut by crowding distance (larger first, ties by index)."""
    ranks = non_dominated_ranks(objectives)
    crowding = np.zeros(len(ranks))
    for rank in range(int(ranks.max()) + 1):
        members = np.flatnonzero(ranks == rank)
        crowding[members] = crowding_distance(objectives[members])
        if np.count_nonzero(ranks <= rank) >= count:
            break
    chosen = np.sort(crowded_order(ranks, crowding)[:count])
    return chosen, ranks[chosen], crowding[chosen]
