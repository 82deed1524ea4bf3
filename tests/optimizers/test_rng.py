"""Owned generator states (optimizers/rng.py) survive save/restore with their cached Gaussians.

Python's ``random.gauss`` caches half of a pair of normal draws (``gauss_next``): after an odd
number of normal draws the cache is live, and a restore that drops it changes every later draw.
"""

from __future__ import annotations

import io
import random
from typing import Any

import numpy as np
import pytest

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.rng import PythonRandomState


def npz_round_trip(state: dict[str, Any]) -> Any:
    """``state`` after ``np.savez`` and ``np.load(allow_pickle=False)``, as a checkpoint has it."""
    buffer = io.BytesIO()
    np.savez(buffer, **state)
    buffer.seek(0)
    return np.load(buffer, allow_pickle=False)


def test_python_state_restores_the_cached_gaussian() -> None:
    """After one ``random.gauss`` (cache live), a restored state continues exactly."""
    owned = PythonRandomState(5)
    with owned.active():
        random.gauss(0.0, 1.0)
    saved = npz_round_trip(owned.to_state("python"))
    assert bool(saved["python_has_gauss_next"])  # the case under test: the cache is live
    with owned.active():
        expected = [random.gauss(0.0, 1.0) for _ in range(6)]
    restored = PythonRandomState(99)
    restored.load_state(saved, "python")
    with restored.active():
        continued = [random.gauss(0.0, 1.0) for _ in range(6)]
    assert continued == expected


ODD_CASES = {
    "CMA_ES": {"type": "CMA_ES", "population_size": 9},
    "MU_ES": {"type": "MU_ES", "mu": 3, "lambda_": 9, "reevaluate_parents": False},
}


@pytest.mark.parametrize("case", sorted(ODD_CASES))
def test_resume_is_exact_with_odd_genome_and_population_sizes(case: str) -> None:
    """9 genes x population 9 = 81 normals a generation (an odd count leaves a cached Gaussian):
    an optimizer restored after each generation asks exactly the uninterrupted run's genomes."""
    genes, generations = 9, 4
    config = OPTIMIZERS.parse_config(dict(ODD_CASES[case]), "optimizer")

    def tell(optimizer: Any, hall_of_fame: HallOfFame, genomes: np.ndarray, g: int) -> None:
        fitness = -np.sum((genomes - 1.0) ** 2, axis=1)
        hall_of_fame.update(genomes, fitness, g)
        optimizer.tell(Evaluations(fitness, hall_of_fame))

    straight, straight_hof = make_optimizer(config, genes, 3), HallOfFame(3, genes)
    expected = []
    for g in range(generations):
        expected.append(straight.ask())
        tell(straight, straight_hof, expected[-1], g)

    resumed, resumed_hof = make_optimizer(config, genes, 3), HallOfFame(3, genes)
    for g in range(generations):
        genomes = resumed.ask()
        assert genomes.shape == (9, genes)
        assert genomes.tobytes() == expected[g].tobytes(), f"generation {g} differs"
        tell(resumed, resumed_hof, genomes, g)
        state, hof_state = npz_round_trip(resumed.state()), npz_round_trip(resumed_hof.state())
        resumed, resumed_hof = make_optimizer(config, genes, 3), HallOfFame(3, genes)
        resumed.load_state(state)
        resumed_hof.load_state(hof_state)
