"""The double-pole envs: equations against a plain reference, vector env against single env,
the damping fitness, the generalization grid, handler identity and exact resume."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import without_time

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.envs import double_pole_physics as physics
from neuro_evolution.envs.double_pole import DoublePoleEnv
from neuro_evolution.envs.double_pole_task import damping_fitness
from neuro_evolution.envs.double_pole_vector import DoublePoleVectorEnv
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.support.atomic import load_npz
from neuro_evolution.support.seeds import TRAINING_SEED_LIMIT

NON_MARKOV = "neuro_evolution.envs:neuro_evolution/DoublePoleNonMarkov-v0"
MARKOV = "neuro_evolution.envs:neuro_evolution/DoublePole-v0"


# --- a reference written from Gomez et al. (2008), Appendix A, in plain Python ----------------


def reference_rates(s: list[float], force: float) -> list[float]:
    """x'' and theta_i'' of Appendix A, g = -9.8, mu_c = 0.0005, mu_p = 0.000002."""
    g, mu_c, mu_p, cart = -9.8, 0.0005, 0.000002, 1.0
    masses, lengths = (0.1, 0.01), (0.5, 0.05)  # lengths: half-lengths h_i
    angles, speeds = (s[2], s[4]), (s[3], s[5])
    sgn = (s[1] > 0) - (s[1] < 0)
    pole_force = sum(
        m * h * w * w * math.sin(a)
        + 0.75 * m * math.cos(a) * (mu_p * w / (m * h) + g * math.sin(a))
        for m, h, a, w in zip(masses, lengths, angles, speeds, strict=True)
    )
    pole_mass = sum(m * (1 - 0.75 * math.cos(a) ** 2) for m, a in zip(masses, angles, strict=True))
    x_acc = (force - mu_c * sgn + pole_force) / (cart + pole_mass)
    theta_acc = [
        -3 / (4 * h) * (x_acc * math.cos(a) + g * math.sin(a) + mu_p * w / (m * h))
        for m, h, a, w in zip(masses, lengths, angles, speeds, strict=True)
    ]
    return [s[1], x_acc, s[3], theta_acc[0], s[5], theta_acc[1]]


def reference_action(s: list[float], action: float) -> list[float]:
    """Two RK4 steps of h = 0.01 s with the force held (|F| >= 10/256 N)."""
    force = 10 * max(-1.0, min(1.0, action))
    if abs(force) < 10 / 256:
        force = -10 / 256 if force < 0 else 10 / 256
    h = 0.01
    for _ in range(2):
        k1 = reference_rates(s, force)
        k2 = reference_rates([a + h / 2 * b for a, b in zip(s, k1, strict=True)], force)
        k3 = reference_rates([a + h / 2 * b for a, b in zip(s, k2, strict=True)], force)
        k4 = reference_rates([a + h * b for a, b in zip(s, k3, strict=True)], force)
        s = [a + h / 6 * (p + 2 * q + 2 * r + t) for a, p, q, r, t in zip(s, k1, k2, k3, k4)]
    return s


def balancing_gains() -> np.ndarray:
    """Action = -gains @ state: a discrete LQR of the linearised env (cart friction left out
    of the linearisation: sgn has no derivative at 0). It balances the standard start for 1000
    steps and most, not all, generalization states: long episodes to test with."""

    def step(state: np.ndarray, force: float) -> np.ndarray:
        return np.array(physics.advance_one(state.tolist(), force))

    saved, physics.CART_FRICTION = physics.CART_FRICTION, 0.0
    try:
        eps, zero = 1e-6, np.zeros(6)
        a = np.stack([(step(eps * np.eye(6)[j], 0.0) - step(zero, 0.0)) / eps for j in range(6)], 1)
        b = ((step(zero, eps) - step(zero, 0.0)) / eps)[:, None]
    finally:
        physics.CART_FRICTION = saved
    q, r, p = np.diag([1.0, 1.0, 100.0, 1.0, 100.0, 1.0]), np.array([[0.01]]), np.eye(6)
    for _ in range(3000):
        k = np.linalg.solve(r + b.T @ p @ b, b.T @ p @ a)
        p = q + a.T @ p @ (a - b @ k)
    return k[0] / physics.FORCE_MAGNITUDE


GAINS = balancing_gains()


def controller(state: np.ndarray) -> float:
    return float(-GAINS @ state)


def run_episode(env: DoublePoleEnv, seed: int, policy=controller) -> tuple[float, int, list]:
    """(return, steps, states after every step) of one episode under ``policy``(full state)."""
    env.reset(seed=seed)
    total, states = 0.0, []
    while True:
        _, reward, terminated, truncated, _ = env.step(np.array([policy(env.state)]))
        total += reward
        states.append(env.state)
        if terminated or truncated:
            return total, len(states), states


# --- physics --------------------------------------------------------------------------------


def test_one_action_matches_the_plain_reference_over_1000_steps_of_varied_states():
    """From every state of a 1000-step trajectory (random actions, poles falling and spinning
    past the failure angle: the equations everywhere), one action agrees with the reference."""
    rng = np.random.default_rng(5)
    state = [0.1, -0.2, math.radians(4.0), 0.3, -0.01, 0.5]
    for _ in range(1000):
        action = float(rng.uniform(-1.2, 1.2))
        expected = reference_action(state, action)
        force = physics.action_force(np.array([action]), physics.MIN_FORCE)
        state = physics.advance(np.array(state)[:, None], force)[:, 0].tolist()
        np.testing.assert_allclose(state, expected, rtol=1e-12, atol=1e-12)
    assert max(abs(state[2]), abs(state[4])) > physics.FAILURE_ANGLE  # the poles did fall


def test_every_step_of_a_balanced_1000_step_episode_matches_the_reference():
    """The env, stepped as an env under a balancing controller: each step agrees with the
    reference from the step before to 1e-12. (A free run of the two would not: sgn(x') of the
    cart friction flips on rounding-sized differences whenever the cart turns round.)"""
    env = DoublePoleEnv(markov=True, fitness="standard", max_steps=1000)
    env.reset(seed=0)
    for _ in range(1000):
        before, action = env.state.tolist(), controller(env.state)
        _, reward, terminated, truncated, _ = env.step(np.array([action]))
        np.testing.assert_allclose(env.state, reference_action(before, action), 0, 1e-12)
        assert reward == 1.0 and not terminated
    assert truncated


def test_failure_bounds_and_minimum_force():
    assert physics.failed(np.array([[2.41], [0], [0], [0], [0], [0]]))[0]
    assert physics.failed(np.array([[0], [0], [0], [0], [math.radians(36.01)], [0]]))[0]
    assert not physics.failed(np.array([[2.4], [9], [math.radians(35.9)], [9], [0], [9]]))[0]
    forces = physics.action_force(np.array([0.0, -0.0001, 0.002, 0.5, 3.0]), 10 / 256)
    assert forces.tolist() == [10 / 256, -10 / 256, 10 / 256, 5.0, 10.0]


# --- the task: damping fitness, generalization grid -----------------------------------------


def test_damping_fitness_is_gruaus_formula_over_the_last_100_balanced_states():
    """Balanced 1000 steps: 0.1 * 1 + 0.9 * 0.75 / sum of |x|+|x'|+|theta1|+|theta1'| over the
    states after steps 901..1000, paid at the last step; all earlier rewards are 0."""
    env = DoublePoleEnv(markov=False)  # observes positions only; the policy reads env.state
    env.reset(seed=123)
    rewards, states = [], []
    while True:
        _, reward, terminated, truncated, _ = env.step(np.array([controller(env.state)]))
        rewards.append(reward)
        states.append(env.state)
        if terminated or truncated:
            break
    assert len(rewards) == 1000 and truncated and not terminated
    jiggle = sum(abs(s[0]) + abs(s[1]) + abs(s[2]) + abs(s[3]) for s in states[-100:])
    assert rewards[:-1] == [0.0] * 999
    assert rewards[-1] == pytest.approx(0.1 + 0.9 * 0.75 / jiggle, rel=1e-12)


def test_damping_fitness_of_a_short_episode_is_its_balanced_fraction_only():
    """Fewer than 100 balanced steps: f2 = 0, so the return is 0.1 * t / 1000, t the steps
    balanced (the failing step is not one)."""
    env = DoublePoleEnv(markov=False)
    clock = iter(range(10**6))

    def balance_then_push(state: np.ndarray) -> float:  # balances 80 steps, then fails
        return controller(state) if next(clock) < 80 else 1.0

    total, steps, _ = run_episode(env, seed=1, policy=balance_then_push)
    assert 80 < steps < 100
    assert total == pytest.approx(0.1 * (steps - 1) / 1000, rel=1e-12)


def test_seeds_below_2_32_start_from_the_standard_state():
    env = DoublePoleEnv(markov=True)
    for seed in (0, 7, TRAINING_SEED_LIMIT - 1, None):
        observation, _ = env.reset(seed=seed)
        assert observation.tolist() == [0.0, 0.0, math.radians(4.0), 0.0, 0.0, 0.0]


def test_random_training_starts_come_from_the_seed_within_the_generalization_ranges():
    """training_starts="random": each training seed its own start, the same on every reset with
    that seed, uniform within +-2.16 m, +-1.35 m/s, +-3.6 deg, +-8.6 deg/s; validation seeds still
    run the grid; a bad value is refused."""
    env = DoublePoleEnv(markov=True, training_starts="random")
    starts = np.array([env.reset(seed=seed)[0] for seed in range(400)])
    again = np.array([env.reset(seed=seed)[0] for seed in range(400)])
    assert starts.tobytes() == again.tobytes()
    assert len({row.tobytes() for row in starts}) == 400
    half = np.array([2.16, 1.35, math.radians(3.6), math.radians(8.6)])
    assert (np.abs(starts[:, :4]) <= half).all() and (starts[:, 4:] == 0.0).all()
    assert (starts[:, :4].max(axis=0) > 0.9 * half).all()
    assert (starts[:, :4].min(axis=0) < -0.9 * half).all()
    standard = DoublePoleEnv(markov=True)
    first = TRAINING_SEED_LIMIT + 42
    assert env.reset(seed=first)[0].tobytes() == standard.reset(seed=first)[0].tobytes()
    with pytest.raises(ValueError, match="training_starts"):
        DoublePoleEnv(training_starts="grid")


def test_625_consecutive_validation_seeds_visit_every_grid_state_once():
    """x, x', theta1, theta1' at 0.05, 0.25, 0.5, 0.75, 0.95 of +-2.16 m, +-1.35 m/s,
    +-3.6 deg, +-8.6 deg/s; the short pole upright and still."""
    env = DoublePoleEnv(markov=True)
    first = TRAINING_SEED_LIMIT + 987_654
    starts = {tuple(env.reset(seed=first + k)[0].round(12)) for k in range(625)}
    fractions = (0.05, 0.25, 0.5, 0.75, 0.95)
    grid = {
        tuple(round(v, 12) for v in (
            f0 * 4.32 - 2.16, f1 * 2.7 - 1.35,
            math.radians(f2 * 7.2 - 3.6), math.radians(f3 * 17.2 - 8.6), 0.0, 0.0))
        for f0 in fractions for f1 in fractions for f2 in fractions for f3 in fractions
    }  # fmt: skip
    assert starts == grid


def test_a_generalization_episode_returns_one_if_balanced_for_1000_steps_else_zero():
    """The returns of the 625 validation episodes are 0/1, their sum the states balanced."""
    env = DoublePoleEnv(markov=True)
    first = TRAINING_SEED_LIMIT + 11
    results = [run_episode(env, first + k)[:2] for k in range(0, 625, 25)]
    assert {total for total, _ in results} == {0.0, 1.0}
    for total, steps in results:
        assert (total == 1.0) == (steps == 1000)


def failing_next(state: np.ndarray) -> np.ndarray:
    """A state from which the next step fails: the cart at the track's edge, moving out."""
    state = state.copy()
    state[0], state[1] = 2.399, 3.0
    return state


def balance_then_fail_at(env: DoublePoleEnv, seed: int, last_step: int) -> tuple[list, bool]:
    """Rewards of an episode balanced by the controller for ``last_step - 1`` steps that fails
    on step ``last_step`` (the state is moved to the track's edge just before it)."""
    env.reset(seed=seed)
    rewards, terminated = [], False
    for step in range(1, last_step + 1):
        if step == last_step:
            env.carts.state[:, 0] = failing_next(env.state)
        _, reward, terminated, truncated, _ = env.step(np.array([controller(env.state)]))
        rewards.append(reward)
        if terminated or truncated:
            break
    return rewards, terminated


def test_a_cart_that_falls_at_step_1000_fails_the_generalization_test():
    """Gruau et al. 1996 (and Gomez et al. 2008, Sec. 5.5.2): a start state counts as solved
    only when the poles stay *balanced* for 1000 steps. An episode that runs 1000 steps but falls
    on the 1000th has 999 balanced steps: it returns 0, the same state balanced throughout 1."""
    env = DoublePoleEnv(markov=True)
    seed = TRAINING_SEED_LIMIT + 312  # a grid state the controller balances
    assert run_episode(env, seed)[:2] == (1.0, 1000)
    rewards, terminated = balance_then_fail_at(env, seed, 1000)
    assert len(rewards) == 1000 and terminated and int(env.carts.balanced[0]) == 999
    assert sum(rewards) == 0.0
    vector = DoublePoleVectorEnv(num_envs=2, markov=True)  # the lockstep path: same rule
    vector.reset(seed=[seed, seed])
    total = np.zeros(2)
    for step in range(1, 1001):
        if step == 1000:
            vector.carts.state[:, 1] = failing_next(vector.carts.state[:, 1])
        state = vector.carts.state.T
        _, reward, terminated, truncated, _ = vector.step(-(state @ GAINS))
        total += reward
    assert total.tolist() == [1.0, 0.0] and terminated.tolist() == [False, True]


def test_damping_fitness_pays_f2_from_exactly_100_balanced_steps():
    """Gruau, Whitley & Pyeatt 1996 (as given by Gomez et al. 2008, Sec. 5.5.2): f2 = 0 for
    t < 100, else 0.75 / (the sum over the last 100 balanced states). So t = 100 already pays f2,
    t = 99 does not."""
    assert damping_fitness(99, 4.0, 1000) == 0.1 * 99 / 1000
    assert damping_fitness(100, 4.0, 1000) == 0.1 * 100 / 1000 + 0.9 * 0.75 / 4.0
    env = DoublePoleEnv(markov=False)
    for last_step, pays_f2 in ((101, True), (100, False)):
        rewards, terminated = balance_then_fail_at(env, 5, last_step)
        assert terminated and len(rewards) == last_step
        balanced = last_step - 1
        f1 = 0.1 * balanced / 1000
        if pays_f2:
            assert rewards[-1] > f1 + 0.9 * 0.75 / 1000  # f2 paid (a jiggle far below 1000)
        else:
            assert rewards[-1] == pytest.approx(f1, rel=1e-12)


def test_the_long_test_returns_the_balanced_fraction_of_its_steps():
    env = DoublePoleEnv(markov=True, validation="long", long_steps=1500)
    assert run_episode(env, TRAINING_SEED_LIMIT + 3)[:2] == (1.0, 1500)
    total, steps, _ = run_episode(env, TRAINING_SEED_LIMIT + 3, policy=lambda state: -1.0)
    assert total == (steps - 1) / 1500


# --- the native vector env ------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"markov": False},
        {"markov": True, "fitness": "standard", "validation": "long"},
        {"markov": False, "training_starts": "random"},
    ],
    ids=["non-markov-damping", "markov-standard-long", "non-markov-random-starts"],
)
def test_vector_env_matches_single_envs_bit_for_bit(options):
    """64 copies (training and validation seeds), each step's observations, rewards and flags
    equal the single env's given the same actions: balancing ones with noise, so episodes end
    at every length up to 1000 steps."""
    seeds = [*range(32), *(TRAINING_SEED_LIMIT + 5 * k for k in range(32))]
    options = {**options, "long_steps": 1000}
    vector = DoublePoleVectorEnv(num_envs=len(seeds), **options)
    singles = [DoublePoleEnv(**options) for _ in seeds]
    observations, _ = vector.reset(seed=seeds)
    for env, seed, observation in zip(singles, seeds, observations, strict=True):
        assert env.reset(seed=seed)[0].tobytes() == observation.tobytes()
    noise = np.random.default_rng(3).normal(0, 1, (1000, len(seeds))) * np.linspace(0, 3, 64)
    running = np.ones(len(seeds), dtype=bool)
    for t in range(1000):
        actions = np.array([controller(env.state) for env in singles]) + noise[t]
        observations, rewards, terminated, truncated, _ = vector.step(actions[:, None])
        for i in np.flatnonzero(running):
            observation, reward, term, trunc, _ = singles[i].step(actions[i : i + 1])
            assert observation.tobytes() == observations[i].tobytes()
            assert (reward, term, trunc) == (rewards[i], terminated[i], truncated[i])
        assert not rewards[~running].any() and not terminated[~running].any()
        running &= ~(terminated | truncated)
    assert not running.any()


