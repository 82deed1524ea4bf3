"""Exporting or replaying hall-of-fame rank k of a normalized run uses rank k's observation
scaler (the statistics that genome was evaluated with), not the best entry's or the run's
latest."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import require, small_config

from neuro_evolution import replay, train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.episodes.runner import (
    EpisodeRunner,
    RunnerSpec,
    replace_runner_config,
)
from neuro_evolution.export import load_policy
from neuro_evolution.export.__main__ import main as export_main
from neuro_evolution.run.directory import load_hall_of_fame

require("export")

SEEDS = (5, 6, 7)


@pytest.fixture(scope="module")
def normalized_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A 6-generation normalized CartPole run keeping 12 genomes; (run directory, the first
    rank whose scaler is not rank 0's)."""
    folder = tmp_path_factory.mktemp("hof_scaler")
    data = small_config(
        number_generations=6,
        brain={"type": "CTRNN", "number_neurons": 4},
        optimizer={"type": "PGPE", "population_size": 8, "radius_init": 3.0},
        observation_normalization={},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 200},
        hall_of_fame_size=12,
    )
    (folder / "run.json").write_text(json.dumps(data))
    run_dir = folder / "run"
    assert train.main([str(folder / "run.json"), "--out", str(run_dir), "--quiet"]) == 0
    hall_of_fame, _ = load_hall_of_fame(run_dir / "hall_of_fame.npz")
    best = hall_of_fame.scaler(0)
    assert best is not None
    rank = next(
        k
        for k in range(len(hall_of_fame))
        if not np.array_equal(hall_of_fame.scaler(k).mean, best.mean)
    )
    return run_dir, rank


def own_returns(run_dir: Path, rank: int, scaler_rank: int) -> list[float]:
    """Returns of hall-of-fame ``rank``'s genome on :data:`SEEDS`, observations scaled by the
    scaler of ``scaler_rank``."""
    hall_of_fame, template = load_hall_of_fame(run_dir / "hall_of_fame.npz")
    parsed = parse_config(json.loads((run_dir / "config.json").read_text()))
    spec = replace_runner_config(
        RunnerSpec(environment=parsed.environment, episode_runner=parsed.episode_runner),
        number_fitness_runs=1,
    )
    runner = EpisodeRunner(spec)
    brain = template.build(hall_of_fame.genomes[rank])
    try:
        scaler = hall_of_fame.scaler(scaler_rank)
        return [runner.run_episode(brain, seed, scaler=scaler).fitness for seed in SEEDS]
    finally:
        runner.close()


def test_replaying_rank_k_scales_observations_with_rank_ks_scaler(
    normalized_run: tuple[Path, int],
) -> None:
    """``replay --rank k`` plays rank k's genome with rank k's scaler: its returns are those,
    and rank 0's scaler would give others."""
    run_dir, rank = normalized_run
    returns = replay.replay(run_dir, episodes=len(SEEDS), seed=SEEDS[0], rank=rank)
    assert returns == own_returns(run_dir, rank, rank)
    assert returns != own_returns(run_dir, rank, 0)


def test_exporting_rank_k_embeds_rank_ks_scaler(
    normalized_run: tuple[Path, int], tmp_path: Path
) -> None:
    """``export --hall-of-fame k`` writes rank k's scaler into the file: on raw observations
    the exported policy acts as rank k's brain on observations scaled by rank k's scaler."""
    run_dir, rank = normalized_run
    out = tmp_path / "policy.py"
    argv = [str(run_dir), "--format", "numpy", "--out", str(out), "--hall-of-fame", str(rank)]
    assert export_main(argv) == 0
    policy = load_policy(out)
    hall_of_fame, template = load_hall_of_fame(run_dir / "hall_of_fame.npz")
    own, best = hall_of_fame.scaler(rank), hall_of_fame.scaler(0)
    assert own is not None and best is not None
    brain = template.build(hall_of_fame.genomes[rank])
    space = gym.spaces.Box(-3.0, 3.0, (4,), dtype=np.float32)
    space.seed(1)
    differs = 0
    for _ in range(200):
        observation = space.sample()
        brain.reset(np.random.default_rng(0))
        expected = brain.step(own.apply(observation))
        brain.reset(np.random.default_rng(0))
        differs += int(brain.step(best.apply(observation)) != expected)
        action, _ = policy.step(observation, policy.initial_state())
        assert action == expected
    assert differs > 0
