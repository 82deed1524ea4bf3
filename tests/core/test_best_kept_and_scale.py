"""Rules the README states that the planted-bug check (scripts/planted_bugs.py) found unguarded:
an elite is replaced only by a better one, the hall of fame keeps the best genomes, and the
normalization's epsilon sits under the square root."""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.normalization import ObservationNormalizationConfig, ObservationStatistics
from neuro_evolution.core.schema import parse
from neuro_evolution.qd.archive import IMPROVED, NEW, NOT_ADDED, Archive
from neuro_evolution.qd.descriptors import ArchiveConfig, DescriptorConfig


def test_an_elite_is_replaced_only_by_a_strictly_better_solution() -> None:
    """MAP-Elites (Mouret & Clune 2015): a solution enters an empty cell or replaces a *worse*
    elite; one of equal fitness is not added, and the first elite stays."""
    descriptor = parse(
        DescriptorConfig,
        {"name": "a", "source": "observation", "low": 0.0, "high": 1.0, "bins": 2},
        "d",
    )
    archive = Archive(ArchiveConfig(), (descriptor,), 2)
    genomes = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    status, _ = archive.add(
        genomes, np.array([5.0, 5.0, 6.0]), np.array([[0.2], [0.3], [0.4]]), 0, np.arange(3)
    )
    assert status.tolist() == [NEW, NOT_ADDED, IMPROVED]
    status, _ = archive.add(genomes[:1], np.array([6.0]), np.array([[0.1]]), 1, np.arange(1))
    assert status.tolist() == [NOT_ADDED]
    cell = int(archive.elite_cells()[0])
    assert archive.genomes[cell].tolist() == [3.0, 3.0] and archive.fitness[cell] == 6.0


def test_the_hall_of_fame_keeps_the_best_genomes_best_first() -> None:
    """The hall of fame holds the ``size`` best distinct genomes by raw training fitness, best
    first, across generations."""
    hall = HallOfFame(3, 1)
    hall.update(np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([1.0, 9.0, 3.0, 7.0]), 0)
    assert hall.fitness.tolist() == [9.0, 7.0, 3.0]
    assert hall.genomes[:, 0].tolist() == [2.0, 4.0, 3.0]
    hall.update(np.array([[5.0], [2.0]]), np.array([8.0, 9.0]), 1)  # a repeat of genome [2]
    assert hall.fitness.tolist() == [9.0, 8.0, 7.0] and hall.best_fitness == 9.0
    assert hall.genomes[:, 0].tolist() == [2.0, 5.0, 4.0]


def test_the_scale_is_one_over_the_square_root_of_variance_plus_epsilon() -> None:
    """scale = 1 / sqrt(var + epsilon): a constant feature (variance 0) gets 1 / sqrt(epsilon),
    not 1 / epsilon."""
    config = ObservationNormalizationConfig(epsilon=1e-4)
    statistics = ObservationStatistics(config, 2)
    values = np.array([[3.0, 1.0], [3.0, 3.0]])
    statistics.merge([np.concatenate([[1.0], row, row * row]) for row in values])
    scaler = statistics.scaler()
    assert scaler.mean.tolist() == [3.0, 2.0]
    np.testing.assert_allclose(scaler.scale, 1.0 / np.sqrt([0.0 + 1e-4, 1.0 + 1e-4]), rtol=1e-12)
