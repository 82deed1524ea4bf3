"""LM_MA_ES against evosax 0.3.2's ``LM_MA_ES`` (Loshchilov, Glasmachers & Beyer 2019,
Algorithm 1), in float64, at 40 genes (lambda = m = 15), where every rate of the paper is
below 1 and so uncapped.

Sampling (lines 5-8): evosax's state gets our direction vectors and generation count, asks, and
our transformation of its z must give its genomes. One tell (lines 10-13): evosax's state gets
our mean, sigma, path, directions and asked z, is told the asked genomes with the negated
fitness (evosax minimizes), and the new mean and directions must agree. Tolerance rtol 1e-10:
the same float64 arithmetic in another order moves results by a few ulps per term.

evosax deviates from the paper in two places, so those parts are checked against Algorithm 1
written out here: it adapts sigma with CMA-ES's cumulative step-size rule instead of line 14
(c_sigma = 2 lambda / n, sigma exp(c_sigma/2 (||p||^2 / n - 1))), and it pairs its rank-ordered
weights with the samples in population order in lines 12-13 (the population is told best first,
where both agree).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers import require

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.lm_ma_es import LmMaEs, transform

GENOME_SIZE = 40
RTOL = 1e-10


def warmed_up(generations: int) -> LmMaEs:
    """An optimizer after ``generations`` tells on a rotated ellipsoid, with a pending ask."""
    config = OPTIMIZERS.parse_config({"type": "LM_MA_ES", "sigma": 0.7}, "optimizer")
    optimizer = make_optimizer(config, GENOME_SIZE, 11)
    rotation = np.linalg.qr(np.random.default_rng(0).standard_normal((GENOME_SIZE,) * 2))[0]
    scales = 10.0 ** np.linspace(0, 2, GENOME_SIZE)
    for _ in range(generations):
        genomes = optimizer.ask()
        optimizer.tell(Evaluations(-np.sum((scales * (genomes @ rotation)) ** 2, axis=1)))
    optimizer.ask()
    assert isinstance(optimizer, LmMaEs)
    return optimizer


def evosax_strategy(ours: LmMaEs, state_fields: dict[str, Any]) -> tuple:
    """evosax's LM_MA_ES for our population size, its params (rates checked equal to ours) and
    a state holding ``state_fields``."""
    require("evosax")
    import jax
    import jax.numpy as jnp
    from evosax.algorithms import LM_MA_ES  # type: ignore[import-untyped]

    strategy = LM_MA_ES(ours.population_size, jnp.zeros(GENOME_SIZE))
    params = strategy.default_params
    assert strategy.m == ours.count
    assert np.allclose(np.asarray(params.c_d), ours.direction_rates, rtol=1e-15)
    assert np.allclose(np.asarray(params.c_c), ours.path_rates, rtol=1e-15)
    assert np.allclose(np.asarray(params.weights)[: ours.params.mu], ours.params.weights)
    state = strategy.init(jax.random.key(0), jnp.zeros(GENOME_SIZE), params)
    fields = {key: jnp.asarray(value) for key, value in state_fields.items()}
    return strategy, params, state.replace(**fields)


@pytest.mark.parametrize("generations", [5, 20])  # t below m (15) and past it
def test_sampling_matches_evosax_lm_ma_es(generations: int) -> None:
    """mean + sigma d(z) with our direction vectors applied min(t, m) times equals evosax's
    genomes for its z."""
    require("evosax")
    import jax  # noqa: E402

    ours = warmed_up(generations)
    strategy, params, state = evosax_strategy(
        ours,
        {
            "mean": ours.mean,
            "std": ours.sigma,
            "M": ours.directions,
            "generation_counter": generations,
        },
    )
    population, asked = strategy.ask(jax.random.key(2), state, params)
    count = min(generations, ours.count)
    d = transform(np.asarray(asked.z), ours.directions, ours.direction_rates, count)
    expected = ours.mean + ours.sigma * d
    assert np.allclose(np.asarray(population), expected, rtol=RTOL, atol=1e-13)


def test_one_tell_matches_evosax_and_algorithm_1() -> None:
    """Mean and direction vectors after one tell equal evosax's; the path p and sigma equal
    lines 11 and 14 of Algorithm 1."""
    require("evosax")
    import jax  # noqa: E402

    jnp = jax.numpy
    ours = warmed_up(20)
    genomes = ours.ask()
    fitness = -np.arange(len(genomes), dtype=np.float64)  # the asked order is best first
    before: dict[str, Any] = dict(ours.state())
    strategy, params, state = evosax_strategy(
        ours,
        {
            "mean": before["mean"],
            "std": before["sigma"],
            "p_std": before["s"],
            "M": before["directions"],
            "z": before["asked_z"],
            "generation_counter": 20,
        },
    )
    state, _ = strategy.tell(jax.random.key(1), jnp.asarray(genomes), -fitness, state, params)
    ours.tell(Evaluations(fitness))
    assert np.allclose(ours.mean, np.asarray(state.mean), rtol=RTOL, atol=1e-14)
    assert np.allclose(ours.directions, np.asarray(state.M), rtol=RTOL, atol=1e-14)

    p = ours.params
    n, lam = GENOME_SIZE, ours.population_size
    c_sigma = 2 * lam / n  # line 1
    z_w = p.weights @ np.asarray(before["asked_z"])[: p.mu]
    path = (1 - c_sigma) * before["s"] + np.sqrt(p.mueff * c_sigma * (2 - c_sigma)) * z_w
    sigma = float(before["sigma"]) * np.exp(c_sigma / 2 * (path @ path / n - 1))
    assert np.allclose(ours.s, path, rtol=RTOL, atol=1e-14)
    assert ours.sigma == pytest.approx(sigma, rel=RTOL)


def test_rates_are_capped_at_one_for_small_genomes() -> None:
    """Below n = 2 lambda, c_sigma = 2 lambda / n and c_c,1 = lambda / n would reach 1 or
    more (a path flipping sign, or an undefined square root past 2): they are capped at 1, and a
    five-gene run stays finite."""
    config = OPTIMIZERS.parse_config({"type": "LM_MA_ES"}, "optimizer")
    optimizer = make_optimizer(config, 5, 0)
    assert isinstance(optimizer, LmMaEs)
    assert optimizer.sigma_rate == 1.0 and optimizer.path_rates[0] == 1.0
    assert optimizer.path_rates[1] == pytest.approx(8 / (4 * 5))
    for _ in range(30):
        genomes = optimizer.ask()
        optimizer.tell(Evaluations(-np.sum(genomes**2, axis=1)))
    assert np.isfinite(optimizer.directions).all() and np.isfinite(optimizer.sigma)


@pytest.fixture(autouse=True)
def float64_jax() -> Iterator[None]:
    """Each test compares with evosax in float64; JAX's global setting is restored after it, so
    the rest of the suite runs in JAX's default precision."""
    import jax

    with jax.enable_x64(True):
        yield
