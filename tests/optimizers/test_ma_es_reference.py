"""MA_ES against evosax 0.3.2's ``MA_ES`` (Beyer & Sendhoff 2017, Fig. 3), in float64.

One generation of ours (after a few generations, so M and s are not trivial) is handed to
evosax: its state gets our mean, sigma, s, M and the asked z, and it is told the asked genomes
with the negated fitness (evosax minimizes). The updated mean, sigma, s and M must agree to
rtol 1e-10: the same float64 arithmetic in another order ((M10) as M times a matrix there, as
rank-one and rank-mu products of M here), which moves results by a few ulps per term, far
below what a wrong weight, rate or sign would move.

evosax pairs its rank-ordered weights with the samples in population order in <z z^T>_w; ours
pairs them with the mu best (the paper). The population is therefore told best first, where
both agree; a separate check holds that ours does not depend on the order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers import require

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.cost import state_bytes
from neuro_evolution.optimizers.ma_es import MaEs

GENOME_SIZE = 6  # lambda 9 (odd: the weights' zero at rank 5), mu 4
RTOL = 1e-10


def warmed_up(name: str, genome_size: int, generations: int, **options: object) -> MaEs:
    """An optimizer after ``generations`` tells on a rotated ellipsoid, with a pending ask."""
    config = OPTIMIZERS.parse_config({"type": name, "sigma": 0.7, **options}, "optimizer")
    optimizer = make_optimizer(config, genome_size, 11)
    rotation = np.linalg.qr(np.random.default_rng(0).standard_normal((genome_size,) * 2))[0]
    scales = 10.0 ** np.linspace(0, 2, genome_size)
    for _ in range(generations):
        genomes = optimizer.ask()
        optimizer.tell(Evaluations(-np.sum((scales * (genomes @ rotation)) ** 2, axis=1)))
    optimizer.ask()
    assert isinstance(optimizer, MaEs)
    return optimizer


def test_one_tell_matches_evosax_ma_es() -> None:
    """Mean, sigma, the path s and M after one tell equal evosax's for the same population."""
    require("evosax")
    import jax
    import jax.numpy as jnp
    from evosax.algorithms import MA_ES  # type: ignore[import-untyped]

    ours = warmed_up("MA_ES", GENOME_SIZE, 4)
    genomes = ours.ask()
    fitness = -np.arange(len(genomes), dtype=np.float64)  # the asked order is best first
    before: dict[str, Any] = dict(ours.state())

    strategy = MA_ES(len(genomes), jnp.zeros(GENOME_SIZE))
    params = strategy.default_params
    assert np.allclose(np.asarray(params.weights)[: ours.params.mu], ours.params.weights)
    state = strategy.init(jax.random.key(0), jnp.asarray(before["mean"]), params)
    state = state.replace(
        std=jnp.asarray(before["sigma"]),
        p_std=jnp.asarray(before["s"]),
        M=jnp.asarray(before["M"]),
        z=jnp.asarray(before["asked_z"]),
    )
    state, _ = strategy.tell(jax.random.key(1), jnp.asarray(genomes), -fitness, state, params)
    ours.tell(Evaluations(fitness))

    assert np.allclose(ours.mean, np.asarray(state.mean), rtol=RTOL, atol=1e-14)
    assert np.allclose(ours.s, np.asarray(state.p_std), rtol=RTOL, atol=1e-14)
    assert np.allclose(ours.M, np.asarray(state.M), rtol=RTOL, atol=1e-14)
    assert ours.sigma == pytest.approx(float(state.std), rel=RTOL)


def test_the_update_follows_the_mu_best_whatever_their_order() -> None:
    """Telling the same genomes and fitness in another order gives the same update: (M8)-(M11)
    weight the mu best samples, not the first rows."""
    first, second = warmed_up("MA_ES", GENOME_SIZE, 4), warmed_up("MA_ES", GENOME_SIZE, 4)
    fitness = np.random.default_rng(3).standard_normal(first.population_size)
    order = np.random.default_rng(4).permutation(first.population_size)
    state: dict[str, Any] = dict(second.state())
    state["asked_z"], state["asked_d"] = state["asked_z"][order], state["asked_d"][order]
    second.load_state(state)
    first.tell(Evaluations(fitness))
    second.tell(Evaluations(fitness[order]))
    for a, b in [(first.mean, second.mean), (first.s, second.s), (first.M, second.M)]:
        assert np.allclose(a, b, rtol=1e-12, atol=1e-15)
    assert first.sigma == pytest.approx(second.sigma, rel=1e-12)


@pytest.mark.parametrize("name", ["MA_ES", "LM_MA_ES"])
def test_state_bytes_bounds_the_measured_peak(name: str) -> None:
    """The declared state_bytes is at least the traced peak of making the optimizer and running
    two generations at 1,500 genes, and at most 6 times it."""
    import tracemalloc

    config = OPTIMIZERS.parse_config({"type": name}, "optimizer")
    tracemalloc.start()
    try:
        optimizer = make_optimizer(config, 1_500, 0)
        hall_of_fame = HallOfFame(1, 1_500)
        for _ in range(2):
            genomes = optimizer.ask()
            optimizer.tell(Evaluations(-genomes[:, 0], hall_of_fame))
            del genomes
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    declared = state_bytes(config, 1_500)
    assert peak <= declared <= 6 * peak, (peak, declared)


@pytest.mark.parametrize("name", ["MA_ES", "LM_MA_ES"])
def test_restart_every_generations_starts_a_fresh_search(name: str) -> None:
    """After restart_every_generations tells the mean, sigma, path and transformation are the
    initial ones again (LM_MA_ES: no direction applied to the next samples), and the count of
    restarts grows."""
    section = {"type": name, "sigma": 0.3, "initial_centroid": 0.5, "restart_every_generations": 3}
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), 8, 1)
    fresh = dict(optimizer.state())
    for g in range(3):
        genomes = optimizer.ask()
        optimizer.tell(Evaluations(-np.sum((genomes - 2.0) ** 2, axis=1)))
        if g < 2:
            assert not np.array_equal(optimizer.state()["mean"], fresh["mean"])
    state = optimizer.state()
    assert state["restarts"] == 1 and state["restart_generation"] == 3
    for key in ("mean", "sigma", "s", "M" if name == "MA_ES" else "directions"):
        assert np.array_equal(state[key], fresh[key]), key
    genomes, asked = optimizer.ask(), dict(optimizer.state())
    assert np.array_equal(asked["asked_d"], asked["asked_z"])  # M = I, no direction applied
    assert np.allclose(genomes, 0.5 + 0.3 * asked["asked_z"], rtol=0, atol=1e-15)


@pytest.fixture(autouse=True)
def float64_jax() -> Iterator[None]:
    """Each test compares with evosax in float64; JAX's global setting is restored after it, so
    the rest of the suite runs in JAX's default precision."""
    import jax

    with jax.enable_x64(True):
        yield
