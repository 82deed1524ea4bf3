"""CR_FM_NES against evosax 0.3.2's ``CR_FM_NES`` on one population.

Our asked mirrored rows z_k (with D, v and the paths of a few generations) and their fitness go
to ours and to evosax's ``tell``. evosax clips its shaped weights at 0 where the paper (and the
authors' code) uses the rank weights w_k, which sum to 0. On mirrored samples sum_k z_k = 0 and
sum_k y_k = 0, so adding 1/lambda to every weight changes neither p_sigma nor the mean step:
evosax is told w_k + 1/lambda (all >= 0, its clip then a no-op) through an identity shaping.
evosax also computes mu_eff over its unclipped log weights (3.09 where the paper's
1 / sum_k (w_k + 1/lambda)^2 is 3.41 at lambda = 10), which changes c_sigma, c_c and c_1; it is
handed the paper's four values, and they are checked against their formulas here.

- Moving (|p_sigma| >= E|N(0, I)|), both use the distance weights: m, sigma, D, v, p_sigma and
  p_c agree to 1e-10 relative (float64; the natural gradient of D and v chains some thirty
  vector operations, summed in a different order).
- Not moving, evosax's weights stay w_k + 1/lambda where the paper's are w_k; m, p_sigma and
  p_c still agree (the shift cancels), and sigma is checked against the paper's
  sigma exp(eta / 2 sum_k w_k (|z_k|^2 - d) / d) written out here.
"""

from __future__ import annotations

from collections.abc import Iterator
from math import exp, log
from typing import Any

import numpy as np
import pytest
from helpers import require

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.cr_fm_nes import CrFmNes, CrFmNesParameters, inverse_h, scaled_steps
from neuro_evolution.optimizers.shaping import nes_utilities

GENES = 8


def cr_fm_nes(genome_size: int = GENES, seed: int = 0) -> CrFmNes:
    section = OPTIMIZERS.parse_config({"type": "CR_FM_NES", "stdev_init": 0.8}, "optimizer")
    optimizer = make_optimizer(section, genome_size, seed)
    assert isinstance(optimizer, CrFmNes)
    return optimizer


def warmed(p_sigma_scale: float | None) -> CrFmNes:
    """A CR_FM_NES after 4 generations on an ellipsoid (D, v, paths non-trivial), asked again;
    ``p_sigma_scale``: p_sigma set to that many E|N(0, I)| (None: as it is)."""
    optimizer = cr_fm_nes()
    scales = 10.0 ** np.linspace(0, 2, GENES)
    for _ in range(4):
        genomes = optimizer.ask()
        optimizer.tell(Evaluations(-np.sum((scales * (genomes - 1.0)) ** 2, axis=1)))
    if p_sigma_scale is not None:
        state = dict(optimizer.state())
        direction = np.linspace(-1.0, 1.0, GENES) + 0.3
        state["p_sigma"] = (
            direction / np.linalg.norm(direction) * p_sigma_scale * optimizer.params.chi_n
        )
        optimizer.load_state(state)
    optimizer.ask()
    return optimizer


def evosax_tell(ours: CrFmNes, fitness: np.ndarray) -> Any:
    """evosax's state after its tell of our pending population with the weights w_k + 1/lambda."""
    import jax
    import jax.numpy as jnp
    from evosax.algorithms import CR_FM_NES
    from evosax.core.fitness_shaping import identity_fitness_shaping_fn

    state = ours.state()
    z = np.asarray(state["asked_noise"])
    lam = len(z)
    es = CR_FM_NES(
        population_size=lam,
        solution=jnp.zeros(GENES),
        fitness_shaping_fn=identity_fitness_shaping_fn,
    )
    p = ours.params  # evosax's mu_eff (and the rates made from it) differ: module docstring
    params = es.default_params.replace(mu_eff=p.mu_eff, c_std=p.c_sigma, c_c=p.c_c, c1=p.c_1)
    key = jax.random.key(0)
    es_state = es.init(key, jnp.asarray(state["center"]), params)
    es_state = es_state.replace(
        std=jnp.asarray(ours.sigma),
        p_std=jnp.asarray(state["p_sigma"]),
        p_c=jnp.asarray(state["p_c"]),
        D=jnp.asarray(state["D"]),
        v=jnp.asarray(state["v"]),
        z=jnp.asarray(z),
        y=jnp.asarray(scaled_steps(z, np.asarray(state["v"]))),
    )
    population, _ = es.ask(key, es_state, params)  # not used: our rows are told
    del population
    weights = nes_utilities(fitness) + 1.0 / lam
    new_state, _ = es.tell(key, jnp.asarray(ours.ask()), jnp.asarray(weights), es_state, params)
    return new_state


