"""XNES against evosax 0.3.2's ``xNES`` and against the paper's update evaluated independently.

One population (our asked rows z_k, a symmetric non-diagonal B) and its fitness go to ours and
to evosax's ``tell``; the new mean and sigma agree to 1e-12 relative (float64 on both sides, the
sums in a different order). evosax multiplies B elementwise by exp(eta_B / 2 G_B) where the paper
(Wierstra et al. 2014, Algorithm 5) right-multiplies by the matrix exponential, so B is compared
with the paper's formula computed here with a Taylor-series ``expm`` (1e-12: two expm algorithms).
evosax minimizes, so it is told the negated fitness; its default shaping gives the same NES
utilities (best first, summing to 0) as ours.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from helpers import require

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.shaping import nes_utilities
from neuro_evolution.optimizers.xnes import Xnes, symmetric_expm

GENES = 6


def taylor_expm(matrix: np.ndarray, terms: int = 30) -> np.ndarray:
    """sum_n matrix^n / n! (for the small-norm matrices of one update)."""
    result, term = np.eye(len(matrix)), np.eye(len(matrix))
    for n in range(1, terms):
        term = term @ matrix / n
        result = result + term
    return result


def xnes(genome_size: int = GENES, seed: int = 0) -> Xnes:
    optimizer = make_optimizer(
        OPTIMIZERS.parse_config({"type": "XNES"}, "optimizer"), genome_size, seed
    )
    assert isinstance(optimizer, Xnes)
    return optimizer


def symmetric_shape(rng: np.random.Generator, genome_size: int) -> np.ndarray:
    """A symmetric positive definite B with det(B) = 1 (expm of a traceless symmetric matrix)."""
    raw = rng.standard_normal((genome_size, genome_size)) * 0.3
    sym = (raw + raw.T) / 2
    sym -= np.trace(sym) / genome_size * np.eye(genome_size)
    return symmetric_expm(sym)


def prepared(rng: np.random.Generator) -> Xnes:
    """An XNES with a random mean, sigma 0.7 and a symmetric non-diagonal B."""
    optimizer = xnes()
    state = dict(optimizer.state())
    state["center"] = rng.standard_normal(GENES)
    state["sigma"] = 0.7
    state["shape"] = symmetric_shape(rng, GENES)
    optimizer.load_state(state)
    return optimizer


def test_mean_and_sigma_match_evosax_xnes_on_one_population() -> None:
    """The same z, B and fitness give evosax's mean and sigma (1e-12 relative), and our asked
    genomes are evosax's mu + sigma z B for a symmetric B."""
    require("evosax")
    import jax
    import jax.numpy as jnp
    from evosax.algorithms import xNES

    rng = np.random.default_rng(11)
    ours = prepared(rng)
    mean, sigma, shape = ours.center(), ours.sigma, ours.shape.copy()
    genomes = ours.ask()
    noise = np.asarray(ours.state()["asked_noise"])
    fitness = rng.standard_normal(len(genomes))

    es = xNES(population_size=len(genomes), solution=jnp.zeros(GENES))
    params = es.default_params
    key = jax.random.key(0)
    state = es.init(key, jnp.asarray(mean), params)
    state = state.replace(std=jnp.asarray(sigma), B=jnp.asarray(shape), z=jnp.asarray(noise))
    np.testing.assert_allclose(genomes, mean + sigma * noise @ shape, rtol=1e-13)
    new_state, _ = es.tell(key, jnp.asarray(genomes), jnp.asarray(-fitness), state, params)

    ours.tell(Evaluations(fitness))
    np.testing.assert_allclose(ours.center(), np.asarray(new_state.mean), rtol=1e-12, atol=1e-14)
    assert ours.sigma == pytest.approx(float(new_state.std), rel=1e-12)
    assert not np.allclose(ours.shape, np.asarray(new_state.B))  # evosax's elementwise B


def test_shape_follows_the_papers_matrix_exponential_update() -> None:
    """B <- B expm(eta_B / 2 G_B) with G_B = sum_k u_k (z_k z_k^T - I) - G_sigma I, written out
    here with a Taylor-series expm (1e-12); det(B) stays 1."""
    rng = np.random.default_rng(12)
    ours = prepared(rng)
    shape = ours.shape.copy()
    ours.ask()
    z = np.asarray(ours.state()["asked_noise"])
    fitness = rng.standard_normal(len(z))
    u = nes_utilities(fitness)
    grad_m = sum(uk * (np.outer(zk, zk) - np.eye(GENES)) for uk, zk in zip(u, z))
    grad_b = grad_m - np.trace(grad_m) / GENES * np.eye(GENES)
    eta_b = 3 * (3 + np.log(GENES)) / (5 * GENES * np.sqrt(GENES))
    expected = shape @ taylor_expm(eta_b / 2 * grad_b)
    ours.tell(Evaluations(fitness))
    np.testing.assert_allclose(ours.shape, expected, rtol=1e-12, atol=1e-14)
    assert np.linalg.det(ours.shape) == pytest.approx(1.0, rel=1e-12)


def test_defaults_are_the_papers() -> None:
    """lambda = 4 + floor(3 ln d), eta_sigma = eta_B = 3 (3 + ln d) / (5 d sqrt d), as evosax's."""
    require("evosax")
    import jax.numpy as jnp
    from evosax.algorithms import xNES

    for d in (2, 10, 300):
        ours = xnes(d)
        assert ours.population_size == 4 + int(np.floor(3 * np.log(d)))
        params = xNES(population_size=ours.population_size, solution=jnp.zeros(d)).default_params
        assert ours._rates[1] == pytest.approx(float(params.lr_std_init), rel=1e-6)
        assert ours._rates[2] == pytest.approx(float(params.lr_B), rel=1e-6)


@pytest.fixture(autouse=True)
def float64_jax() -> Iterator[None]:
    """Each test compares with evosax in float64; JAX's global setting is restored after it, so
    the rest of the suite runs in JAX's default precision."""
    import jax

    with jax.enable_x64(True):
        yield
