"""Behaviour of the MU_ES, CMA_ES and SEP_CMA_ES optimizers: determinism, exact resume, owned
randomness."""

from __future__ import annotations

import io
import random
from typing import Any

import numpy as np
import pytest

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers import OPTIMIZERS, Optimizer, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.shaping import centered_ranks

GENOME_SIZE = 8

# Option combinations every generic test runs over (id -> optimizer section).
CASES: dict[str, dict[str, Any]] = {
    "mu_es_default": {"type": "MU_ES", "mu": 4, "lambda_": 12},
    "mu_es_per_gene_best_keep_parents_shaped_hof": {
        "type": "MU_ES",
        "mu": 4,
        "lambda_": 10,
        "strategy_parameter_per_gene": True,
        "selection": "best",
        "reevaluate_parents": False,
        "fitness_shaping": "centered_ranks",
        "extra_from_hof": 2,
        "mate_prob": 0.4,
        "mutate_prob": 0.5,
        "indpb": 0.7,
    },
    "mu_es_global_tournament_hof": {
        "type": "MU_ES",
        "mu": 3,
        "lambda_": 9,
        "selection": "tournament",
        "tournsize": 2,
        "extra_from_hof": 3,
        "mate_prob": 0.5,
        "mutate_prob": 0.5,
        "initial_gene_range": [-3.0, 2.0],
    },
    "cma_es_default": {"type": "CMA_ES"},
    "cma_es_options": {
        "type": "CMA_ES",
        "population_size": 9,
        "mu": 3,
        "sigma": 0.3,
        "initial_centroid": 0.5,
        "weights": "linear",
    },
    "sep_cma_es_options": {
        "type": "SEP_CMA_ES",
        "population_size": 7,
        "sigma": 0.3,
        "initial_centroid": -0.5,
        "weights": "equal",
    },
}


def make(case: str, seed: int = 7, genome_size: int = GENOME_SIZE) -> Optimizer:
    config = OPTIMIZERS.parse_config(dict(CASES[case]), "optimizer")
    return make_optimizer(config, genome_size, seed)


def sphere(genomes: np.ndarray) -> np.ndarray:
    """Maximised at genes == 1 (away from 0 so a centroid at 0 is no head start)."""
    return -np.sum((genomes - 1.0) ** 2, axis=1)


def generation(optimizer: Optimizer, hall_of_fame: HallOfFame, index: int) -> np.ndarray:
    """One ask/evaluate/tell round; returns the asked genomes."""
    genomes = optimizer.ask()
    fitness = sphere(genomes)
    hall_of_fame.update(genomes, fitness, index)
    optimizer.tell(Evaluations(fitness, hall_of_fame))
    return genomes


def run(optimizer: Optimizer, generations: int) -> list[np.ndarray]:
    hall_of_fame = HallOfFame(5, optimizer.genome_size)
    return [generation(optimizer, hall_of_fame, g) for g in range(generations)]


def npz_round_trip(state: dict[str, Any]) -> Any:
    buffer = io.BytesIO()
    np.savez(buffer, **state)
    buffer.seek(0)
    return np.load(buffer, allow_pickle=False)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("snapshot_after", ["tell", "ask"])
def test_resume_from_saved_state_continues_bit_identically(case: str, snapshot_after: str) -> None:
    """state() after k generations, saved with np.savez and loaded without pickle into a fresh
    optimizer, continues with exactly the genomes of the uninterrupted run (also mid-generation)."""
    k, n = 3, 4
    reference = make(case)
    reference_hof = HallOfFame(5, GENOME_SIZE)
    expected = [generation(reference, reference_hof, g) for g in range(k + n)]

    first = make(case)
    hall_of_fame = HallOfFame(5, GENOME_SIZE)
    for g in range(k):
        generation(first, hall_of_fame, g)
    if snapshot_after == "ask":
        first.ask()
    state = npz_round_trip(first.state())
    hof_state = npz_round_trip(hall_of_fame.state())

    resumed = make(case)
    resumed.load_state(state)
    resumed_hof = HallOfFame(5, GENOME_SIZE)
    resumed_hof.load_state(hof_state)
    for g in range(k, k + n):
        genomes = generation(resumed, resumed_hof, g)
        assert genomes.tobytes() == expected[g].tobytes(), f"generation {g} differs"


@pytest.mark.parametrize("case", CASES)
def test_state_holds_only_arrays_and_scalars(case: str) -> None:
    """state() is plain data: numpy arrays and Python scalars/strings, nothing to pickle."""
    optimizer = make(case)
    run(optimizer, 2)
    for key, value in optimizer.state().items():
        assert isinstance(value, np.ndarray | int | float | str | bool), key
        if isinstance(value, np.ndarray):
            assert value.dtype != object, key


