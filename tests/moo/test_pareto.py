"""Pareto tools against pymoo (a test-only reference), hand-computed cases and their own rules.

pymoo minimizes; our functions take maximization matrices, so pymoo gets ``F`` where we get
``-F`` (and the reference point ``r`` becomes ``-r``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import require

from neuro_evolution.moo.pareto import (
    crowded_order,
    crowding_distance,
    dominance_matrix,
    fronts,
    hypervolume,
    non_dominated_ranks,
    to_maximization,
)

require("pymoo")  # the test-only reference
from pymoo.indicators.hv import HV  # noqa: E402
from pymoo.operators.survival.rank_and_crowding.metrics import (  # noqa: E402
    calc_crowding_distance,
)
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting  # noqa: E402


def pymoo_ranks(minimized: np.ndarray) -> np.ndarray:
    _, rank = NonDominatedSorting().do(minimized, return_rank=True)
    return np.asarray(rank)


# --- to_maximization ---------------------------------------------------------------------


def test_to_maximization_negates_minimized_columns_only() -> None:
    raw = np.array([[1.0, 2.0, -3.0], [4.0, -5.0, 6.0]])
    out = to_maximization(raw, ["maximize", "minimize", "minimize"])
    np.testing.assert_array_equal(out, [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    np.testing.assert_array_equal(raw[0], [1.0, 2.0, -3.0])  # the input is not changed


def test_to_maximization_refuses_a_bad_sense_or_shape() -> None:
    with pytest.raises(ValueError, match="objective sense 1: must be one of"):
        to_maximization(np.zeros((2, 2)), ["maximize", "smaller"])
    with pytest.raises(ValueError, match=r"expected shape \(n, 3\)"):
        to_maximization(np.zeros((2, 2)), ["maximize"] * 3)


# --- non-dominated sorting ---------------------------------------------------------------


def test_ranks_of_a_hand_made_set() -> None:
    """Maximizing: (3,3) dominates all; (2,1) and (1,2) trade off; (1,1) twice ties; (0,0)."""
    points = np.array([[1.0, 1.0], [3.0, 3.0], [2.0, 1.0], [1.0, 2.0], [1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(non_dominated_ranks(points), [2, 0, 1, 1, 2, 3])
    assert [f.tolist() for f in fronts(non_dominated_ranks(points))] == [[1], [2, 3], [0, 4], [5]]
    dominates = dominance_matrix(points)
    assert dominates[1, 0] and not dominates[0, 4] and not dominates[4, 0]
    assert not dominates[2, 3] and not dominates[3, 2] and not dominates.diagonal().any()


@pytest.mark.parametrize("shape", [(1, 2), (50, 2), (200, 2), (200, 3), (150, 5), (80, 1)])
def test_ranks_equal_pymoo_on_random_matrices(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[0] * 10 + shape[1])
    minimized = rng.standard_normal(shape)
    np.testing.assert_array_equal(non_dominated_ranks(-minimized), pymoo_ranks(minimized))


@pytest.mark.parametrize("seed", range(4))
def test_ranks_equal_pymoo_on_tied_matrices(seed: int) -> None:
    """Few distinct values: many ties in single objectives and duplicated rows."""
    rng = np.random.default_rng(seed)
    minimized = rng.integers(0, 4, size=(300, 2 + seed % 2)).astype(float)
    ours = non_dominated_ranks(-minimized)
    np.testing.assert_array_equal(ours, pymoo_ranks(minimized))
    rows = {tuple(row) for row in minimized}
    assert len(rows) < len(minimized)  # the case really has duplicates
    for row in rows:  # equal rows share a rank
        assert len(set(ours[(minimized == row).all(axis=1)])) == 1


def test_ranks_do_not_depend_on_row_order_and_blocking() -> None:
    rng = np.random.default_rng(7)
    points = rng.integers(0, 6, size=(120, 3)).astype(float)
    order = rng.permutation(len(points))
    np.testing.assert_array_equal(
        non_dominated_ranks(points[order]), non_dominated_ranks(points)[order]
    )
    import neuro_evolution.moo.pareto as pareto

    saved = pareto._BLOCK_ELEMENTS
    try:
        pareto._BLOCK_ELEMENTS = 7  # one row per block
        blocked = non_dominated_ranks(points)
    finally:
        pareto._BLOCK_ELEMENTS = saved
    np.testing.assert_array_equal(blocked, non_dominated_ranks(points))


def test_nan_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="objectives: NaN in row 1; NaN cannot be compared"):
        non_dominated_ranks(np.array([[0.0, 1.0], [np.nan, 0.0]]))


# --- crowding distance -------------------------------------------------------------------


def test_crowding_distance_of_a_hand_made_front() -> None:
    """Deb et al. 2002: extremes infinite, others sum (next - previous) / (max - min)."""
    front = np.array([[0.0, 4.0], [1.0, 2.0], [3.0, 1.0], [4.0, 0.0]])
    expected = [np.inf, (3 - 0) / 4 + (4 - 1) / 4, (4 - 1) / 4 + (2 - 0) / 4, np.inf]
    np.testing.assert_allclose(crowding_distance(front), expected, rtol=1e-15)


def test_a_constant_objective_adds_nothing() -> None:
    front = np.array([[0.0, 5.0], [1.0, 5.0], [3.0, 5.0]])
    np.testing.assert_array_equal(crowding_distance(front), [np.inf, 1.0, np.inf])
    np.testing.assert_array_equal(crowding_distance(np.ones((3, 2))), np.zeros(3))
    np.testing.assert_array_equal(
        crowding_distance(np.array([[0.0, 1.0], [1.0, 0.0]])), [np.inf] * 2
    )


@pytest.mark.parametrize("shape", [(3, 2), (40, 2), (60, 3), (30, 4)])
def test_crowding_equals_pymoo_times_the_objective_count(shape: tuple[int, int]) -> None:
    """pymoo divides Deb's sum by the number of objectives (DEAP does too); ours does not.
    Without ties (continuous values) the orders agree, so ours == M * pymoo's, extremes
    infinite in both. With ties, which tied row neighbours which depends on each library's
    sort direction, so tied fronts are not compared."""
    rng = np.random.default_rng(shape[0] + shape[1])
    minimized = rng.random(shape)
    ours = crowding_distance(-minimized)
    theirs = calc_crowding_distance(minimized)
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(np.isfinite(ours), finite)
    assert (~finite).sum() >= 2
    np.testing.assert_allclose(ours[finite], shape[1] * theirs[finite], rtol=1e-12, atol=0)


def test_crowded_order_sorts_by_rank_then_crowding_then_index() -> None:
    ranks = np.array([1, 0, 0, 1, 0])
    crowding = np.array([5.0, 1.0, np.inf, 5.0, 1.0])
    assert crowded_order(ranks, crowding).tolist() == [2, 1, 4, 0, 3]


# --- hypervolume -------------------------------------------------------------------------


def test_hypervolume_of_hand_made_sets() -> None:
    """One box is its product; two boxes are inclusion-exclusion; a point not strictly better
    than the reference in every objective adds nothing."""
    assert hypervolume(np.array([[2.0, 3.0]]), [0.0, 0.0]) == 6.0
    two = np.array([[2.0, 1.0], [1.0, 2.0]])
    assert hypervolume(two, [0.0, 0.0]) == 2 + 2 - 1
    boxes = np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 3.0]])
    assert hypervolume(boxes, [0.0, 0.0, 0.0]) == 2 + 6 - 1 * 1 * 1
    assert hypervolume(np.array([[5.0, 0.0], [-1.0, 9.0]]), [0.0, 0.0]) == 0.0
    assert hypervolume(np.array([[5.0, 0.0], [1.0, 1.0]]), [0.0, 0.0]) == 1.0
    assert hypervolume(np.array([[3.0]]), [1.0]) == 2.0
    for m in (2, 3, 4, 5):  # equal rows count once (slices prune duplicates in 4-D and up)
        assert hypervolume(np.full((3, m), 2.0), np.zeros(m)) == 2.0**m


def test_hypervolume_refuses_a_mismatched_reference_and_infinities() -> None:
    with pytest.raises(ValueError, match="reference: expected 2 coordinates"):
        hypervolume(np.ones((2, 2)), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="must be finite"):
        hypervolume(np.array([[np.inf, 1.0]]), [0.0, 0.0])


@pytest.mark.parametrize("dimension", [2, 3, 4, 5])
@pytest.mark.parametrize("kind", ["random", "front", "tied"])
def test_hypervolume_equals_pymoo(dimension: int, kind: str) -> None:
    """Random clouds (dominated and outside points included), points on a sphere's orthant
    (all non-dominated) and integer grids (ties): equal to pymoo's HV to 1e-12."""
    rng = np.random.default_rng(dimension * 3 + len(kind))
    n = {2: 300, 3: 150, 4: 40, 5: 25}[dimension]
    if kind == "random":
        minimized = rng.random((n, dimension)) * 1.3  # some beyond the reference
    elif kind == "front":
        minimized = np.abs(rng.standard_normal((n, dimension)))
        minimized /= np.linalg.norm(minimized, axis=1, keepdims=True)
    else:
        minimized = rng.integers(0, 5, size=(n, dimension)) / 4.0
    reference = np.full(dimension, 1.1)
    expected = float(HV(ref_point=reference)(minimized))
    assert expected > 0
    ours = hypervolume(-minimized, -reference)
    assert ours == pytest.approx(expected, rel=1e-12, abs=0)


def test_hypervolume_is_invariant_to_row_order_and_duplicates() -> None:
    rng = np.random.default_rng(3)
    points = rng.random((60, 3))
    value = hypervolume(points, [0.0, 0.0, 0.0])
    shuffled = np.concatenate([points, points[:10]])[rng.permutation(70)]
    assert hypervolume(shuffled, [0.0, 0.0, 0.0]) == pytest.approx(value, rel=1e-13)
    for first, second in itertools.combinations(range(3), 2):  # projections lose volume
        assert hypervolume(points[:, [first, second]], [0.0, 0.0]) >= value
