"""PGPE, OPENAI_ES and SNES against slow, obviously-correct references of their papers' equations.

Each reference below is written from the paper's formulas with explicit loops, independently of
the vectorised code; one tell of the real optimizer must land where the reference says.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers import OPTIMIZERS, Optimizer, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.gaussian import Adam, ClipUp
from neuro_evolution.optimizers.rng import (
    generator_load_state,
    generator_to_state,
    owned_generator,
)
from neuro_evolution.optimizers.shaping import centered_ranks, nes_utilities


def make(section: dict[str, Any], genome_size: int, seed: int = 0) -> Optimizer:
    return make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), genome_size, seed)


def norm(x: list[float]) -> float:
    return math.sqrt(sum(v * v for v in x))


# --- ClipUp and Adam: single steps against hand-written formulas ---------------------------


def test_clipup_step_is_momentum_on_the_unit_gradient_clipped_to_max_speed() -> None:
    """Toklu et al. 2020: v = m v + a g/|g|, then v scaled down to max_speed if longer."""
    clipup = ClipUp(2, step_size=0.5, momentum=0.9, max_speed=10.0)
    clipup.velocity = np.array([1.0, -2.0])
    step = clipup.step(np.array([3.0, 4.0]))  # unit gradient (0.6, 0.8)
    assert np.allclose(step, [0.9 * 1.0 + 0.5 * 0.6, 0.9 * -2.0 + 0.5 * 0.8], atol=1e-15)
    assert np.array_equal(clipup.velocity, step)

    clipup = ClipUp(2, step_size=0.5, momentum=0.9, max_speed=1.0)
    clipup.velocity = np.array([2.0, 0.0])
    step = clipup.step(np.array([0.0, -7.0]))  # v = (1.8, -0.5), |v| > 1: scaled to length 1
    length = norm([1.8, -0.5])
    assert np.allclose(step, [1.8 / length, -0.5 / length], atol=1e-15)

    still = ClipUp(2, step_size=0.5, momentum=0.5, max_speed=1.0)
    still.velocity = np.array([0.2, 0.0])
    assert np.allclose(still.step(np.zeros(2)), [0.1, 0.0])  # no direction: momentum only


def test_adam_steps_follow_kingma_and_ba_with_bias_correction() -> None:
    """Two ascent steps equal alpha * mhat / (sqrt(vhat) + eps_hat) of Kingma & Ba (2015),
    Algorithm 1, with eps_hat = eps / sqrt(1 - beta2^t) (the step-size-folded form, Sec. 2)."""
    alpha, b1, b2, eps = 0.1, 0.8, 0.9, 0.05
    adam = Adam(2, alpha, b1, b2, eps)
    m, v = [0.0, 0.0], [0.0, 0.0]
    for t, gradient in enumerate(([1.0, -2.0], [0.5, 3.0]), start=1):
        step = adam.step(np.array(gradient))
        expected = []
        for i, g in enumerate(gradient):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            m_hat, v_hat = m[i] / (1 - b1**t), v[i] / (1 - b2**t)
            expected.append(alpha * m_hat / (math.sqrt(v_hat) + eps / math.sqrt(1 - b2**t)))
        assert np.allclose(step, expected, rtol=1e-12, atol=0), t
    assert adam.t == 2


# --- PGPE -----------------------------------------------------------------------------------


def reference_pgpe(
    genomes: np.ndarray, fitness: np.ndarray, center: np.ndarray, stdev: np.ndarray
) -> tuple[list[float], list[float]]:
    """Sehnke et al. 2010, symmetric sampling, one gene at a time: pair n has samples
    center + eps_n and center - eps_n with rewards r+, r-; baseline b = mean reward."""
    baseline = sum(fitness) / len(fitness)
    pairs = len(genomes) // 2
    grad_mu, grad_sigma = [], []
    for i in range(len(center)):
        total_mu = total_sigma = 0.0
        for n in range(pairs):
            eps = genomes[2 * n, i] - center[i]
            assert math.isclose(genomes[2 * n + 1, i] - center[i], -eps, abs_tol=1e-12)
            r_plus, r_minus = fitness[2 * n], fitness[2 * n + 1]
            total_mu += eps * (r_plus - r_minus) / 2
            total_sigma += ((r_plus + r_minus) / 2 - baseline) * (eps**2 - stdev[i] ** 2) / stdev[i]
        grad_mu.append(total_mu / pairs)
        grad_sigma.append(total_sigma / pairs)
    return grad_mu, grad_sigma


PGPE_BASE = {"type": "PGPE", "population_size": 6, "stdev_init": 0.5, "center_init": 0.3}


@pytest.mark.parametrize("shaping", ["none", "centered_ranks"])
def test_pgpe_tell_moves_center_and_stdev_as_the_paper_equations_say(shaping: str) -> None:
    """One tell with Adam (beta1 = beta2 = 0: the step is alpha * g / (|g| + eps) per gene, so
    each gene's sign and size show) and a loose stdev bound equals the reference update."""
    section = {
        **PGPE_BASE,
        "center_update": "adam",
        "center_learning_rate": 0.2,
        "adam_beta1": 0.0,
        "adam_beta2": 0.0,
        "adam_epsilon": 0.01,
        "stdev_learning_rate": 0.05,
        "stdev_max_change": 0.99,
        "fitness_shaping": shaping,
    }
    optimizer = make(section, 3, seed=4)
    genomes = optimizer.ask()
    fitness = np.array([5.0, 1.0, -2.0, 4.0, 10.0, 7.0])  # mean 4.17: the baseline matters
    center, stdev = optimizer.center(), optimizer.state()["stdev"]
    shaped = centered_ranks(fitness) if shaping == "centered_ranks" else fitness
    grad_mu, grad_sigma = reference_pgpe(genomes, shaped, center, stdev)
    optimizer.tell(Evaluations(fitness, HallOfFame(1, 3)))

    expected_center = [c + 0.2 * g / (abs(g) + 0.01) for c, g in zip(center, grad_mu)]
    expected_stdev = [s + 0.05 * g for s, g in zip(stdev, grad_sigma)]
    assert np.allclose(optimizer.center(), expected_center, rtol=1e-12, atol=1e-14)
    assert np.allclose(optimizer.state()["stdev"], expected_stdev, rtol=1e-12, atol=1e-14)
    assert not np.allclose(expected_stdev, stdev)  # the stdev update was not a no-op


def test_pgpe_clipup_moves_the_center_along_the_gradient_by_max_speed_or_less() -> None:
    """With ClipUp the first center step is step_size * unit(grad_mu) (zero velocity)."""
    optimizer = make({**PGPE_BASE, "max_speed": 0.4, "fitness_shaping": "none"}, 3, seed=2)
    genomes = optimizer.ask()
    fitness = np.array([5.0, 1.0, -2.0, 4.0, 10.0, 7.0])
    center = optimizer.center()
    grad_mu, _ = reference_pgpe(genomes, fitness, center, optimizer.state()["stdev"])
    optimizer.tell(Evaluations(fitness, HallOfFame(1, 3)))
    expected = [c + 0.2 * g / norm(grad_mu) for c, g in zip(center, grad_mu)]  # step = 0.4 / 2
    assert np.allclose(optimizer.center(), expected, rtol=1e-12)


def test_pgpe_bounds_each_stdev_change_relative_to_its_old_value() -> None:
    """stdev_max_change 0.2: a huge stdev learning rate moves each stdev by exactly +-20%."""
    section = {**PGPE_BASE, "stdev_learning_rate": 1e6, "fitness_shaping": "none"}
    optimizer = make(section, 3, seed=1)
    genomes = optimizer.ask()
    fitness = np.array([5.0, 1.0, -2.0, 4.0, 10.0, 7.0])
    _, grad_sigma = reference_pgpe(genomes, fitness, optimizer.center(), np.full(3, 0.5))
    optimizer.tell(Evaluations(fitness, HallOfFame(1, 3)))
    expected = [0.5 * (1.2 if g > 0 else 0.8) for g in grad_sigma]
    assert np.allclose(optimizer.state()["stdev"], expected, rtol=1e-12)


def test_pgpe_stdev_decay_and_floor_apply_after_the_bounded_update() -> None:
    """stdev_decay multiplies the bounded update's result; stdev_min is a floor under both."""
    fitness = np.array([5.0, 1.0, -2.0, 4.0, 10.0, 7.0])
    plain = make({**PGPE_BASE, "fitness_shaping": "none"}, 3, seed=1)
    plain.ask()
    plain.tell(Evaluations(fitness, HallOfFame(1, 3)))
    decayed = make({**PGPE_BASE, "fitness_shaping": "none", "stdev_decay": 0.9}, 3, seed=1)
    decayed.ask()
    decayed.tell(Evaluations(fitness, HallOfFame(1, 3)))
    assert np.allclose(decayed.state()["stdev"], 0.9 * plain.state()["stdev"], rtol=1e-12)
    assert np.array_equal(decayed.center(), plain.center())

    floor = float(np.median(plain.state()["stdev"])) * 0.9
    floored = make(
        {**PGPE_BASE, "fitness_shaping": "none", "stdev_decay": 0.9, "stdev_min": floor}, 3, seed=1
    )
    floored.ask()
    floored.tell(Evaluations(fitness, HallOfFame(1, 3)))
    expected = np.maximum(0.9 * plain.state()["stdev"], floor)
    assert np.array_equal(floored.state()["stdev"], expected)
    assert (floored.state()["stdev"] == floor).any() and (floored.state()["stdev"] > floor).any()


def test_pgpe_asks_mirrored_pairs_around_the_center_with_the_initial_stdev() -> None:
    """Rows 2i and 2i+1 are center +- eps; radius_init r gives stdev r / sqrt(G) per gene."""
    optimizer = make({"type": "PGPE", "population_size": 4000, "radius_init": 2.0}, 4, seed=3)
    genomes = optimizer.ask()
    assert np.allclose(genomes[0::2] + genomes[1::2], 0.0, atol=1e-15)
    assert np.allclose(optimizer.state()["stdev"], 1.0)
    assert np.allclose(genomes.std(axis=0), 1.0, atol=0.05)


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ({"type": "PGPE", "stdev_init": 0.1, "population_size": 7}, "population_size"),
        ({"type": "PGPE", "stdev_init": 0.1, "radius_init": 3.0}, "stdev_init"),
        ({"type": "PGPE", "stdev_init": 0.1, "stdev_max_change": 1.0}, "stdev_max_change"),
        ({"type": "PGPE", "stdev_init": 0.1, "center_update": "sgd"}, "center_update"),
        ({"type": "PGPE", "stdev_init": 0.1, "stdev_decay": 1.5}, "stdev_decay"),
        ({"type": "PGPE", "stdev_init": 0.1, "stdev_min": -1}, "stdev_min"),
        ({"type": "PGPE", "stdev_init": 0.1, "momentum": 1.0}, "momentum"),
        ({"type": "OPENAI_ES", "population_size": 9}, "population_size"),
        ({"type": "OPENAI_ES", "sigma": 0}, "sigma"),
        ({"type": "OPENAI_ES", "weight_decay": -1}, "weight_decay"),
        ({"type": "OPENAI_ES", "adam_beta2": 1.0}, "adam_beta2"),
        ({"type": "SNES", "population_size": 1}, "population_size"),
        ({"type": "SNES", "stdev_learning_rate": 0}, "stdev_learning_rate"),
        ({"type": "SNES", "center_init": "ones"}, "center_init"),
    ],
)
def test_config_errors_name_the_field(section: dict[str, Any], field: str) -> None:
    """A bad option is one line starting with its field path (an odd population is refused,
    not rounded)."""
    with pytest.raises(ConfigError) as error:
        OPTIMIZERS.parse_config(section, "optimizer")
    message = str(error.value)
    assert message.startswith(f"optimizer.{field}:"), message
    assert "\n" not in message


