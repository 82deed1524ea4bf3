"""COSYNE against hand-worked steps of Gomez, Schmidhuber & Miikkulainen's (2008) Fig. 2.

No maintained numpy CoSyNE exists to compare with. The marking probability and the
permutation of marked values are worked by hand; one whole generation of a tiny population is
walked through the paper's steps with explicit loops (sort, recombine the top quarter, put
o_k at x_{m-k}, mark by p(x_ij), shuffle the marked values of each subpopulation), drawing the
same numbers in the same order from a copy of the optimizer's generator. Values are only
copied and compared, so agreement is exact (no tolerance).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.cosyne import Cosyne, marking_probabilities, permute_marked
from neuro_evolution.optimizers.rng import generator_load_state


def cosyne(genes: int, seed: int = 0, **options: Any) -> Cosyne:
    section = {"type": "COSYNE", **options}
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), genes, seed)
    assert isinstance(optimizer, Cosyne)
    return optimizer


def test_marking_probability_is_one_minus_the_nth_root_of_the_scaled_fitness() -> None:
    """Fitness 2, 4, 0, 3 with n = 2 genes: u = 0.5, 1, 0, 0.75 and p = 1 - sqrt(u); by rank
    u = 1/3, 1, 0, 2/3; ``all`` and a generation of equal fitness mark everything."""
    fitness = np.array([2.0, 4.0, 0.0, 3.0])
    np.testing.assert_allclose(
        marking_probabilities(fitness, 2, "fitness"),
        [1 - np.sqrt(0.5), 0.0, 1.0, 1 - np.sqrt(0.75)],
        rtol=1e-15,
    )
    np.testing.assert_allclose(
        marking_probabilities(fitness, 2, "rank"),
        [1 - np.sqrt(1 / 3), 0.0, 1.0, 1 - np.sqrt(2 / 3)],
        rtol=1e-15,
    )
    assert np.array_equal(marking_probabilities(fitness, 2, "all"), np.ones(4))
    assert np.array_equal(marking_probabilities(np.full(3, 1.5), 5, "fitness"), np.ones(3))


def test_marked_values_are_shuffled_among_the_marked_places_in_key_order() -> None:
    """Column 0 marks rows 0 and 2 (keys 0.7, 0.2: they swap); column 1 marks rows 1, 2, 3
    (keys 0.9, 0.1, 0.5: rows 2, 3, 1 go to places 1, 2, 3); unmarked values stay."""
    values = np.array([[10.0, 20.0], [11.0, 21.0], [12.0, 22.0], [13.0, 23.0]])
    marked = np.array([[True, False], [False, True], [True, True], [False, True]])
    keys = np.array([[0.7, 0.0], [0.0, 0.9], [0.2, 0.1], [0.0, 0.5]])
    expected = np.array([[12.0, 20.0], [11.0, 22.0], [10.0, 23.0], [13.0, 21.0]])
    assert np.array_equal(permute_marked(values, marked, keys), expected)


def walked_generation(
    population: np.ndarray,
    fitness: np.ndarray,
    rng: np.random.Generator,
    marking: str,
    offspring: int | None = None,
) -> np.ndarray:
    """One generation of Fig. 2 by explicit loops (mutation rate 0, so only its draws); l is
    ``offspring``, or the size of the top quarter."""
    m, n = population.shape
    order = sorted(range(m), key=lambda j: -fitness[j])  # stable: ties keep ask order
    ranked = [population[j].copy() for j in order]
    ranked_fitness = [fitness[j] for j in order]
    top = max(2, -(-m // 4))  # the top quarter, rounded up
    l_count = top if offspring is None else offspring
    children = []
    for _ in range(0, l_count, 2):  # a pair of parents and a cut give two children
        a, b = rng.choice(top, 2, replace=False)
        cut = int(rng.integers(1, n))
        children.append(np.r_[ranked[a][:cut], ranked[b][cut:]])
        children.append(np.r_[ranked[b][:cut], ranked[a][cut:]])
    rng.random((l_count, n))  # the mutation mask: rate 0 mutates nothing
    rng.standard_cauchy((l_count, n))
    survivors = m - l_count
    low, high = min(ranked_fitness), max(ranked_fitness)
    uniforms, keys = rng.random((survivors, n)), rng.random((survivors, n))
    result = np.array(ranked)
    for k in range(1, l_count + 1):
        result[m - k] = children[k - 1]  # x_{i,m-k} <- o_{i,k}
    for i in range(n):  # every subpopulation X_i
        places = []
        for j in range(survivors):
            if marking == "all":
                p = 1.0
            else:
                p = 1 - ((ranked_fitness[j] - low) / (high - low)) ** (1 / n)
            if uniforms[j, i] < p:
                places.append(j)
        moving = sorted(places, key=lambda j: keys[j, i])
        for place, source in zip(places, moving):
            result[place, i] = ranked[source][i]
    return result


@pytest.mark.parametrize("marking", ["fitness", "all"])
def test_one_generation_matches_the_papers_steps_walked_by_hand(marking: str) -> None:
    """m = 8 genomes of 3 genes: the 2 worst are replaced by the crossover children of the
    top quarter (2 parents), the survivors' genes permuted by the marking rule; the best genome
    (p = 0) survives whole in place 0 under ``fitness``."""
    optimizer = cosyne(3, seed=5, population_size=8, mutation_rate=0.0, marking=marking)
    population = optimizer.ask()
    fitness = np.array([0.3, -1.0, 2.5, 0.0, 1.7, -0.2, 0.9, -3.0])
    twin = np.random.Generator(np.random.PCG64())
    generator_load_state(twin, optimizer.state(), "generator")
    expected = walked_generation(population, fitness, twin, marking)
    optimizer.tell(Evaluations(fitness))
    asked = optimizer.ask()
    assert np.array_equal(asked, expected)
    if marking == "fitness":
        assert np.array_equal(asked[0], population[2])
    worst = population[[1, 7]]
    for gene in range(3):  # the two worst genomes' values are gone from every subpopulation
        assert not np.isin(worst[:, gene], asked[:, gene]).any()


@pytest.mark.parametrize("marking", ["fitness", "all"])
def test_more_offspring_than_the_top_quarter_replace_as_many_of_the_least_fit(
    marking: str,
) -> None:
    """``offspring: 5`` of m = 8: five children of the 2 top-quarter parents (three pairs, the
    last pair's second child unused) take the places of the 5 least fit, as walked by hand;
    only the 3 best genomes' values survive."""
    optimizer = cosyne(
        3, seed=5, population_size=8, mutation_rate=0.0, marking=marking, offspring=5
    )
    population = optimizer.ask()
    fitness = np.array([0.3, -1.0, 2.5, 0.0, 1.7, -0.2, 0.9, -3.0])
    twin = np.random.Generator(np.random.PCG64())
    generator_load_state(twin, optimizer.state(), "generator")
    expected = walked_generation(population, fitness, twin, marking, offspring=5)
    optimizer.tell(Evaluations(fitness))
    asked = optimizer.ask()
    assert np.array_equal(asked, expected)
    survivors = population[[2, 4, 6]]  # fitness 2.5, 1.7, 0.9
    for gene in range(3):  # the three survivors' values are a permutation of the first rows
        assert sorted(asked[:3, gene]) == sorted(survivors[:, gene])


def test_offspring_must_leave_a_survivor() -> None:
    """l = m would replace every genome: refused in one line naming the field."""
    with pytest.raises(ConfigError, match="optimizer.offspring: must be below population_size"):
        OPTIMIZERS.parse_config(
            {"type": "COSYNE", "population_size": 8, "offspring": 8}, "optimizer"
        )


def test_offspring_genes_come_from_the_two_best_at_one_cut() -> None:
    """Without mutation each child is a prefix of one top-quarter parent and the suffix of the
    other: every one of its genes is that gene of the best or of the second best genome."""
    optimizer = cosyne(6, seed=2, population_size=8, mutation_rate=0.0)
    population = optimizer.ask()
    fitness = np.arange(8.0)
    optimizer.tell(Evaluations(fitness))
    best, second = population[7], population[6]
    for child in optimizer.ask()[6:]:
        from_best = child == best
        assert np.all(from_best | (child == second))
        assert np.count_nonzero(np.diff(from_best.astype(int))) == 1  # one cut


def test_mutation_moves_about_the_mutation_rate_of_offspring_genes() -> None:
    """With mutation_rate 0.3 about 30 % of offspring genes differ from both parents."""
    optimizer = cosyne(200, seed=3, population_size=40)
    population = optimizer.ask()
    optimizer.tell(Evaluations(np.arange(40.0)))
    children = optimizer.ask()[30:]
    parents = population[30:]  # the top quarter: the 10 highest fitness values
    moved = ~np.any(children[:, None, :] == parents[None, :, :], axis=1)
    assert abs(moved.mean() - 0.3) < 0.03
