"""The contract every registered optimizer keeps, checked over the registry.

``contract_cases.CASES`` states, per optimizer, the config the contract runs and its budgets:
on a 10-gene sphere and a Rosenbrock function the genome the run stands behind
(``center()``, or the hall of fame's best for optimizers without a center) must get below the
stated objective value within the stated generations, for each of two run seeds. A measured
optimizer (QD) is told the first two genes as its descriptors
(``contract_cases.QD_DESCRIPTORS``); QD keeps a map of diverse elites rather than converging, so
its budgets are looser. A newly registered optimizer fails
``test_every_registered_optimizer_has_a_contract_case`` until it gets a row there.
"""

from __future__ import annotations

import io
import random
from typing import Any

import numpy as np
import pytest
from contract_cases import CASES, Budget

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.optimizers import OPTIMIZERS, Optimizer, make_optimizer
from neuro_evolution.optimizers.base import Evaluations

NAMES = OPTIMIZERS.names()
RUN_SEEDS = (1, 2)
RESUME_GENOME_SIZE = 6


def sphere(genomes: np.ndarray) -> np.ndarray:
    """Squared distance to the all-ones genome (a start at 0 gives no head start)."""
    return np.sum((genomes - 1.0) ** 2, axis=-1)


def rosenbrock(genomes: np.ndarray) -> np.ndarray:
    """Rosenbrock's function, minimum 0 at the all-ones genome."""
    head, tail = genomes[..., :-1], genomes[..., 1:]
    return np.sum(100.0 * (tail - head**2) ** 2 + (1.0 - head) ** 2, axis=-1)


def make(name: str, genome_size: int, seed: int) -> Optimizer:
    section = {"type": name, **CASES[name].config}
    return make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), genome_size, seed)


def tell(
    optimizer: Optimizer, genomes: np.ndarray, fitness: np.ndarray, hall_of_fame: HallOfFame, g: int
) -> None:
    """The one ``tell``: the fitness, and genes 0, 1 as measures for an optimizer that names
    measures."""
    measures = genomes[:, :2] if optimizer.measure_configs() else None
    seeds = np.zeros(len(genomes), dtype=np.int64)
    optimizer.tell(Evaluations(fitness, hall_of_fame, measures, seeds, generation=g))


def generation(optimizer: Optimizer, hall_of_fame: HallOfFame, index: int) -> np.ndarray:
    """One ask / evaluate (maximise -sphere) / tell round; returns the asked genomes."""
    genomes = optimizer.ask()
    fitness = -sphere(genomes)
    hall_of_fame.update(genomes, fitness, index)
    tell(optimizer, genomes, fitness, hall_of_fame, index)
    return genomes


def npz_round_trip(state: dict[str, Any]) -> Any:
    buffer = io.BytesIO()
    np.savez(buffer, **state)
    buffer.seek(0)
    return np.load(buffer, allow_pickle=False)


def test_every_registered_optimizer_has_a_contract_case() -> None:
    """The table names exactly the registered optimizers: none escapes the contract."""
    assert sorted(CASES) == NAMES


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("objective", ["sphere", "rosenbrock"])
def test_converges_within_the_stated_budget(name: str, objective: str) -> None:
    """The genome the run stands behind reaches the case's threshold within its generations."""
    budget: Budget = getattr(CASES[name], objective)
    function = {"sphere": sphere, "rosenbrock": rosenbrock}[objective]
    for seed in RUN_SEEDS:
        optimizer = make(name, budget.genome_size, seed)
        hall_of_fame = HallOfFame(1, budget.genome_size)
        for g in range(budget.generations):
            genomes = optimizer.ask()
            fitness = -function(genomes)
            hall_of_fame.update(genomes, fitness, g)
            tell(optimizer, genomes, fitness, hall_of_fame, g)
        center = optimizer.center()
        value = float(function(center)) if center is not None else -hall_of_fame.best_fitness
        assert value < budget.threshold, (seed, value)


