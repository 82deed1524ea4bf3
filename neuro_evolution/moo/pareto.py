"""Pareto tools for several objectives, all on MAXIMIZATION matrices (higher is better in every
column), as the project maximizes fitness.

- :func:`to_maximization`: raw objective values + a sense per objective ("maximize" or
  "minimize") -> the maximization matrix every other function here takes (minimized columns
  are negated).
- :func:`non_dominated_ranks`: the fast non-dominated sort of Deb et al. (2002), rank 0 = the
  Pareto front; equal rows share a rank.
- :func:`crowding_distance`: Deb et al.'s crowding distance within one front.
- :func:`hypervolume`: the exact volume dominated by a set and dominating a reference point;
  a sweep in 2-D, slicing along the last objective (HSO, While et al. 2006) in 3-D and more.

Reference point rule: ``reference`` is a point in the same maximization coordinates that is
worse than what should count; only the part of each point's box ``[reference, point]`` where
the point is strictly better than ``reference`` in every objective adds volume (a point not
strictly better in some objective adds nothing). Fix the reference for a whole run (e.g. from
the config, in raw units through :func:`to_maximization`), so hypervolumes of different
generations compare.

Ties are broken by index (stable sorts) so no result depends on the order of equal floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

Sense = Literal["maximize", "minimize"]
SENSES: tuple[str, ...] = ("maximize", "minimize")
# Rows of the dominance matrix built per block: bounds the (block, n, M) temporaries.
_BLOCK_ELEMENTS = 1 << 22


def to_maximization(values: np.ndarray, senses: Sequence[str]) -> np.ndarray:
    """(n, M) float64, every ``minimize`` column negated; ``senses``: one entry per column."""
    matrix = np.array(values, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] != len(senses):
        raise ValueError(
            f"objectives: expected shape (n, {len(senses)}) for {len(senses)} senses, got "
            f"{matrix.shape}"
        )
    for column, sense in enumerate(senses):
        if sense not in SENSES:
            raise ValueError(f"objective sense {column}: must be one of {SENSES}, got {sense!r}")
        if sense == "minimize":
            matrix[:, column] = -matrix[:, column]
    return matrix


def checked_matrix(objectives: np.ndarray, name: str = "objectives") -> np.ndarray:
    """``objectives`` as (n, M) float64, M >= 1; NaN is refused (it cannot be compared)."""
    matrix = np.array(objectives, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] < 1:
        raise ValueError(f"{name}: expected a (n, M) matrix with M >= 1, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        row = int(np.flatnonzero(np.isnan(matrix).any(axis=1))[0])
        raise ValueError(f"{name}: NaN in row {row}; NaN cannot be compared, give a number")
    return matrix


def dominance_matrix(objectives: np.ndarray) -> np.ndarray:
    """(n, n) bool: ``[i, j]`` is true when row i dominates row j (>= everywhere, > somewhere).

    Built in blocks of rows so temporaries stay near ``_BLOCK_ELEMENTS`` booleans; the result
    itself is n^2 booleans.
    """
    matrix = checked_matrix(objectives)
    n, m = matrix.shape
    result = np.empty((n, n), dtype=bool)
    block = max(1, _BLOCK_ELEMENTS // max(1, n * m))
    for start in range(0, n, block):
        rows = matrix[start : start + block, None, :]
        no_worse = (rows >= matrix[None, :, :]).all(axis=2)
        better = (rows > matrix[None, :, :]).any(axis=2)
        result[start : start + block] = no_worse & better
    return result


def non_dominated_ranks(objectives: np.ndarray) -> np.ndarray:
    """(n,) int64 Pareto ranks of Deb et al. 2002's fast non-dominated sort: 0 for rows no row
    dominates, k + 1 for rows dominated only by rows of ranks <= k. Equal rows share a rank."""
    dominates = dominance_matrix(objectives)
    n = len(dominates)
    ranks = np.full(n, -1, dtype=np.int64)
    remaining = dominates.sum(axis=0, dtype=np.int64)  # dominators not yet ranked
    front = np.flatnonzero(remaining == 0)
    rank = 0
    while front.size:
        ranks[front] = rank
        remaining[front] = -1
        remaining -= dominates[front].sum(axis=0, dtype=np.int64)
        front = np.flatnonzero((remaining == 0) & (ranks < 0))
        rank += 1
    return ranks


def fronts(ranks: np.ndarray) -> list[np.ndarray]:
    """Indices of each front in rank order, each in increasing index order."""
    ranks = np.asarray(ranks)
    return [np.flatnonzero(ranks == rank) for rank in range(int(ranks.max(initial=-1)) + 1)]


def crowding_distance(objectives: np.ndarray) -> np.ndarray:
    """(n,) crowding distances of the rows of ONE front (Deb et al. 2002, Sec. III-B).

    Per objective, rows are sorted (stable: ties in index order); the two extreme rows get
    infinity and each other row adds (next - previous) / (max - min). An objective whose values
    are all equal adds nothing, not even the infinities: it has no extremes (pymoo's rule; DEAP
    gives the first and last rows of its sort infinity, which depends on their order).
    Fronts of one or two rows are all infinite unless every objective is constant.
    """
    matrix = checked_matrix(objectives)
    n, m = matrix.shape
    distance = np.zeros(n)
    if n == 0:
        return distance
    for column in range(m):
        values = matrix[:, column]
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        spread = ordered[-1] - ordered[0]
        if not spread > 0:
            continue
        distance[order[0]] = distance[order[-1]] = np.inf
        if n > 2:
            distance[order[1:-1]] += (ordered[2:] - ordered[:-2]) / spread
    return distance


def crowded_order(ranks: np.ndarray, crowding: np.ndarray) -> np.ndarray:
    """Indices sorted best first by (rank ascending, crowding descending, index ascending)."""
    return np.lexsort((np.arange(len(ranks)), -np.asarray(crowding), np.asarray(ranks)))


def hypervolume(points: np.ndarray, reference: Sequence[float] | np.ndarray) -> float:
    """The exact volume of the union of the boxes [reference, p] over ``points`` (maximization).

    Rows not strictly better than ``reference`` in every objective add nothing (see the module
    docstring for the rule). 1 objective: the best gain; 2: a sweep, O(n log n); 3 or more:
    slicing along the last objective (HSO), O(n^(M-1) log n) at worst, slices of 3 or more
    objectives pruned of dominated rows. Measured: 3 objectives x 1,000 points ~0.05 s,
    4 x 200 ~0.3 s, 5 x 50 ~0.3 s, 6 x 30 ~0.8 s (exact hypervolume is #P-hard in M).
    """
    matrix = checked_matrix(points, "points")
    ref = np.array(reference, dtype=np.float64)
    if ref.shape != (matrix.shape[1],):
        raise ValueError(
            f"reference: expected {matrix.shape[1]} coordinates, got shape {ref.shape}"
        )
    if not np.isfinite(matrix).all() or not np.isfinite(ref).all():
        raise ValueError("hypervolume: points and reference must be finite")
    gains = matrix - ref
    gains = gains[(gains > 0).all(axis=1)]
    if len(gains) == 0:
        return 0.0
    return _volume(gains)


def _volume(gains: np.ndarray) -> float:
    """Volume of the union of boxes [0, g] for rows g > 0."""
    m = gains.shape[1]
    if m == 1:
        return float(gains[:, 0].max())
    if m == 2:
        return _area(gains)
    order = np.argsort(-gains[:, -1], kind="stable")  # slices from the top level down
    ordered = gains[order]
    levels = ordered[:, -1]
    total = 0.0
    for index in range(len(ordered)):
        below = levels[index + 1] if index + 1 < len(ordered) else 0.0
        height = levels[index] - below
        if height > 0:  # rows 0..index reach at least levels[index]
            reaching = ordered[: index + 1, :-1]  # pruned where the slice recurses again
            total += height * _volume(_kept(reaching) if m > 3 else reaching)
    return total


def _kept(gains: np.ndarray) -> np.ndarray:
    """The rows that add volume: no other row dominates them, and of equal rows the first."""
    if len(gains) < 3:
        return gains
    covered = (gains[:, None, :] <= gains[None, :, :]).all(axis=2)  # [i, j]: j covers i
    earlier = np.tri(len(gains), k=-1, dtype=bool)  # [i, j]: j < i
    beaten = covered & (earlier | ~covered.T)  # covered strictly, or an equal earlier row
    np.fill_diagonal(beaten, False)
    return gains[~beaten.any(axis=1)]


def _area(gains: np.ndarray) -> float:
    """Area of the union of rectangles [0, x] x [0, y]: sweep x downwards, add new height."""
    order = np.argsort(-gains[:, 0], kind="stable")
    x, y = gains[order, 0], gains[order, 1]
    reached = np.maximum.accumulate(y)
    rises = np.diff(reached, prepend=0.0)
    return float(np.sum(x * rises))