def test_pgpe_step_size_defaults_to_half_the_max_speed() -> None:
    """Toklu et al. 2020 recommend ClipUp's step size = max_speed / 2."""
    config = OPTIMIZERS.parse_config({"type": "PGPE", "stdev_init": 1, "max_speed": 0.3}, "o")
    assert config.step_size() == 0.15


# --- OPENAI_ES ------------------------------------------------------------------------------


def test_openai_es_tell_is_adam_on_the_search_gradient_minus_weight_decay() -> None:
    """Salimans et al. 2017, Algorithm 1: g = 1/(n sigma) sum F_i eps_i, plus the L2 term
    -weight_decay * center; one Adam step (t = 1: alpha * m / (sqrt(v) + eps) with m, v from
    this g alone) moves each gene."""
    section = {
        "type": "OPENAI_ES",
        "population_size": 4,
        "sigma": 0.5,
        "center_init": 2.0,
        "weight_decay": 0.3,
        "learning_rate": 0.1,
        "adam_epsilon": 0.2,
        "fitness_shaping": "none",
    }
    optimizer = make(section, 3, seed=6)
    genomes = optimizer.ask()
    fitness = np.array([0.1, -0.2, 0.05, 0.0])
    optimizer.tell(Evaluations(fitness, HallOfFame(1, 3)))
    expected = []
    for i in range(3):
        g = sum(f * (x[i] - 2.0) / 0.5 for f, x in zip(fitness, genomes)) / (4 * 0.5)
        g -= 0.3 * 2.0
        m, v = 0.1 * g, 0.001 * g * g
        alpha_1 = 0.1 * math.sqrt(1 - 0.999) / (1 - 0.9)
        expected.append(2.0 + alpha_1 * m / (math.sqrt(v) + 0.2))
    assert np.allclose(optimizer.center(), expected, rtol=1e-12)


