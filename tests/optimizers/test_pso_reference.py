"""PSO against evosax's ``PSO`` (0.3.2) and Shi & Eberhart (1998), Eq. (1)-(2).

Compared, for one swarm told to both (evosax through its own ``init(population, fitness)``,
which seeds the personal bests, and ``tell``; fitness negated since evosax minimizes):

- the personal and global bests (deterministic): after the same second generation, the bests
  and their fitness are equal exactly (without ties: evosax replaces a best on a tie, the
  paper's "better" and ours keep it, which is checked on its own);
- the next positions: evosax draws one r1 and one r2 per particle from a JAX key inside
  ``ask``, so its draws are read back from the velocity it returns (two unknowns per particle,
  G equations, least squares with residual below 1e-12). Our Eq. (1) with those numbers in
  every gene (ours draws them per gene, as Kennedy & Eberhart's per-dimension rand())
  reproduces evosax's velocity and positions to 1e-12 (float64 rounding of a few
  multiply-adds).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from helpers import require
from population_reference import make, tell_population

from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.pso import velocity_update

require("evosax")  # the test-only reference (evosax, optax, jax)
import jax  # noqa: E402
from evosax import algorithms as algorithms  # noqa: E402

jnp = jax.numpy

P, G = 10, 5
W, C1, C2 = 0.75, 1.5, 2.0  # evosax's defaults


def swarm(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, (P, G)), rng.normal(size=P)


def both_after_two_generations() -> tuple:
    """evosax and ours told the same two generations, with the same velocity V at the second."""
    first, first_fitness = swarm(1)
    second, second_fitness = swarm(2)
    velocity = np.random.default_rng(3).normal(size=(P, G))
    es = algorithms.PSO(P, jnp.zeros(G))
    params = es.default_params
    state = es.init(jax.random.key(0), jnp.asarray(first), jnp.asarray(-first_fitness), params)
    state = state.replace(velocity=jnp.asarray(velocity))
    state, _ = es.tell(
        jax.random.key(1), jnp.asarray(second), jnp.asarray(-second_fitness), state, params
    )
    ours = make("PSO", G, population_size=P, inertia=W, cognitive=C1, social=C2)
    tell_population(ours, first, first_fitness)
    ours.ask()
    snapshot = dict(ours.state())
    snapshot["asked_genomes"], snapshot["pending_velocity"] = second, velocity
    ours.load_state(snapshot)
    ours.tell(Evaluations(second_fitness))
    return es, state, params, ours, (first_fitness, second_fitness)


def test_personal_bests_are_the_same_as_evosax() -> None:
    """After two generations each particle's best and its fitness equal evosax's."""
    _, state, _, ours, (first_fitness, second_fitness) = both_after_two_generations()
    improved = second_fitness > first_fitness
    assert 0 < improved.sum() < P  # both outcomes occur
    bests = ours.swarm()
    np.testing.assert_array_equal(bests["best"], np.asarray(state.population_best))
    np.testing.assert_array_equal(bests["best_fitness"], -np.asarray(state.fitness_best))


def test_a_tie_keeps_the_personal_best() -> None:
    """A position that only equals its best's fitness does not replace it."""
    first, fitness = swarm(1)
    ours = make("PSO", G, population_size=P)
    tell_population(ours, first, fitness)
    tell_population(ours, first + 1.0, fitness.copy())
    np.testing.assert_array_equal(ours.swarm()["best"], first)


def test_next_positions_follow_eq_1_and_2_from_evosax_draws() -> None:
    """Our Eq. (1)-(2) with evosax's read-back r1, r2 gives evosax's velocity and positions."""
    es, state, params, ours, _ = both_after_two_generations()
    theirs, after = es.ask(jax.random.key(2), state, params)
    theirs, new_velocity = np.asarray(theirs), np.asarray(after.velocity)
    swarm_now = ours.swarm()
    x, v, best = swarm_now["positions"], swarm_now["velocity"], swarm_now["best"]
    global_best = best[np.argmax(swarm_now["best_fitness"])]
    r1, r2 = np.empty((P, G)), np.empty((P, G))
    for i in range(P):
        columns = np.stack([C1 * (best[i] - x[i]), C2 * (global_best - x[i])], axis=1)
        (a, b), *_ = np.linalg.lstsq(columns, new_velocity[i] - W * v[i], rcond=None)
        assert np.abs(columns @ [a, b] - (new_velocity[i] - W * v[i])).max() < 1e-12
        assert -1e-9 <= a <= 1 + 1e-9 and -1e-9 <= b <= 1 + 1e-9, (i, a, b)  # uniforms
        r1[i], r2[i] = a, b
    config = ours.config
    velocity = velocity_update(v, x, best, global_best, r1, r2, config)
    np.testing.assert_allclose(velocity, new_velocity, rtol=0, atol=1e-12)
    np.testing.assert_allclose(x + velocity, theirs, rtol=0, atol=1e-12)


@pytest.fixture(autouse=True)
def float64_jax() -> Iterator[None]:
    """Each test compares with evosax in float64; JAX's global setting is restored after it, so
    the rest of the suite runs in JAX's default precision."""
    import jax

    with jax.enable_x64(True):
        yield