@pytest.mark.parametrize("case", CASES)
def test_same_seed_gives_identical_genomes_and_other_seed_differs(case: str) -> None:
    """Two optimizers with the same config and seed ask identical genomes; another seed does not."""
    first, second, other = run(make(case, 3), 4), run(make(case, 3), 4), run(make(case, 4), 4)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(first, second))
    assert not np.array_equal(first[0], other[0])
    assert not np.array_equal(first[-1], other[-1])


@pytest.mark.parametrize("case", CASES)
def test_global_random_generators_are_untouched_and_ignored(case: str) -> None:
    """ask/tell leave random and np.random as they were, and draws by others between calls do
    not change the optimizer's sequence."""
    quiet = run(make(case), 3)
    random.seed(123)
    np.random.seed(123)
    python_before, numpy_before = random.getstate(), np.random.get_state()
    optimizer = make(case)
    hall_of_fame = HallOfFame(5, GENOME_SIZE)
    for g in range(3):
        genomes = generation(optimizer, hall_of_fame, g)
        assert genomes.tobytes() == quiet[g].tobytes()
        assert random.getstate() == python_before
        after = np.random.get_state()
        assert np.array_equal(after[1], numpy_before[1]) and after[2:] == numpy_before[2:]
    random.random()
    np.random.standard_normal()
    noisy = make(case)
    hall_of_fame = HallOfFame(5, GENOME_SIZE)
    for g in range(3):
        random.random()
        np.random.standard_normal(3)
        assert generation(noisy, hall_of_fame, g).tobytes() == quiet[g].tobytes()


SPHERE_START = {"initial_gene_range": [-4.0, 4.0], "initial_strategy": 0.5, "mu": 5, "lambda_": 20}


@pytest.mark.parametrize(
    "section",
    [
        {"type": "MU_ES", **SPHERE_START},
        {
            "type": "MU_ES",
            **SPHERE_START,
            "strategy_parameter_per_gene": True,
            "reevaluate_parents": False,
            "fitness_shaping": "centered_ranks",
        },
        {"type": "MU_ES", **SPHERE_START, "selection": "tournament", "extra_from_hof": 2},
        {"type": "CMA_ES", "sigma": 1.0, "initial_centroid": -2.0},
    ],
    ids=["mu_es_global", "mu_es_per_gene_kept_parents", "mu_es_tournament_hof", "cma_es"],
)
def test_optimizer_improves_clearly_on_a_sphere_in_30_generations(section: dict) -> None:
    """On a 10-gene sphere, 30 generations bring the best genome at least 20 times and the
    population mean at least 5 times closer to the optimum than the first generation."""
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), 10, 11)
    generations = run(optimizer, 30)
    first, last = sphere(generations[0]), sphere(generations[-1])
    assert last.max() > first.max() / 20, (first.max(), last.max())
    assert last.mean() > first.mean() / 5, (first.mean(), last.mean())


@pytest.mark.parametrize("case", CASES)
def test_ask_size_is_stable_and_repeated_ask_returns_the_same_genomes(case: str) -> None:
    """Every ask returns population_size genomes; asking twice before tell returns the same."""
    optimizer = make(case)
    hall_of_fame = HallOfFame(5, GENOME_SIZE)
    for g in range(4):
        genomes = optimizer.ask()
        assert genomes.shape == (optimizer.population_size, GENOME_SIZE)
        assert optimizer.ask().tobytes() == genomes.tobytes()
        fitness = sphere(genomes)
        hall_of_fame.update(genomes, fitness, g)
        optimizer.tell(Evaluations(fitness, hall_of_fame))


def test_mu_es_population_sizes_follow_reevaluate_parents() -> None:
    """MU_ES asks mu + lambda_ genomes (parents first) when re-evaluating parents, else lambda_."""
    again = make_optimizer(
        OPTIMIZERS.parse_config({"type": "MU_ES", "mu": 3, "lambda_": 5}, "o"), 4, 0
    )
    keep = make_optimizer(
        OPTIMIZERS.parse_config(
            {"type": "MU_ES", "mu": 3, "lambda_": 5, "reevaluate_parents": False}, "o"
        ),
        4,
        0,
    )
    hall_of_fame = HallOfFame(5, 4)
    for g in range(3):
        assert generation(again, hall_of_fame, g).shape == (8, 4)
        assert generation(keep, hall_of_fame, g).shape == (5, 4)
    parents = again.state()["parent_genomes"]
    assert again.ask()[:3].tobytes() == parents.tobytes()