def test_openai_es_weight_decay_pulls_the_center_to_zero_when_fitness_is_flat() -> None:
    """With equal fitness everywhere the only force is the decay: every gene shrinks; without
    decay the center does not move."""
    for decay, moves in ((0.1, True), (0.0, False)):
        optimizer = make({"type": "OPENAI_ES", "center_init": 1.5, "weight_decay": decay}, 4)
        optimizer.ask()
        optimizer.tell(Evaluations(np.zeros(100), HallOfFame(1, 4)))
        center = optimizer.center()
        assert (np.all(center < 1.5) and np.all(center > 0)) if moves else np.all(center == 1.5)


# --- SNES -----------------------------------------------------------------------------------


def reference_snes(
    genomes: np.ndarray, fitness: np.ndarray, mu: np.ndarray, sigma: np.ndarray
) -> tuple[list[float], list[float]]:
    """Wierstra et al. 2014, Algorithm 6 with the Sec. 3.1 utilities, gene by gene."""
    count, size = genomes.shape
    ranked = sorted(range(count), key=lambda k: -fitness[k])  # best first (no ties here)
    raw = [max(0.0, math.log(count / 2 + 1) - math.log(k + 1)) for k in range(count)]
    utility = [r / sum(raw) - 1 / count for r in raw]
    eta_sigma = (3 + math.log(size)) / (5 * math.sqrt(size))
    new_mu, new_sigma = [], []
    for i in range(size):
        s = [(genomes[k, i] - mu[i]) / sigma[i] for k in ranked]
        grad_mu = sum(u * sk for u, sk in zip(utility, s))
        grad_sigma = sum(u * (sk * sk - 1) for u, sk in zip(utility, s))
        new_mu.append(mu[i] + 1.0 * sigma[i] * grad_mu)
        new_sigma.append(sigma[i] * math.exp(eta_sigma / 2 * grad_sigma))
    return new_mu, new_sigma