# --- through the handlers: identity and exact resume ----------------------------------------

EXPERIMENT: dict[str, Any] = {
    "environment": {"id": NON_MARKOV},
    "random_seed": 3,
    "number_generations": 2,
    "optimizer": {"type": "CMA_ES", "population_size": 10, "sigma": 1.0},
    "brain": {"type": "CTRNN", "number_neurons": 3, "delta_t": 1.0},
    "episode_runner": {"number_fitness_runs": 1},
    "validation": {"every_generations": 1, "episodes": 625, "target": 0.32},
}


def test_sequential_mp_and_native_vectorized_runs_give_identical_logs():
    """A short non-Markov run, 625-episode generalization validation included, is the same on
    the sequential, mp (forkserver) and vectorized handler, the latter on the native vector env."""
    config = parse_config(EXPERIMENT)
    logs = []
    vectorized = VectorizedHandler(mode="native")
    for handler in (None, MultiprocessingHandler(workers=2, start_method="forkserver"), vectorized):
        experiment = Experiment(config, handler=handler, quiet=True)
        experiment.run()
        logs.append(without_time(experiment.log))
        if handler is vectorized:
            assert "native vector env" in vectorized.describe()
        if handler is not None:
            handler.close()
    assert logs[0] == logs[1] == logs[2]
    assert logs[0][-1]["validation_mean"] is not None


