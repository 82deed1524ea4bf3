"""ARS against evosax 0.3.2's ``ARS`` set up as the paper's V1-t update.

evosax steps its mean with an optax optimizer and keeps half the directions; given
``optax.sgd(alpha)`` and ``elite_ratio = b / N`` its update is Mania et al.'s Algorithm 1,
line 7. evosax minimizes (fitness is negated: its min(f+, f-) is -max(r+, r-)) and lays out the
population as [theta + nu delta_1..N; theta - nu delta_1..N] where ours interleaves the pairs, so
the test reorders our asked genomes into its layout and hands them to its ``tell``. The BBOB
comparison with evosax is ``scripts/check_ars_bbob.py`` (minutes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers import require

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.ars import Ars, ars_step
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.bbob import Problem

require("evosax")  # the test-only reference
import jax  # noqa: E402
import optax  # noqa: E402
from evosax.algorithms import ARS as EvosaxArs  # noqa: E402

jnp = jax.numpy

GENES, DIRECTIONS, TOP_B, ALPHA, NU = 7, 8, 3, 0.05, 0.2


def ours(seed: int, population: int = 2 * DIRECTIONS, top_b: int = TOP_B) -> Ars:
    section = {
        "type": "ARS",
        "population_size": population,
        "top_b": top_b,
        "step_size": ALPHA,
        "noise": NU,
    }
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), GENES, seed)
    assert isinstance(optimizer, Ars)
    return optimizer


def reference(population: int, top_b: int, alpha: float, nu: float, genes: int = GENES) -> Any:
    es = EvosaxArs(
        population_size=population,
        solution=jnp.zeros(genes),
        optimizer=optax.sgd(alpha),
        std_schedule=optax.constant_schedule(nu),
    )
    es.elite_ratio = top_b / (population // 2)
    assert es.num_elites == top_b
    return es


def evosax_layout(genomes: np.ndarray) -> np.ndarray:
    """Our rows (+1, -1, +2, -2, ...) as evosax's (+1, +2, ..., -1, -2, ...)."""
    return np.concatenate([genomes[0::2], genomes[1::2]])


def test_one_update_matches_evosax_ars_with_the_papers_plain_step() -> None:
    """From a non-zero center, one generation's new center equals evosax's to 1e-12 (float64:
    the same sums in another order, a few ulps apart)."""
    optimizer = ours(seed=11)
    optimizer.load_state({**optimizer.state(), "center": np.linspace(-1.0, 2.0, GENES)})
    center = optimizer.center()
    genomes = optimizer.ask()
    fitness = -Problem.make("ellipsoid", GENES, 2)(genomes)
    optimizer.tell(Evaluations(fitness))

    es = reference(2 * DIRECTIONS, TOP_B, ALPHA, NU)
    params = es.default_params
    key = jax.random.key(0)
    state = es.init(key, jnp.asarray(center), params)
    population = jnp.asarray(evosax_layout(genomes))
    state, _ = es.tell(key, population, jnp.asarray(-evosax_layout(fitness)), state, params)
    np.testing.assert_allclose(optimizer.center(), np.asarray(state.mean), rtol=1e-12, atol=1e-12)


def test_the_step_keeps_the_b_directions_with_the_largest_max_return() -> None:
    """Hand-worked Algorithm 1, lines 6-7: directions ranked by max(r+, r-), the b best
    stepped with alpha / (b sigma_R) (r+ - r-) delta, sigma_R over those 2b returns."""
    directions = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    plus, minus = np.array([1.0, 0.0, 5.0]), np.array([3.0, 4.0, 0.0])
    # max(r+, r-) = 3, 4, 5: b = 2 keeps directions 2 and 1; used returns 5, 0, 0, 4.
    sigma_r = np.std([5.0, 0.0, 0.0, 4.0])
    expected = 0.1 / (2 * sigma_r) * (5.0 * np.array([1.0, 1.0]) - 4.0 * np.array([0.0, 1.0]))
    np.testing.assert_allclose(ars_step(directions, plus, minus, 2, 0.1), expected, rtol=1e-15)


def test_equal_returns_leave_the_center_where_it_is() -> None:
    """sigma_R = 0 (all 2b returns equal) makes every difference 0: the step is zero."""
    optimizer = ours(seed=1)
    genomes = optimizer.ask()
    optimizer.tell(Evaluations(np.full(len(genomes), 2.5)))
    assert np.array_equal(optimizer.center(), np.zeros(GENES))


@pytest.fixture(autouse=True)
def float64_jax() -> Iterator[None]:
    """Each test compares with evosax in float64; JAX's global setting is restored after it, so
    the rest of the suite runs in JAX's default precision."""
    import jax

    with jax.enable_x64(True):
        yield