def test_snes_tell_follows_the_natural_gradient_equations() -> None:
    """One tell updates mean and stdev exactly as Algorithm 6 with the default rates."""
    optimizer = make({"type": "SNES", "stdev_init": 0.7, "center_init": -0.4}, 5, seed=8)
    genomes = optimizer.ask()
    assert len(genomes) == 4 + math.floor(3 * math.log(5))  # the default population: 8
    fitness = -np.sum((genomes - 1.0) ** 2, axis=1)
    mu, sigma = optimizer.center(), optimizer.state()["stdev"]
    new_mu, new_sigma = reference_snes(genomes, fitness, mu, sigma)
    optimizer.tell(Evaluations(fitness, HallOfFame(1, 5)))
    assert np.allclose(optimizer.center(), new_mu, rtol=1e-12)
    assert np.allclose(optimizer.state()["stdev"], new_sigma, rtol=1e-12)


def snes_run(section: dict[str, Any], generations: int, resume_at: int | None = None):
    """(center and stdev after each tell, final optimizer) of SNES on a shifted sphere; with
    ``resume_at`` the optimizer is rebuilt from its state() after that many tells."""
    optimizer, centers = make(section, 4, seed=3), []
    for generation in range(generations):
        if generation == resume_at:
            saved = optimizer.state()
            optimizer = make(section, 4, seed=99)
            optimizer.load_state(saved)
        genomes = optimizer.ask()
        optimizer.tell(Evaluations(-np.sum((genomes - 2.0) ** 2, axis=1), HallOfFame(1, 4)))
        centers.append(np.concatenate([optimizer.center(), optimizer.state()["stdev"]]))
    return centers, optimizer


