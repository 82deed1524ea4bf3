"""The archive of elites (cells, insertion in submission order, CVT centroids kept, metrics)
and the QD optimizers' variation and state."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.schema import parse, to_dict
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.sep_cma_es import SepCmaEs
from neuro_evolution.qd.archive import IMPROVED, NEW, NOT_ADDED, Archive
from neuro_evolution.qd.cma_me import improvement_order
from neuro_evolution.qd.descriptors import ArchiveConfig, DescriptorConfig

DESCRIPTORS = tuple(
    parse(DescriptorConfig, d, "d")
    for d in (
        {"name": "a", "source": "observation", "low": -1.0, "high": 1.0, "bins": 4},
        {"name": "b", "source": "observation", "index": 1, "low": 0.0, "high": 3.0, "bins": 3},
    )
)
GRID = ArchiveConfig()
CVT = ArchiveConfig(kind="cvt", cells=20, cvt_samples=2000, cvt_iterations=5, cvt_seed=3)


def add(archive: Archive, fitness: list[float], measures: list[list[float]]) -> tuple:
    count = len(fitness)
    genomes = np.arange(count, dtype=np.float64)[:, None] * np.ones((count, 2))
    seeds = np.arange(100, 100 + count)
    return archive.add(genomes, np.array(fitness), np.array(measures), 7, seeds)


def test_grid_cells_are_row_major_bins_with_outside_values_in_the_edge_bins() -> None:
    """[low, high) is cut into equal bins, row-major over the descriptors; below low is the
    first bin, at or above high the last."""
    archive = Archive(GRID, DESCRIPTORS, 2)
    measures = np.array([[-1.0, 0.0], [-0.51, 0.99], [0.0, 1.0], [0.999, 2.999], [5, 9], [-5, -9]])
    assert archive.index_of(measures).tolist() == [0, 0, 2 * 3 + 1, 11, 11, 0]
    assert archive.cell_of_grid((2, 1)) == 7


def test_insertion_runs_in_submission_order_with_status_and_value() -> None:
    """A later solution of the same generation competes with the elite an earlier one made:
    new cell (value f), improvement (value f - old), or not added (value f - old); a
    non-finite fitness or descriptor is never added."""
    archive = Archive(GRID, DESCRIPTORS, 2)
    status, value = add(
        archive,
        [1.0, 3.0, 2.0, 5.0, np.inf, 4.0],
        [[0.5, 0.5], [0.6, 0.6], [0.7, 0.7], [-0.9, 2.5], [0.5, 2.5], [0.5, np.nan]],
    )
    assert status.tolist() == [NEW, IMPROVED, NOT_ADDED, NEW, NOT_ADDED, NOT_ADDED]
    assert value[:4].tolist() == [1.0, 2.0, -1.0, 5.0]
    cell = int(archive.index_of(np.array([[0.5, 0.5]]))[0])
    assert archive.fitness[cell] == 3.0 and archive.genomes[cell].tolist() == [1.0, 1.0]
    assert archive.seeds[cell] == 101 and archive.generations[cell] == 7
    assert len(archive) == 2 and archive.best_cell() == archive.elite_cells()[0]
    metrics = archive.metrics(offset=-10.0)
    assert metrics == {"coverage": 2 / 12, "qd_score": 13.0 + 15.0, "qd_best": 5.0}


def test_the_same_solutions_in_another_order_can_give_another_archive() -> None:
    """Order matters only for equal fitness in one cell (the first one stays): which is why
    every handler returns results in submission order."""
    first, second = Archive(GRID, DESCRIPTORS, 2), Archive(GRID, DESCRIPTORS, 2)
    add(first, [1.0, 1.0], [[0.5, 0.5], [0.6, 0.6]])
    add(second, [1.0, 1.0][::-1], [[0.6, 0.6], [0.5, 0.5]])
    assert not np.array_equal(first.measures, second.measures)


def test_cvt_centroids_come_from_the_seed_and_are_loaded_not_recomputed() -> None:
    """Same cvt_seed, same centroids; a loaded state keeps its saved centroids even when this
    config would compute others."""
    one, two = Archive(CVT, DESCRIPTORS, 2), Archive(CVT, DESCRIPTORS, 2)
    np.testing.assert_array_equal(one.centroids, two.centroids)
    assert one.centroids.shape == (20, 2)
    other = Archive(dataclasses.replace(CVT, cvt_seed=4), DESCRIPTORS, 2)
    assert not np.array_equal(other.centroids, one.centroids)
    add(one, [1.0, 2.0, 3.0], [[0.5, 0.5], [-0.5, 2.0], [0.9, 2.9]])
    other.load_state(one.to_state())
    np.testing.assert_array_equal(other.centroids, one.centroids)
    for key, value in one.to_state().items():
        assert np.array_equal(np.asarray(other.to_state()[key]), np.asarray(value)), key
    cells = one.index_of(np.array([[0.5, 0.5]]))
    distances = np.linalg.norm(one.centroids - [0.5, 0.5], axis=1)
    assert cells[0] == int(np.argmin(distances))


def test_improvement_ranking_puts_new_cells_first_then_improvements_by_value() -> None:
    """CMA-ME's two-stage ranking: status descending, then value descending, ties in order."""
    status = np.array([NOT_ADDED, NEW, IMPROVED, NEW, IMPROVED, NOT_ADDED])
    value = np.array([5.0, 1.0, 0.5, 2.0, 0.5, -1.0])
    assert improvement_order(status, value).tolist() == [3, 1, 2, 4, 0, 5]


