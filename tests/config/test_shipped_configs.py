"""Every shipped config loads and runs one tiny generation (Box2D and MuJoCo extras included);
a PBT config's experiment likewise, its pbt section validated."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from helpers import environment_extras, installed, require

from neuro_evolution.config.tree import ExperimentConfig, load_config
from neuro_evolution.pbt.section import SECTION, load_pbt_config
from neuro_evolution.run.experiment import Experiment

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*.json"))
HAS_JAX = installed("jax")


def experiment_config(path: Path) -> ExperimentConfig:
    """The experiment a shipped config trains (a PBT config: its pbt section checked too)."""
    if SECTION in json.loads(path.read_text()):
        return load_pbt_config(path)[0]
    return load_config(path)


def needs_jax(path: Path) -> bool:
    """Whether the config names a JAX env (it loads only with the jax extra installed)."""
    backend = json.loads(path.read_text())["environment"].get("backend", "gymnasium")
    return backend != "gymnasium"


def extras_needed(path: Path) -> list[str]:
    """The optional extras the config's environment needs (helpers.EXTRAS names)."""
    return environment_extras(json.loads(path.read_text())["environment"])


def loadable(path: Path) -> bool:
    """Whether the config's environment loads here (its extras installed, JAX where named)."""
    return (HAS_JAX or not needs_jax(path)) and all(map(installed, extras_needed(path)))


def test_the_shipped_configs_cover_the_promised_environments():
    """CartPole, LunarLander, BipedalWalker and HalfCheetah ship; FFNN, CMA-ES, the QD
    optimizers and NSGA2 among them; with the pixel extras, two MinAtar games and an Atari game
    with a conv front end feeding a CTRNN."""
    require("box2d")
    require("mujoco")
    configs = [experiment_config(path) for path in CONFIGS if loadable(path)]
    env_ids = {config.environment.id for config in configs}
    assert {"CartPole-v1", "LunarLander-v3", "BipedalWalker-v3", "HalfCheetah-v5"} <= env_ids
    assert "FFNN" in {config.brain.type_name() for config in configs}
    optimizers = {json.loads(path.read_text())["optimizer"]["type"] for path in CONFIGS}
    assert {"CMA_ES", "PGPE", "MU_ES", "NSGA2", "MAP_ELITES", "CMA_ME"} <= optimizers
    assert "CTRNN" in {config.brain.type_name() for config in configs}
    if installed("minatar") and installed("atari"):
        pixels = [c for c in configs if c.environment.id.startswith(("minatar:", "ale_py:"))]
        assert sum(c.environment.id.startswith("minatar:") for c in pixels) >= 2
        assert "minatar:MinAtar/Breakout-v1" in {c.environment.id for c in pixels}
        assert any(c.environment.id.startswith("ale_py:") for c in pixels)
        for config in pixels:
            parts = [part.type_name() for part in config.brain.parts]
            assert parts == ["conv", "CTRNN"], (config.environment.id, parts)


@pytest.mark.parametrize("path", CONFIGS, ids=[path.stem for path in CONFIGS])
def test_shipped_config_runs_one_tiny_generation(path, tmp_path):
    """The config as shipped, cut to one generation of short episodes, trains and writes results."""
    for extra in extras_needed(path):
        require(extra)
    config = experiment_config(path)
    runner = dataclasses.replace(config.episode_runner, number_fitness_runs=1, max_steps_per_run=20)
    evaluation = dataclasses.replace(config.evaluation, handler="sequential")
    config = dataclasses.replace(
        config, number_generations=1, episode_runner=runner, evaluation=evaluation
    )
    experiment = Experiment(config, run_dir=tmp_path)
    summary = experiment.run()
    assert summary.generations == 1
    assert experiment.log[0].env_steps > 0
    assert (tmp_path / "hall_of_fame.npz").is_file()
