"""A gymnax env on the lockstep (vectorized) handler steps all lanes in one jitted vmapped call:
each lane plays exactly the episode the one-env-at-a-time adapter plays (finished and padding
lanes ignored), and a run's log is the process pool's, to the bit."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import require, small_config, without_time

require("jax")

from neuro_evolution import train  # noqa: E402
from neuro_evolution.core.schema import parse  # noqa: E402
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig  # noqa: E402
from neuro_evolution.evaluation.jax.envs import JaxGymEnv  # noqa: E402
from neuro_evolution.evaluation.jax.lockstep import JaxLockstepEnv, padded_lanes  # noqa: E402

CONV_CTRNN = {
    "type": "composed",
    "parts": [
        {"type": "conv", "layers": [{"channels": 2, "kernel": 3, "stride": 1, "pool": "max"}]},
        {"type": "CTRNN", "number_neurons": 3, "delta_t": 1.0},
    ],
}


def environment(env_id: str, **kwargs: Any) -> EnvironmentConfig:
    return parse(
        EnvironmentConfig, {"id": env_id, "backend": "gymnax", "kwargs": kwargs}, "environment"
    )


def single_episode(env: JaxGymEnv, seed: int, actions: np.ndarray) -> tuple[list, int]:
    """(rewards, steps until done) of ``env`` reset with ``seed`` and fed ``actions``."""
    env.reset(seed=seed)
    rewards = []
    for action in actions:
        _, reward, terminated, truncated, _ = env.step(int(action))
        rewards.append(reward)
        if terminated or truncated:
            break
    return rewards, len(rewards)


def test_padded_lanes_are_the_next_power_of_two() -> None:
    """Few lane counts are compiled: each count rounds up to a power of two."""
    assert [padded_lanes(n) for n in (1, 2, 3, 4, 5, 30, 32, 33)] == [1, 2, 4, 4, 8, 32, 32, 64]


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("Breakout-MinAtar", {}),
        pytest.param(
            "Asterix-MinAtar",
            {"sticky_action_prob": 0.25, "max_episode_steps": 40},
            marks=pytest.mark.slow,
        ),
        pytest.param("CartPole-v1", {"max_episode_steps": 8}, marks=pytest.mark.slow),
    ],
)
def test_each_lane_plays_the_single_envs_episode(env_id: str, kwargs: dict) -> None:
    """3 lanes (4 compiled, one padding) with their own seeds and random actions: every lane's
    observations, rewards and ends equal the single env's, lanes that ended stay ignored, and the
    time limit truncates as the single env's does."""
    config = environment(env_id, **kwargs)
    seeds = [11, 2**40 + 3, 11]  # a 64-bit seed, and one seed twice
    lockstep = JaxLockstepEnv(config, 3, neutral_action=0)
    single = JaxGymEnv(config.make_jax_env())
    count = single.action_space.n
    actions = np.random.default_rng(5).integers(0, count, size=(80, 3))
    observations = lockstep.reset(seeds)
    for lane, seed in enumerate(seeds):
        first, _ = single.reset(seed=seed)
        assert np.array_equal(observations[lane], first.astype(np.float64))
    active = np.ones(3, dtype=bool)
    rewards: list[list[float]] = [[], [], []]
    lane_observations: list[list[np.ndarray]] = [[], [], []]
    for step in range(80):
        obs, reward, terminated, truncated = lockstep.step(actions[step], active)
        for lane in np.flatnonzero(active):
            rewards[lane].append(float(reward[lane]))
            lane_observations[lane].append(obs[lane].copy())
        active &= ~(terminated | truncated)
        if not active.any():
            break
    for lane, seed in enumerate(seeds):
        expected, steps = single_episode(single, seed, actions[:, lane])
        assert rewards[lane] == expected, (env_id, lane)
        single.reset(seed=seed)
        for step in range(steps):
            observation, *_ = single.step(int(actions[step, lane]))
            assert np.array_equal(lane_observations[lane][step], observation.astype(np.float64))


def minatar_config(handler: dict[str, Any]) -> dict[str, Any]:
    data = small_config(number_generations=2)
    data["environment"] = {
        "id": "Breakout-MinAtar",
        "backend": "gymnax",
        "kwargs": {"sticky_action_prob": 0.1},
    }
    data["brain"] = CONV_CTRNN
    data["optimizer"] = {"type": "SNES", "population_size": 6}
    data["episode_runner"] = {"number_fitness_runs": 2, "max_steps_per_run": 120}
    data["validation"] = {"every_generations": 1, "episodes": 3}
    data["evaluation"] = handler
    return data


def log_of(run_dir: Path) -> list[dict[str, Any]]:
    with open(run_dir / "log.csv", newline="") as file:
        return without_time(list(csv.DictReader(file)))


@pytest.mark.slow
def test_a_minatar_run_on_the_lockstep_handler_logs_what_the_process_pool_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Breakout-MinAtar (sticky actions), 6 individuals x 2 episodes and 3 validation episodes:
    the lockstep handler (all lanes in one vmapped step) and the process pool (one env at a
    time) write the same log, bit for bit."""
    logs = []
    for name, handler in (
        ("vectorized", {"handler": "vectorized"}),
        ("mp", {"handler": "mp", "workers": 2}),
    ):
        config = tmp_path / f"{name}.json"
        config.write_text(json.dumps(minatar_config(handler)))
        assert train.main([str(config), "--out", str(tmp_path / name)]) == 0
        logs.append(log_of(tmp_path / name))
        if name == "vectorized":
            assert "all lanes in one jitted vmapped step" in capsys.readouterr().out
    assert len(logs[0]) == 2 and logs[0][-1]["validation_mean"] != ""
    assert logs[0] == logs[1]