def qd_optimizer(section: dict) -> Any:
    from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer

    data = {"descriptors": [to_dict(d) for d in DESCRIPTORS], **section}
    return make_optimizer(OPTIMIZERS.parse_config(data, "optimizer"), 5, 9)


def tell_sphere(optimizer: Any, generation: int) -> np.ndarray:
    genomes = optimizer.ask()
    fitness = -np.sum((genomes - 1.0) ** 2, axis=1)
    seeds = np.zeros(len(genomes), dtype=np.int64)
    optimizer.tell(
        Evaluations(fitness, HallOfFame(1, 5), genomes[:, :2], seeds, generation=generation)
    )
    return genomes


def test_iso_line_children_follow_the_formula_with_the_optimizer_generator() -> None:
    """x' = x_i + iso_sigma N(0, I) + line_sigma N(0, 1) (x_j - x_i), x_i and x_j uniformly
    drawn elites, drawn in that order from the optimizer's own generator."""
    optimizer = qd_optimizer({"type": "MAP_ELITES", "batch_size": 7, "iso_sigma": 0.05})
    tell_sphere(optimizer, 0)
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = optimizer._random.bit_generator.state
    cells = optimizer.archive.elite_cells()
    genomes = optimizer.archive.genomes
    parents = genomes[cells[rng.integers(len(cells), size=7)]]
    others = genomes[cells[rng.integers(len(cells), size=7)]]
    iso = 0.05 * rng.standard_normal((7, 5))
    line = 0.2 * rng.standard_normal((7, 1))
    assert optimizer.ask().tobytes() == (parents + iso + line * (others - parents)).tobytes()


@pytest.mark.parametrize(
    "options",
    [
        {"covariance": "diagonal"},
        {"selection": "filter"},
        {"covariance": "diagonal", "selection": "filter"},
    ],
    ids=["diagonal", "filter", "diagonal-filter"],
)
def test_cma_me_resumes_bit_identically(options: dict) -> None:
    """SEP_CMA_ES emitters, or parents filtered to the archive's entries: a state saved mid-run
    (after an ask) and loaded into a fresh optimizer asks the genomes of the uninterrupted run,
    restarts included."""
    section = {"type": "CMA_ME", "emitters": 2, "batch_size": 4, **options}
    reference = qd_optimizer(section)
    expected = [tell_sphere(reference, g) for g in range(12)]
    assert reference.restarts.sum() > 0
    first = qd_optimizer(section)
    for g in range(5):
        tell_sphere(first, g)
    first.ask()
    resumed = qd_optimizer(section)
    resumed.load_state({k: np.asarray(v) for k, v in first.state().items()})
    assert isinstance(resumed.emitters[0], SepCmaEs) == (options.get("covariance") == "diagonal")
    for g in range(5, 12):
        assert tell_sphere(resumed, g).tobytes() == expected[g].tobytes(), g


def test_cma_me_filter_moves_each_emitter_towards_the_samples_the_archive_took() -> None:
    """selection "filter": an emitter's update uses Table 1's parameters for as many parents as
    samples entered the archive (here fewer than half), so its mean differs from "mu"'s."""
    runs = {}
    for selection in ("mu", "filter"):
        optimizer = qd_optimizer(
            {"type": "CMA_ME", "emitters": 1, "batch_size": 8, "selection": selection}
        )
        for g in range(6):
            tell_sphere(optimizer, g)
        runs[selection] = optimizer
    filtered = runs["filter"].emitters[0]
    assert filtered.params.mu < 4 and runs["mu"].emitters[0].params.mu == 4
    assert filtered.mean.tobytes() != runs["mu"].emitters[0].mean.tobytes()


def test_a_qd_optimizer_writing_its_own_state_hooks_still_saves_and_loads_it() -> None:
    """A subclass that writes ``_algorithm_state`` / ``_load_algorithm_state`` itself instead of
    declaring ``ALGORITHM_STATE`` has its keys in the state and gets them back on load."""
    from neuro_evolution.qd.map_elites import MapElites

    class Tallied(MapElites):
        tally = np.zeros(2)

        def _algorithm_state(self) -> dict[str, Any]:
            return {"tally": self.tally.copy()}

        def _load_algorithm_state(self, state: Any) -> None:
            self.tally = np.asarray(state["tally"], dtype=np.float64)

    one = qd_optimizer({"type": "MAP_ELITES"})
    first, second = (Tallied(one.config, one.genome_size, 9) for _ in range(2))
    tell_sphere(first, 0)
    first.tally = np.array([3.0, 4.0])
    state = first.state()
    assert state["tally"].tolist() == [3.0, 4.0]
    second.load_state(state)
    assert second.tally.tolist() == [3.0, 4.0] and second.generation == 1
