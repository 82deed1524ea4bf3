"""neuro_evolution/Latency-v0, the benchmark env of scripts/bench_scale.py: each step waits its
``step_seconds``, episodes have a fixed length, and a run on it is the same whichever handler
runs it (its results are a pure function of the seeds)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import small_config, without_time

import neuro_evolution.envs  # noqa: F401  (registers the ids)
from neuro_evolution import train
from neuro_evolution.run.directory import read_log

ENV_ID = "neuro_evolution/Latency-v0"


def episode(seed: int, step_seconds: float = 0.0) -> tuple[list[np.ndarray], list[float]]:
    """Observations and rewards of one episode with a fixed action sequence."""
    env = gym.make(ENV_ID, step_seconds=step_seconds, max_steps=12)
    observation, _ = env.reset(seed=seed)
    observations, rewards = [observation], []
    for t in range(100):
        observation, reward, terminated, truncated, _ = env.step(np.array([np.sin(t)]))
        observations.append(observation)
        rewards.append(float(reward))
        if terminated or truncated:
            assert truncated and not terminated
            break
    env.close()
    return observations, rewards


def test_an_episode_is_a_function_of_its_seed_and_lasts_max_steps() -> None:
    """Same seed, same episode; another seed, another; always exactly max_steps steps."""
    first, again, other = episode(3), episode(3), episode(4)
    assert len(first[1]) == 12
    assert all(np.array_equal(a, b) for a, b in zip(first[0], again[0]))
    assert first[1] == again[1]
    assert first[1] != other[1]


def test_each_step_waits_its_step_seconds() -> None:
    """12 steps of 20 ms take at least 240 ms of wall time."""
    start = time.perf_counter()
    episode(3, step_seconds=0.02)
    assert time.perf_counter() - start >= 12 * 0.02


@pytest.mark.slow
def test_a_latency_run_is_identical_on_every_handler(tmp_path: Path) -> None:
    """Sequential, mp and a Dask LocalCluster give the same log on the latency env."""
    data = small_config(
        environment={
            "id": f"neuro_evolution.envs:{ENV_ID}",
            "kwargs": {"step_seconds": 0.0005, "max_steps": 10},
        },
        number_generations=2,
        optimizer={"type": "PGPE", "population_size": 8},
    )
    path = tmp_path / "latency.json"
    path.write_text(json.dumps(data))
    logs = {}
    for handler in ("sequential", "mp", "dask"):
        out = tmp_path / handler
        args = [str(path), "--out", str(out), "--quiet", "--handler", handler]
        assert train.main([*args, "--workers", "2"]) == 0
        logs[handler] = without_time(read_log(out / "log.csv"))
    assert len({row["fitness_mean"] for row in logs["sequential"]}) == 2  # generations differ
    assert logs["mp"] == logs["sequential"]
    assert logs["dask"] == logs["sequential"]