def test_a_moving_update_matches_evosax_cr_fm_nes() -> None:
    """|p_sigma| >= E|N(0, I)|: m, sigma, D, v, p_sigma and p_c agree with evosax (1e-10)."""
    require("evosax")
    ours = warmed(p_sigma_scale=3.0)
    fitness = np.random.default_rng(21).standard_normal(ours.population_size)
    expected = evosax_tell(ours, fitness)
    ours.tell(Evaluations(fitness))
    assert np.linalg.norm(ours.p_sigma) >= ours.params.chi_n  # the moving branch ran
    for ours_value, name in [
        (ours.mean, "mean"),
        (ours.p_sigma, "p_std"),
        (ours.p_c, "p_c"),
        (ours.D, "D"),
        (ours.v, "v"),
    ]:
        np.testing.assert_allclose(
            ours_value, np.asarray(getattr(expected, name)), rtol=1e-10, err_msg=name
        )
    assert ours.sigma == pytest.approx(float(expected.std), rel=1e-10)


def test_a_stagnant_update_matches_evosax_where_they_agree_and_the_paper_for_sigma() -> None:
    """|p_sigma| < E|N(0, I)|: m, p_sigma, p_c agree with evosax (1e-10); sigma is the paper's
    update with the rank weights w_k and eta_stag or eta_conv."""
    require("evosax")
    ours = warmed(p_sigma_scale=0.0)
    z = np.asarray(ours.state()["asked_noise"])
    sigma = ours.sigma
    fitness = np.random.default_rng(22).standard_normal(ours.population_size)
    expected = evosax_tell(ours, fitness)
    ours.tell(Evaluations(fitness))
    p = ours.params
    norm = float(np.linalg.norm(ours.p_sigma))
    assert norm < p.chi_n  # the rank-weight branch ran
    for ours_value, name in [(ours.mean, "mean"), (ours.p_sigma, "p_std"), (ours.p_c, "p_c")]:
        np.testing.assert_allclose(
            ours_value, np.asarray(getattr(expected, name)), rtol=1e-10, err_msg=name
        )
    eta = p.eta_stag if norm >= 0.1 * p.chi_n else p.eta_conv
    grad = float(nes_utilities(fitness) @ (np.sum(z * z, axis=1) - GENES)) / GENES
    assert ours.sigma == pytest.approx(sigma * exp(eta / 2 * grad), rel=1e-12)


