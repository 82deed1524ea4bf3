"""No env history in results: an episode depends on its seed, never on the episodes before it.

Audited for the env of every shipped config, as ``environment.make()`` builds it (wrappers
included): the same seed and actions give the same episode in a fresh env and in one that
already ran other episodes, bit for bit.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import environment_extras, require, without_time

from neuro_evolution.config.tree import load_config, parse_config
from neuro_evolution.evaluation.environment import EnvironmentConfig
from neuro_evolution.evaluation.history import FreshBox2DWorld
from neuro_evolution.run.experiment import Experiment

CONFIGS = sorted((Path(__file__).resolve().parent.parent / "configs").glob("*.json"))
GYMNASIUM_CONFIGS = [
    path
    for path in CONFIGS
    if json.loads(path.read_text())["environment"].get("backend", "gymnasium") == "gymnasium"
]


def actions(space, seed: int):
    """An endless seeded action sequence: uniform for discrete spaces, gentle (30% of the range
    around the centre) for boxes, so walkers stand and lean long enough for contacts to matter."""
    rng = np.random.default_rng(seed)
    while True:
        if isinstance(space, gym.spaces.Discrete):
            yield int(space.start + rng.integers(space.n))
        else:
            centre, half = (space.high + space.low) / 2, (space.high - space.low) / 2
            yield (centre + 0.3 * half * rng.uniform(-1, 1, space.shape)).astype(space.dtype)


def play(env, seed: int, action_seed: int, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and rewards of one episode: reset with ``seed``, then ``actions`` seeded
    with ``action_seed``, for up to ``steps`` steps."""
    observation, _ = env.reset(seed=seed)
    observations, rewards = [np.asarray(observation, dtype=np.float64)], []
    for _, action in zip(range(steps), actions(env.action_space, action_seed)):
        observation, reward, terminated, truncated, _ = env.step(action)
        observations.append(np.asarray(observation, dtype=np.float64))
        rewards.append(float(reward))
        if terminated or truncated:
            break
    return np.stack(observations), np.array(rewards)


def assert_history_free(environment: EnvironmentConfig, steps: int = 1000) -> None:
    fresh = environment.make()
    expected = play(fresh, seed=11, action_seed=5, steps=steps)
    fresh.close()
    used = environment.make()
    for seed in (3, 4, 7):  # other episodes first, with other actions
        play(used, seed=seed, action_seed=seed + 100, steps=steps)
    again = play(used, seed=11, action_seed=5, steps=steps)
    used.close()
    for got, want in zip(again, expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("path", GYMNASIUM_CONFIGS, ids=[p.stem for p in GYMNASIUM_CONFIGS])
def test_a_shipped_configs_env_plays_an_episode_the_same_after_other_episodes(path):
    for extra in environment_extras(json.loads(path.read_text())["environment"]):
        require(extra)
    environment = load_config(path).environment
    assert_history_free(environment)


def test_bipedalwalker_carries_its_world_across_resets_without_the_fresh_world():
    """The audit can fail: Gymnasium's BipedalWalker alone (no fresh world) differs after
    other episodes -- the reason FreshBox2DWorld exists."""
    require("box2d")

    def raw_env() -> gym.Env:
        return gym.make("BipedalWalker-v3", disable_env_checker=True)

    expected = play(raw_env(), seed=11, action_seed=5, steps=1000)
    used = raw_env()
    for seed in (3, 4, 7):
        play(used, seed=seed, action_seed=seed + 100, steps=1000)
    again = play(used, seed=11, action_seed=5, steps=1000)
    assert not all(np.array_equal(a, b) for a, b in zip(again, expected))
    assert isinstance(EnvironmentConfig(id="BipedalWalker-v3").make(), FreshBox2DWorld)


def test_an_env_without_a_box2d_world_is_not_wrapped():
    env = EnvironmentConfig(id="CartPole-v1").make()
    assert not isinstance(env, FreshBox2DWorld)


def bipedal_config(handler: str) -> dict:
    return {
        "environment": {"id": "BipedalWalker-v3"},
        "random_seed": 3,
        "number_generations": 2,
        "optimizer": {"type": "PGPE", "population_size": 8},
        "brain": {"type": "FFNN", "hidden_layers": []},
        "episode_runner": {"number_fitness_runs": 1, "max_steps_per_run": 200},
        "evaluation": {"handler": handler, "workers": 2},
    }


def test_bipedalwalker_runs_on_two_mp_workers_log_exactly_what_sequential_logs(tmp_path):
    """Sequential plays all episodes in one env; two workers split them between two envs, so
    with env history the logs would differ."""
    require("box2d")
    logs = {}
    for handler in ("sequential", "mp"):
        experiment = Experiment(parse_config(bipedal_config(handler)))
        experiment.run()
        logs[handler] = without_time(experiment.log)
    assert logs["mp"] == logs["sequential"]