def test_mu_es_without_reevaluation_selects_over_kept_parent_fitness_and_offspring() -> None:
    """With reevaluate_parents false and best selection, the new parents are the mu best of
    (old parents with their kept fitness) + (offspring with their new fitness)."""
    config = OPTIMIZERS.parse_config(
        {"type": "MU_ES", "mu": 3, "lambda_": 6, "reevaluate_parents": False, "selection": "best"},
        "o",
    )
    optimizer = make_optimizer(config, 5, 2)
    hall_of_fame = HallOfFame(5, 5)
    generation(optimizer, hall_of_fame, 0)
    old = optimizer.state()
    offspring = optimizer.ask()
    fitness = np.arange(6, dtype=np.float64) - 100.0  # worse than every kept parent but two
    fitness[4] = old["parent_fitness"].max() + 1.0
    fitness[5] = old["parent_fitness"].min() - 1e-9
    optimizer.tell(Evaluations(fitness, hall_of_fame))
    new = optimizer.state()
    pool_genomes = np.concatenate([old["parent_genomes"], offspring])
    pool_fitness = np.concatenate([old["parent_fitness"], fitness])
    best = np.argsort(-pool_fitness, kind="stable")[:3]
    assert new["parent_fitness"].tolist() == pool_fitness[best].tolist()
    assert new["parent_genomes"].tobytes() == pool_genomes[best].tobytes()


@pytest.mark.parametrize("selection", ["best", "tournament"])
@pytest.mark.parametrize("reevaluate", [True, False])
def test_centered_rank_shaping_selects_like_raw_fitness(selection: str, reevaluate: bool) -> None:
    """Shaping is applied to parents and offspring together, so rank-based selection on shaped
    fitness picks exactly the survivors raw fitness picks (shaping each batch apart would not)."""
    base: dict[str, Any] = {"type": "MU_ES", "mu": 3, "lambda_": 6, "selection": selection}
    base["reevaluate_parents"] = reevaluate
    raw = make_optimizer(OPTIMIZERS.parse_config(base, "o"), 5, 9)
    shaped = make_optimizer(
        OPTIMIZERS.parse_config({**base, "fitness_shaping": "centered_ranks"}, "o"), 5, 9
    )
    for a, b in zip(run(raw, 6), run(shaped, 6)):
        assert a.tobytes() == b.tobytes()


def test_centered_ranks_are_ordered_centered_and_tie_preserving() -> None:
    """Centered ranks lie in [-0.5, 0.5], keep the order of fitness and give ties one value."""
    shaped = centered_ranks(np.array([3.0, -1.0, 10.0, 3.0, 7.0]))
    assert shaped.tolist() == [-0.125, -0.5, 0.5, -0.125, 0.25]
    assert centered_ranks(np.array([4.0])).tolist() == [0.0]


def test_mu_es_extra_parents_come_from_the_hall_of_fame() -> None:
    """extra_from_hof adds the best hall-of-fame genomes as parents: with copies only (no
    crossover or mutation) offspring include exact hall-of-fame genomes never asked before,
    and the extras carry the mean strategy of the selected parents."""
    config = OPTIMIZERS.parse_config(
        {
            "type": "MU_ES",
            "mu": 2,
            "lambda_": 40,
            "extra_from_hof": 2,
            "mate_prob": 0.0,
            "mutate_prob": 0.0,
        },
        "o",
    )
    optimizer = make_optimizer(config, 3, 5)
    asked = optimizer.ask()
    hall_of_fame = HallOfFame(3, 3)
    hall_of_fame.update(asked, sphere(asked), 0)
    famous = np.array([[50.0, 51.0, 52.0], [60.0, 61.0, 62.0], [70.0, 71.0, 72.0]])
    hall_of_fame.update(famous, np.array([1e6, 2e6, 3e6]), 0)  # the three best, 70s first
    optimizer.tell(Evaluations(sphere(asked), hall_of_fame))

    state = optimizer.state()
    assert state["extra_genomes"].tolist() == famous[[2, 1]].tolist()
    assert np.allclose(state["extra_strategies"], state["parent_strategies"].mean(axis=0))
    offspring = optimizer.ask()[2:]
    rows = {tuple(row) for row in offspring}
    assert tuple(famous[2]) in rows and tuple(famous[1]) in rows
    assert tuple(famous[0]) not in rows
    pool = {tuple(row) for row in np.concatenate([state["parent_genomes"], famous[[2, 1]]])}
    assert rows <= pool