@pytest.mark.parametrize("name", NAMES)
def test_state_is_plain_data_that_survives_npz_without_pickle(name: str) -> None:
    """state() holds only numpy arrays (no object dtype) and Python scalars/strings, and every
    value comes back equal through np.savez / np.load(allow_pickle=False)."""
    optimizer = make(name, RESUME_GENOME_SIZE, 3)
    hall_of_fame = HallOfFame(3, RESUME_GENOME_SIZE)
    for g in range(2):
        generation(optimizer, hall_of_fame, g)
    optimizer.ask()
    state = optimizer.state()
    loaded = npz_round_trip(state)
    assert sorted(loaded.files) == sorted(state)
    for key, value in state.items():
        assert isinstance(value, np.ndarray | int | float | str | bool), key
        assert np.asarray(value).dtype != object, key
        assert np.array_equal(loaded[key], np.asarray(value)), key


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("snapshot_after", ["tell", "ask"])
def test_resume_from_a_snapshot_is_bit_identical(name: str, snapshot_after: str) -> None:
    """A fresh optimizer loading state() (after tell, or mid-generation after ask) asks exactly
    the genomes of the uninterrupted run for several generations, and has the same center."""
    k, n = 3, 5
    reference = make(name, RESUME_GENOME_SIZE, 5)
    reference_hof = HallOfFame(3, RESUME_GENOME_SIZE)
    expected = [generation(reference, reference_hof, g) for g in range(k + n)]

    first = make(name, RESUME_GENOME_SIZE, 5)
    hall_of_fame = HallOfFame(3, RESUME_GENOME_SIZE)
    for g in range(k):
        generation(first, hall_of_fame, g)
    if snapshot_after == "ask":
        first.ask()
    state = npz_round_trip(first.state())
    hof_state = npz_round_trip(hall_of_fame.state())

    resumed = make(name, RESUME_GENOME_SIZE, 5)
    resumed.load_state(state)
    resumed_hof = HallOfFame(3, RESUME_GENOME_SIZE)
    resumed_hof.load_state(hof_state)
    for g in range(k, k + n):
        assert generation(resumed, resumed_hof, g).tobytes() == expected[g].tobytes(), g
    center, reference_center = resumed.center(), reference.center()
    if reference_center is None:
        assert center is None
    else:
        assert center.tobytes() == reference_center.tobytes()


@pytest.mark.parametrize("name", NAMES)
def test_global_random_generators_are_left_untouched(name: str) -> None:
    """ask/tell leave Python's random and numpy's global generator exactly as they were, and
    draws by others in between do not change the optimizer's genomes."""
    quiet_hof = HallOfFame(3, RESUME_GENOME_SIZE)
    quiet = make(name, RESUME_GENOME_SIZE, 4)
    expected = [generation(quiet, quiet_hof, g) for g in range(3)]
    random.seed(99)
    np.random.seed(99)
    optimizer = make(name, RESUME_GENOME_SIZE, 4)
    hall_of_fame = HallOfFame(3, RESUME_GENOME_SIZE)
    for g in range(3):
        python_before, numpy_before = random.getstate(), np.random.get_state()
        genomes = generation(optimizer, hall_of_fame, g)
        assert random.getstate() == python_before
        numpy_after = np.random.get_state()
        assert np.array_equal(numpy_after[1], numpy_before[1])
        assert numpy_after[2:] == numpy_before[2:]
        assert genomes.tobytes() == expected[g].tobytes()
        random.random()
        np.random.standard_normal(5)


@pytest.mark.parametrize("name", NAMES)
def test_repeated_ask_returns_the_same_float64_genomes(name: str) -> None:
    """ask() twice before tell() returns the same (P, G) float64 genomes every generation."""
    optimizer = make(name, RESUME_GENOME_SIZE, 6)
    hall_of_fame = HallOfFame(3, RESUME_GENOME_SIZE)
    for g in range(3):
        genomes = optimizer.ask()
        assert genomes.dtype == np.float64 and genomes.ndim == 2
        assert genomes.shape[1] == RESUME_GENOME_SIZE
        assert optimizer.ask().tobytes() == genomes.tobytes()
        generation(optimizer, hall_of_fame, g)


# Full covariance, its factor or the transformation matrix (CMA_ME: per emitter): G x G by design.
QUADRATIC_MEMORY = {"CMA_ES", "CMA_ME", "MA_ES", "XNES"}


@pytest.mark.parametrize("name", sorted(set(NAMES) - QUADRATIC_MEMORY))
def test_state_memory_grows_at_most_linearly_in_the_genome_size(name: str) -> None:
    """Doubling the genome size at most (about) doubles the bytes of the state between
    generations: no G x G matrix. (A pending ask adds the P x G population itself, and SNES's
    default P grows with ln G, so it is measured after tell.)"""

    def state_bytes(genome_size: int) -> int:
        optimizer = make(name, genome_size, 0)
        hall_of_fame = HallOfFame(3, genome_size)
        generation(optimizer, hall_of_fame, 0)
        return sum(np.asarray(v).nbytes for v in optimizer.state().values())

    small, large = state_bytes(400), state_bytes(800)
    assert large <= 2.1 * small, (small, large)
