"""GA against evosax's ``SimpleGA`` (0.3.2) and Such et al. (2017), Algorithm 1.

evosax's SimpleGA truncates at half the population, has no elitism and draws its parent
choices and mutations inside ``ask`` from a JAX key, so its random draws cannot be handed to
ours. Compared instead, for one population and its fitness told to both:

- the selection (deterministic): our T = P/2 parents, best first, equal evosax's best half of
  its state (sorted by its minimized fitness, the negation of ours), exactly (the same rows of
  the same array);
- the offspring: with a mutation power small against the spacing of the population, every
  offspring of either lies next to one of those parents (its parent), and our Algorithm-1
  formula P_k + sigma * eps, computed from evosax's parent choices k and normal numbers eps,
  gives evosax's offspring to 1e-12 (float64 rounding of one multiply-add);
- the elite (ours only; evosax has none): the best told genome is carried into the next ask
  bit for bit, and it is evosax's best-so-far.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from helpers import require
from population_reference import make, nearest_rows, tell_population

from neuro_evolution.optimizers.ga import mutated_offspring

require("evosax")  # the test-only reference (evosax, optax, jax)
import jax  # noqa: E402
import optax  # noqa: E402
from evosax import algorithms as algorithms  # noqa: E402

jnp = jax.numpy

P, G, SIGMA = 20, 4, 1e-4


def told_population() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.uniform(-3, 3, (P, G)), rng.normal(size=P)


def evosax_after_init(genomes: np.ndarray, fitness: np.ndarray) -> tuple[object, object, object]:
    strategy = algorithms.SimpleGA(P, jnp.zeros(G), std_schedule=optax.constant_schedule(SIGMA))
    params = strategy.default_params
    state = strategy.init(jax.random.key(0), jnp.asarray(genomes), jnp.asarray(-fitness), params)
    return strategy, state, params


def test_truncation_selects_the_same_parents_as_evosax() -> None:
    """The T = P/2 parents, best first, are evosax's best half of the same population."""
    genomes, fitness = told_population()
    strategy, state, _ = evosax_after_init(genomes, fitness)
    order = np.argsort(np.asarray(state.fitness))[: strategy.num_elites]
    expected = np.asarray(state.population)[order]
    ours = make("GA", G, population_size=P, truncation=P // 2, elites=0, sigma=SIGMA)
    tell_population(ours, genomes, fitness)
    parents, parent_fitness = ours.parents()
    np.testing.assert_array_equal(parents, expected)
    np.testing.assert_array_equal(parent_fitness, -np.asarray(state.fitness)[order])


def test_offspring_are_mutated_parents_as_in_evosax() -> None:
    """Each offspring of ours and of evosax sits next to a parent of the selected half, and
    P_k + sigma * eps from evosax's own k and eps reproduces evosax's offspring."""
    genomes, fitness = told_population()
    strategy, state, params = evosax_after_init(genomes, fitness)
    theirs = np.asarray(strategy.ask(jax.random.key(1), state, params)[0])
    ours = make("GA", G, population_size=P, truncation=P // 2, elites=0, sigma=SIGMA)
    tell_population(ours, genomes, fitness)
    parents, _ = ours.parents()
    mine = ours.ask()
    for offspring in (theirs, mine):
        choice = nearest_rows(offspring, genomes)
        assert set(choice) <= set(np.argsort(-fitness)[: P // 2])
        assert np.abs(offspring - genomes[choice]).max() < 10 * SIGMA
    choice = nearest_rows(theirs, parents)
    eps = (theirs - parents[choice]) / SIGMA
    np.testing.assert_allclose(
        mutated_offspring(parents, choice, eps, SIGMA), theirs, rtol=0, atol=1e-12
    )


def test_the_elite_is_carried_over_unchanged_and_is_the_best_so_far() -> None:
    """With elites 1 the next ask starts with the best told genome, bit for bit: evosax's
    best_solution for the same population."""
    genomes, fitness = told_population()
    _, state, _ = evosax_after_init(genomes, fitness)
    ours = make("GA", G, population_size=P, truncation=5, elites=1, sigma=SIGMA)
    tell_population(ours, genomes, fitness)
    asked = ours.ask()
    assert asked[0].tobytes() == genomes[np.argmax(fitness)].tobytes()
    np.testing.assert_array_equal(asked[0], np.asarray(state.best_solution))
    assert not (asked[1:] == asked[0]).all(axis=1).any()  # the offspring are mutated


@pytest.fixture(autouse=True)
def float64_jax() -> Iterator[None]:
    """Each test compares with evosax in float64; JAX's global setting is restored after it, so
    the rest of the suite runs in JAX's default precision."""
    import jax

    with jax.enable_x64(True):
        yield