def test_mu_es_without_hall_of_fame_extras_never_breeds_from_it() -> None:
    """With extra_from_hof 0 the hall of fame is ignored: none of its genomes reappear."""
    config = OPTIMIZERS.parse_config(
        {"type": "MU_ES", "mu": 2, "lambda_": 40, "mate_prob": 0.0, "mutate_prob": 0.0}, "o"
    )
    optimizer = make_optimizer(config, 3, 5)
    asked = optimizer.ask()
    hall_of_fame = HallOfFame(3, 3)
    famous = np.array([[50.0, 51.0, 52.0]])
    hall_of_fame.update(famous, np.array([1e6]), 0)
    optimizer.tell(Evaluations(sphere(asked), hall_of_fame))
    assert tuple(famous[0]) not in {tuple(row) for row in optimizer.ask()}


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ({"type": "MU_ES", "mate_prob": 0.6, "mutate_prob": 0.5}, "mutate_prob"),
        ({"type": "MU_ES", "initial_gene_range": [1.0, -1.0]}, "initial_gene_range"),
        ({"type": "MU_ES", "initial_gene_range": [1.0]}, "initial_gene_range"),
        ({"type": "MU_ES", "mu": 1, "mate_prob": 0.5}, "mu"),
        ({"type": "MU_ES", "mu": 8, "lambda_": 4, "reevaluate_parents": False}, "lambda_"),
        ({"type": "MU_ES", "initial_strategy": 0.01, "min_strategy": 0.1}, "min_strategy"),
        ({"type": "MU_ES", "selection": "roulette"}, "selection"),
        ({"type": "MU_ES", "fitness_shaping": "centred_ranks"}, "fitness_shaping"),
        ({"type": "MU_ES", "indpb": 0.0}, "indpb"),
        ({"type": "MU_ES", "tournsize": 0}, "tournsize"),
        ({"type": "MU_ES", "lambda": 5}, "lambda"),
        ({"type": "CMA_ES", "population_size": 6, "mu": 7}, "mu"),
        ({"type": "CMA_ES", "sigma": 0.0}, "sigma"),
        ({"type": "CMA_ES", "population_size": 1}, "population_size"),
        ({"type": "CMA_ES", "center_init": "zeros"}, "center_init"),
        ({"type": "CMA_ES", "weights": "log"}, "weights"),
        ({"type": "CMA_E"}, "type"),
    ],
)
def test_config_errors_name_the_field(section: dict[str, Any], field: str) -> None:
    """A bad optimizer option is a one-line ConfigError starting with its field path."""
    with pytest.raises(ConfigError) as error:
        OPTIMIZERS.parse_config(section, "optimizer")
    message = str(error.value)
    assert message.startswith(f"optimizer.{field}"), message
    assert "\n" not in message


def test_cma_mu_above_the_default_population_size_is_refused_with_the_numbers() -> None:
    """mu larger than the genome-size default population is refused when the optimizer is
    made, naming mu and the population size."""
    config = OPTIMIZERS.parse_config({"type": "CMA_ES", "mu": 50}, "optimizer")
    with pytest.raises(ValueError, match=r"mu: must be <= the population size \d+"):
        make_optimizer(config, 10, 0)


@pytest.mark.parametrize("case", ["mu_es_default", "cma_es_default"])
def test_tell_refuses_wrong_fitness_and_tell_without_ask(case: str) -> None:
    """tell() needs a preceding ask() and exactly one non-NaN fitness per asked genome."""
    optimizer = make(case)
    hall_of_fame = HallOfFame(5, GENOME_SIZE)
    with pytest.raises(RuntimeError, match="ask"):
        optimizer.tell(Evaluations(np.zeros(3), hall_of_fame))
    genomes = optimizer.ask()
    with pytest.raises(ValueError, match="fitness: expected"):
        optimizer.tell(Evaluations(np.zeros(len(genomes) + 1), hall_of_fame))
    fitness = sphere(genomes)
    fitness[1] = np.nan
    with pytest.raises(ValueError, match="fitness: NaN at index 1"):
        optimizer.tell(Evaluations(fitness, hall_of_fame))


def test_state_of_one_optimizer_type_is_refused_by_the_other() -> None:
    """Loading a MU_ES state into CMA_ES (or a state of another genome size) fails clearly."""
    mu_es, cma_es = make("mu_es_default"), make("cma_es_default")
    run(mu_es, 1)
    run(cma_es, 1)
    with pytest.raises(ValueError, match="for 'MU_ES', not CMA_ES"):
        cma_es.load_state(mu_es.state())
    with pytest.raises(ValueError, match="parent_genomes"):
        make("mu_es_default", genome_size=GENOME_SIZE + 1).load_state(mu_es.state())