def test_snes_restart_every_generations_starts_afresh_and_resumes_exactly() -> None:
    """With restart_every_generations: 3, tells 3 and 6 leave the initial center and stdev
    (the generator runs on, so the next search differs); before that the run equals one without
    restarts, and a run resumed from state() after tell 4 equals the straight run."""
    section = {"type": "SNES", "stdev_init": 0.5, "center_init": 0.25}
    restarting = {**section, "restart_every_generations": 3}
    plain, _ = snes_run(section, 7)
    straight, optimizer = snes_run(restarting, 7)
    for k in (0, 1):
        assert np.array_equal(straight[k], plain[k])
    for k in (2, 5):  # after tells 3 and 6
        assert np.array_equal(straight[k], [0.25] * 4 + [0.5] * 4)
    assert not np.array_equal(straight[3], plain[0])  # a new search, not a replay of the first
    assert optimizer.restarts == 2 and optimizer.state()["restart_generation"] == 6
    resumed, _ = snes_run(restarting, 7, resume_at=4)
    assert all(np.array_equal(a, b) for a, b in zip(resumed, straight))
    older = {k: v for k, v in optimizer.state().items() if not k.startswith("restart")}
    loaded = make(section, 4, seed=3)
    loaded.load_state(older)  # a checkpoint written before SNES had restarts
    assert loaded.restarts == 0 and np.array_equal(loaded.center(), optimizer.center())


def test_nes_utilities_favour_the_better_half_sum_to_zero_and_share_ties() -> None:
    """Utilities fall with rank, are equal (-1/lambda) for the worse half, sum to 0, and tied
    fitness values get the mean utility of their ranks."""
    utilities = nes_utilities(np.array([3.0, 9.0, 1.0, 5.0, 0.0, 2.0]))
    by_rank = utilities[[1, 3, 0, 5, 2, 4]]
    assert np.all(np.diff(by_rank[:4]) < 0) and np.allclose(by_rank[3:], -1 / 6)
    assert math.isclose(utilities.sum(), 0.0, abs_tol=1e-15)
    tied = nes_utilities(np.array([3.0, 9.0, 9.0, 1.0]))
    untied = nes_utilities(np.array([3.0, 9.0, 8.0, 1.0]))
    assert tied[1] == tied[2] == pytest.approx((untied[1] + untied[2]) / 2)


def test_generator_state_round_trips_with_a_buffered_32_bit_draw() -> None:
    """A PCG64 state saved as words (also mid-way through a buffered uint32 pair) and loaded
    into another generator continues with exactly the same draws."""
    source = owned_generator(5, 2)
    source.standard_normal(3)
    source.integers(0, 2**32, dtype=np.uint32)  # leaves half of a 64-bit output buffered
    saved = generator_to_state(source, "g")
    assert saved["g_has_uint32"] == 1
    target = owned_generator(6, 2)
    generator_load_state(target, saved, "g")
    for draw in ("uint32", "normal", "uint32"):
        if draw == "uint32":
            a = source.integers(0, 2**32, dtype=np.uint32, size=3)
            b = target.integers(0, 2**32, dtype=np.uint32, size=3)
        else:
            a, b = source.standard_normal(4), target.standard_normal(4)
        assert a.tobytes() == b.tobytes(), draw
