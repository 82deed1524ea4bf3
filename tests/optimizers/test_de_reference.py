"""DE against evosax's ``DifferentialEvolution`` (0.3.2) and Storn & Price (1997), Sec. 2.

Compared, for one population and its fitness told to both (evosax through its own
``init(population, fitness)`` and ``tell(population, fitness)``, fitness negated since it
minimizes):

- the greedy selection (deterministic): after the same trial vectors and their fitness, the
  kept population and fitness are equal exactly (without ties: on a tie evosax takes the trial,
  the paper and ours keep the target, which is checked on its own);
- the trial vectors: evosax draws its indices and crossover uniforms from a JAX key inside
  ``ask``, which cannot be handed to ours. Its draws are read back from its trials instead: the
  crossover mask is where a trial differs from its target, and the vectors (r1, r2, r3) are the
  ones whose Eq. (2) mutant matches the trial on that mask. Our Eq. (2)-(3) function, given
  those indices and that mask, reproduces evosax's trial to 1e-12 (float64 rounding of one
  multiply-add), and the indices obey the paper's rule (distinct, none the target). Our own
  trials are read back the same way and obey the same rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from helpers import require
from population_reference import make, tell_population

from neuro_evolution.optimizers.de import trial_vectors

require("evosax")  # the test-only reference (evosax, optax, jax)
import jax  # noqa: E402
from evosax import algorithms as algorithms  # noqa: E402

jnp = jax.numpy

P, G, F, CR = 8, 5, 0.7, 0.5
STRATEGIES = {"best/1/bin": True, "rand/1/bin": False}  # ours -> evosax's elitism


def told_population(seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, (P, G)), rng.normal(size=P)


def evosax_after_init(genomes: np.ndarray, fitness: np.ndarray, elitism: bool) -> tuple:
    strategy = algorithms.DifferentialEvolution(P, jnp.zeros(G))
    params = strategy.default_params.replace(
        elitism=elitism,
        crossover_rate=CR,
        differential_weight=F,
        differential_weight_min=F,
        differential_weight_max=F,
    )
    state = strategy.init(jax.random.key(0), jnp.asarray(genomes), jnp.asarray(-fitness), params)
    return strategy, state, params


def ours_after(genomes: np.ndarray, fitness: np.ndarray, strategy: str) -> object:
    optimizer = make(
        "DE",
        G,
        population_size=P,
        strategy=strategy,
        differential_weight=F,
        crossover_rate=CR,
    )
    tell_population(optimizer, genomes, fitness)
    return optimizer


def read_back(trials: np.ndarray, genomes: np.ndarray, fitness: np.ndarray, best: bool) -> list:
    """Per trial row i: (mask, base index, first, second) of the Eq. (2) mutant it matches."""
    found = []
    for i, trial in enumerate(trials):
        mask = trial != genomes[i]
        assert mask.any(), i  # rnbr(i): at least one gene from the mutant
        bases = [int(np.argmax(fitness))] if best else range(P)
        matches = [
            (a, b, c)
            for a in bases
            for b, c in itertools.permutations(range(P), 2)
            if np.allclose(
                (genomes[a] + F * (genomes[b] - genomes[c]))[mask], trial[mask], atol=1e-12
            )
        ]
        assert matches, i
        found.append((mask, *matches[0]))
    return found


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_greedy_selection_keeps_the_same_vectors_as_evosax(strategy: str) -> None:
    """After the same trials and fitness, the population and fitness equal evosax's."""
    genomes, fitness = told_population()
    trials, trial_fitness = told_population(4)
    es, state, params = evosax_after_init(genomes, fitness, STRATEGIES[strategy])
    state, _ = es.tell(
        jax.random.key(1), jnp.asarray(trials), jnp.asarray(-trial_fitness), state, params
    )
    ours = ours_after(genomes, fitness, strategy)
    tell_population(ours, trials, trial_fitness)
    population, kept_fitness = ours.population()
    replaced = trial_fitness > fitness
    assert 0 < replaced.sum() < P  # both outcomes occur
    np.testing.assert_array_equal(population, np.asarray(state.population))
    np.testing.assert_array_equal(kept_fitness, -np.asarray(state.fitness))


def test_a_tie_keeps_the_target() -> None:
    """Sec. 2.3: the trial replaces its target only when strictly better."""
    genomes, fitness = told_population()
    ours = ours_after(genomes, fitness, "rand/1/bin")
    trials = genomes + 1.0
    tell_population(ours, trials, fitness.copy())
    np.testing.assert_array_equal(ours.population()[0], genomes)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_trial_vectors_follow_eq_2_and_3_from_evosax_draws(strategy: str) -> None:
    """Our Eq. (2)-(3) from evosax's read-back indices and mask gives evosax's trials; both
    our and evosax's indices are distinct and never the target."""
    best = strategy == "best/1/bin"
    genomes, fitness = told_population()
    es, state, params = evosax_after_init(genomes, fitness, STRATEGIES[strategy])
    theirs = np.asarray(es.ask(jax.random.key(2), state, params)[0])
    for i, (mask, a, b, c) in enumerate(read_back(theirs, genomes, fitness, best)):
        assert b != i and c != i and (best or a not in (i, b, c)), (i, a, b, c)
        ours = trial_vectors(genomes[i], genomes[a], genomes[b], genomes[c], mask, F)
        np.testing.assert_allclose(ours, theirs[i], rtol=0, atol=1e-12)
    mine = ours_after(genomes, fitness, strategy).ask()
    for i, (_, a, b, c) in enumerate(read_back(mine, genomes, fitness, best)):
        assert b != i and c != i and (best or a not in (i, b, c)), (i, a, b, c)


@pytest.fixture(autouse=True)
def float64_jax() -> Iterator[None]:
    """Each test compares with evosax in float64; JAX's global setting is restored after it, so
    the rest of the suite runs in JAX's default precision."""
    import jax

    with jax.enable_x64(True):
        yield