def test_a_resumed_double_pole_run_ends_identical(tmp_path: Path):
    """Two generations, then resumed to four, equal four straight (checkpoints every one)."""
    data = {**EXPERIMENT, "number_generations": 4, "checkpoint": {"every_generations": 1}}
    data["validation"] = {"every_generations": 2, "episodes": 25}
    path = tmp_path / "double_pole.json"
    path.write_text(json.dumps(data))
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert train.main([str(path), "--out", str(straight), "--quiet"]) == 0
    assert train.main([str(path), "--out", str(resumed), "--generations", "2", "--quiet"]) == 0
    assert train.main(["--resume", str(resumed), "--generations", "4", "--quiet"]) == 0
    logs = [without_time(read_log(run / "log.csv")) for run in (resumed, straight)]
    assert logs[0] == logs[1] and len(logs[0]) == 4
    fame = [load_npz(run / "hall_of_fame.npz") for run in (resumed, straight)]
    assert fame[0].keys() == fame[1].keys()
    for key in fame[1]:
        assert np.asarray(fame[0][key]).tobytes() == np.asarray(fame[1][key]).tobytes()


def test_both_ids_are_registered_with_their_vector_env():
    for env_id in (MARKOV, NON_MARKOV):
        vector = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
        assert isinstance(vector.unwrapped, DoublePoleVectorEnv)
        assert gym.make(env_id).unwrapped.task == vector.unwrapped.task
