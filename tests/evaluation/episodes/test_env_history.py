"""No env history in results: an episode depends on its seed, never on the episodes before it.

Audited for the env of every shipped config and of each pixel env family (ALE's Atari, MinAtar),
as ``environment.make()`` builds it (wrappers included): the same seed and actions give the same
episode in a fresh env and in one that already ran other episodes, bit for bit.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import environment_extras, require, without_time

from neuro_evolution.config.tree import load_config, parse_config
from neuro_evolution.core.schema import parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.history import FreshBox2DWorld, FreshMinAtarGame
from neuro_evolution.run.experiment import Experiment

CONFIGS = sorted((Path(__file__).resolve().parents[3] / "configs").glob("*.json"))
GYMNASIUM_CONFIGS = [  # a PBT config's env is its experiment's, a shipped config of its own
    path
    for path in CONFIGS
    if json.loads(path.read_text())["environment"].get("backend", "gymnasium") == "gymnasium"
    and "pbt" not in json.loads(path.read_text())
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


def assert_history_free(
    environment: EnvironmentConfig, steps: int = 1000, seeds: tuple[int, ...] = (11,)
) -> None:
    """Episode ``seed`` (actions seeded 5) of a fresh env equals the same episode in one env
    that played other episodes (with other actions) first, for each of ``seeds``."""
    used = environment.make()
    for seed in (3, 4, 7):  # other episodes first, with other actions
        play(used, seed=seed, action_seed=seed + 100, steps=steps)
    for seed in seeds:
        fresh = environment.make()
        expected = play(fresh, seed=seed, action_seed=5, steps=steps)
        fresh.close()
        again = play(used, seed=seed, action_seed=5, steps=steps)
        for got, want in zip(again, expected):
            np.testing.assert_array_equal(got, want)
    used.close()


@pytest.mark.parametrize("path", GYMNASIUM_CONFIGS, ids=[p.stem for p in GYMNASIUM_CONFIGS])
def test_a_shipped_configs_env_plays_an_episode_the_same_after_other_episodes(path):
    for extra in environment_extras(json.loads(path.read_text())["environment"]):
        require(extra)
    environment = load_config(path).environment
    assert_history_free(environment)


ATARI_WRAPPERS = [
    {"name": "AtariPreprocessing", "kwargs": {"screen_size": 32}},  # no-op starts, frame skip 4
    {"name": "FrameStackObservation", "kwargs": {"stack_size": 2}},
    "FramesAsChannels",
]
# Each pixel env family with the wrappers configs use (ALE's sticky actions on: 0.25 in v5), the
# steps per episode and the episode seeds audited. MinAtar gets 30 seeds: its sticky actions
# (probability 0.1) must hit the first step of some episode for a carried-over last action to show.
PIXEL_ENVIRONMENTS: dict[str, tuple[str, dict, int, tuple[int, ...]]] = {
    "Pong": (
        "atari",
        {"id": "ale_py:ALE/Pong-v5", "kwargs": {"frameskip": 1}, "wrappers": ATARI_WRAPPERS},
        250,
        (11,),
    ),
    "Qbert": (
        "atari",
        {"id": "ale_py:ALE/Qbert-v5", "kwargs": {"frameskip": 1}, "wrappers": ATARI_WRAPPERS},
        250,
        (11,),
    ),
    "Seaquest, sticky actions by StickyAction": (  # ALE's own off: reset from a snapshot
        "atari",
        {
            "id": "ale_py:ALE/Seaquest-v5",
            "kwargs": {"frameskip": 1, "repeat_action_probability": 0.0},
            "wrappers": [
                {"name": "StickyAction", "kwargs": {"repeat_action_probability": 0.25}},
                *ATARI_WRAPPERS,
            ],
        },
        250,
        (11, 12),
    ),
    **{
        game: ("minatar", {"id": f"minatar:MinAtar/{game}-v1"}, 300, tuple(range(11, 41)))
        for game in ("Breakout", "Asterix", "Freeway", "Seaquest", "SpaceInvaders")
    },
}


@pytest.mark.parametrize("name", PIXEL_ENVIRONMENTS)
def test_a_pixel_env_plays_an_episode_the_same_after_other_episodes(name):
    extra, section, steps, seeds = PIXEL_ENVIRONMENTS[name]
    require(extra)
    environment = parse(EnvironmentConfig, section, "environment")
    assert_history_free(environment, steps=steps, seeds=seeds)


def raw_minatar_breakout() -> gym.Env:
    """MinAtar's own Gymnasium env, without the project's FreshMinAtarGame."""
    env = parse(EnvironmentConfig, {"id": "minatar:MinAtar/Breakout-v1"}, "environment").make()
    assert isinstance(env, FreshMinAtarGame)
    return env.env


def test_minatar_alone_carries_its_last_action_into_the_next_episode():
    """The audit can fail on MinAtar: its sticky actions may repeat the previous episode's last
    action on the first step, so raw Breakout differs after other episodes (and its own seeding,
    ``RandomState(seed)``, refuses the validation seeds >= 2**32)."""
    require("minatar")
    expected = play(raw_minatar_breakout(), seed=11, action_seed=5, steps=1000)
    used = raw_minatar_breakout()
    for seed in (3, 4, 7):
        play(used, seed=seed, action_seed=seed + 100, steps=1000)
    again = play(used, seed=11, action_seed=5, steps=1000)
    assert not all(np.array_equal(a, b) for a, b in zip(again, expected))
    with pytest.raises(ValueError, match="2\\*\\*32"):
        raw_minatar_breakout().reset(seed=2**32 + 1)


def test_minatar_episodes_follow_every_seed_including_validation_seeds():
    """Through ``environment.make()`` any seed >= 0 is taken whole: a validation seed (>= 2**32)
    repeats exactly, and validation seeds do not replay the training seeds they would alias
    modulo 2**32."""
    require("minatar")
    environment = parse(EnvironmentConfig, {"id": "minatar:MinAtar/Breakout-v1"}, "environment")
    env = environment.make()

    def episode(seed: int) -> tuple[np.ndarray, np.ndarray]:
        return play(env, seed, action_seed=5, steps=1000)

    same = [episode(2**32 + 9), episode(2**32 + 9)]
    assert all(np.array_equal(a, b) for a, b in zip(*same))
    aliases = [(episode(2**32 + k), episode(k)) for k in range(10)]
    assert sum(all(np.array_equal(a, b) for a, b in zip(*pair)) for pair in aliases) < 5


@pytest.mark.parametrize("sticky", [0.25, 0.0])
def test_ales_sticky_actions_are_drawn_from_the_episode_seed(sticky):
    """With sticky actions (and no no-op starts) the same actions play differently under two
    seeds and identically under one; with neither, Pong is the same under every seed, so the
    seed alone drives the randomness of ALE's episodes."""
    require("atari")
    section = {
        "id": "ale_py:ALE/Pong-v5",
        "kwargs": {"frameskip": 1, "repeat_action_probability": sticky},
        "wrappers": [{"name": "AtariPreprocessing", "kwargs": {"screen_size": 32, "noop_max": 0}}],
    }
    environment = parse(EnvironmentConfig, section, "environment")
    one, other, again = (play(environment.make(), seed, 5, 150) for seed in (1, 2, 1))
    assert all(np.array_equal(a, b) for a, b in zip(one, again))
    same_across_seeds = all(np.array_equal(a, b) for a, b in zip(one, other))
    assert same_across_seeds == (sticky == 0.0)


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