def test_strategy_parameters_match_evosax_and_the_paper() -> None:
    """mu_eff, c_sigma, c_c and c_1 = c_1^CMA (d - 5) / 6 by the paper's formulas; E|N(0, I)|,
    alpha_dist, eta_stag, eta_conv and eta_B as evosax computes them (d <= 2,000); h^-1 solves
    its equation."""
    require("evosax")
    import jax.numpy as jnp
    from evosax.algorithms import CR_FM_NES

    for d, lam in [(8, 10), (50, 16), (1000, 40)]:
        ours = CrFmNesParameters.for_genome(lam, d)
        theirs = CR_FM_NES(population_size=lam, solution=jnp.zeros(d)).default_params
        positive = np.maximum(0.0, log(lam / 2 + 1) - np.log(np.arange(1, lam + 1)))
        mu_eff = 1 / float(np.sum((positive / positive.sum()) ** 2))
        c1_cma = 2 / ((d + 1.3) ** 2 + mu_eff)
        pairs = {
            "mu_eff": (ours.mu_eff, mu_eff),
            "c_sigma": (ours.c_sigma, (mu_eff + 2) / (d + mu_eff + 5)),
            "c_c": (ours.c_c, (4 + mu_eff / d) / (d + 4 + 2 * mu_eff / d)),
            "c_1": (ours.c_1, c1_cma * (d - 5) / 6),
            "chi_n": (ours.chi_n, theirs.chi_n),
            "alpha_dist": (ours.alpha_dist, theirs.alpha_dist),
            "eta_stag": (ours.eta_stag, theirs.lr_stag_std),
            "eta_conv": (ours.eta_conv, theirs.lr_conv_std),
            "eta_b": (ours.eta_b, theirs.lr_B),
        }
        for name, (mine, reference) in pairs.items():
            assert mine == pytest.approx(float(reference), rel=1e-6), (d, name)
    for d in (8, 5000):  # evosax caps d at 2,000 here; the paper's equation has no cap
        a = inverse_h(d)
        assert (1 + a * a) * exp(a * a / 2) / 0.24 - 10 - d == pytest.approx(0.0, abs=1e-9)
    assert cr_fm_nes(3).population_size == 8  # 4 + floor(3 ln 3) = 7, rounded up to even
    assert cr_fm_nes(10).population_size == 4 + int(3 * log(10))  # 10, even already


def test_resample_redraws_a_mirrored_pair_together() -> None:
    """With bounds.method resample the pending rows stay mirrored pairs (row k + lambda/2 is
    -row k) and the asked genomes are exactly m + sigma D y of those rows, inside the bounds."""
    section = {"type": "CR_FM_NES", "bounds": {"low": -1.0, "high": 1.0, "method": "resample"}}
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), GENES, 3)
    assert isinstance(optimizer, CrFmNes)
    unbounded = cr_fm_nes(GENES, 3)
    genomes = optimizer.ask()
    z = np.asarray(optimizer.state()["asked_noise"])
    half = len(z) // 2
    assert (np.abs(unbounded.ask()) > 1.0).any()  # unbounded draws leave the box
    np.testing.assert_array_equal(z[half:], -z[:half])
    expected = optimizer.center() + optimizer.sigma * optimizer.D * scaled_steps(z, optimizer.v)
    np.testing.assert_array_equal(genomes, expected)
    assert np.abs(genomes).max() <= 1.0


@pytest.fixture(autouse=True)
def float64_jax() -> Iterator[None]:
    """Each test compares with evosax in float64; JAX's global setting is restored after it, so
    the rest of the suite runs in JAX's default precision."""
    import jax

    with jax.enable_x64(True):
        yield


def test_a_tell_that_leaves_the_finite_numbers_is_refused_and_changes_nothing() -> None:
    """|v| of about 3e150 (LunarLander's runs at population 200 passed 1e43): the asked genomes
    are finite, the update overflows; the tell raises FloatingPointError naming the fix, and
    the state is the one before it."""
    optimizer = warmed(None)
    state = dict(optimizer.state())
    state["v"] = np.full(GENES, 1e150)
    optimizer.load_state(state)
    genomes = optimizer.ask()
    assert np.all(np.isfinite(genomes))
    before = optimizer.state()
    with pytest.raises(FloatingPointError, match="diverged at generation 4.*population_size"):
        optimizer.tell(Evaluations(-np.arange(len(genomes), dtype=np.float64)))
    after = optimizer.state()
    assert after.keys() == before.keys()
    for key, value in before.items():
        assert np.array_equal(np.asarray(after[key]), np.asarray(value)), key
