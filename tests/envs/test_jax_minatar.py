"""gymnax MinAtar on the jax handler: the shipped configs train, runs resume exactly, validation
keeps its held-out seeds, the JAX conv+CTRNN brain equals the numpy one on recorded MinAtar
observations, the sequential runner plays the same episodes, and what the path cannot run is
refused in one line."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    assert_identical,
    kill_then_resume,
    require,
    run_straight,
    sequential_and_jax_results,
)

require("jax")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from neuro_evolution import train  # noqa: E402
from neuro_evolution.brains import make_template  # noqa: E402
from neuro_evolution.brains.base import parse_brain_config  # noqa: E402
from neuro_evolution.brains.jax_brains import encode_inputs  # noqa: E402
from neuro_evolution.config.tree import parse_config  # noqa: E402
from neuro_evolution.core.schema import ConfigError, parse  # noqa: E402
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig  # noqa: E402
from neuro_evolution.evaluation.episodes.runner import (  # noqa: E402
    EpisodeRunnerConfig,
    EvaluationContext,
    RunnerSpec,
)
from neuro_evolution.evaluation.jax.envs import MINATAR_ENVS, JaxGymEnv  # noqa: E402
from neuro_evolution.run.experiment import Experiment  # noqa: E402
from neuro_evolution.support.seeds import TRAINING_SEED_LIMIT, validation_seeds  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONV_CTRNN = {
    "type": "composed",
    "parts": [
        {"type": "conv", "layers": [{"channels": 4, "kernel": 3, "stride": 1, "pool": "max"}]},
        {"type": "CTRNN", "number_neurons": 5, "delta_t": 1.0},
    ],
}
CHANNELS = {"Asterix-MinAtar": 4, "Breakout-MinAtar": 4, "Freeway-MinAtar": 7,
            "SpaceInvaders-MinAtar": 6}  # fmt: skip
ACTIONS = {"Asterix-MinAtar": 5, "Breakout-MinAtar": 3, "Freeway-MinAtar": 3,
           "SpaceInvaders-MinAtar": 4}  # fmt: skip


def environment(env_id: str, **kwargs: Any) -> EnvironmentConfig:
    data = {"id": env_id, "backend": "gymnax", "kwargs": kwargs}
    return parse(EnvironmentConfig, data, "environment")


def spec_for(env_id: str, kwargs: dict | None = None, **rules: Any) -> RunnerSpec:
    return RunnerSpec(
        environment=environment(env_id, **(kwargs or {})),
        episode_runner=parse(EpisodeRunnerConfig, rules, "episode_runner"),
    )


def template_for(space: gym.Space, action_space: gym.Space, brain: dict = CONV_CTRNN):
    config = parse_brain_config(brain, "brain")
    return make_template(config, space, action_space, np.random.default_rng(1))


def minatar_config(game: str = "breakout", **changes: Any) -> dict[str, Any]:
    """A shipped jax MinAtar config cut to a tiny run."""
    data = json.loads((ROOT / "configs" / f"minatar_{game}_jax.json").read_text())
    data["optimizer"]["population_size"] = 8
    data["episode_runner"] = {"number_fitness_runs": 2, "max_steps_per_run": 60}
    data["validation"] = {"every_generations": 2, "episodes": 3}
    data.update(changes)
    return data


@pytest.mark.parametrize("env_id", MINATAR_ENVS)
def test_minatar_spaces_are_the_minatar_packages(env_id: str) -> None:
    """(10, 10, C) bool planes and the minimal action set of ``MinAtar/<Game>-v1``; a seeded
    reset is a function of its seed; episodes are capped at gymnax's own limit, reported as
    truncation."""
    env = JaxGymEnv(environment(env_id).make_jax_env())
    space = env.observation_space
    assert isinstance(space, gym.spaces.Box) and space.dtype == np.bool_
    assert space.shape == (10, 10, CHANNELS[env_id])
    assert env.action_space == gym.spaces.Discrete(ACTIONS[env_id])
    first, _ = env.reset(seed=2**40 + 5)  # a validation-sized seed
    assert first.dtype == np.bool_ and first.shape == space.shape and first.any()
    again, _ = env.reset(seed=2**40 + 5)
    assert np.array_equal(first, again)
    assert env.env.time_limit == (2500 if env_id == "Freeway-MinAtar" else 1000)


@pytest.mark.parametrize("env_id", MINATAR_ENVS)
def test_playing_a_minatar_game_warns_nothing(env_id: str) -> None:
    """gymnax's MinAtar code makes JAX warn on every trace (a bool scatter; Freeway's int64
    cars); the env silences those inside gymnax alone, so a run prints no warning line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = environment(env_id).make_jax_env()
        _, state = jax.jit(env.reset)(jax.random.PRNGKey(0))
        jax.jit(env.step)(state, jnp.int32(1))
        warnings.warn("scatter inputs have incompatible types: ours", FutureWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == [
        "scatter inputs have incompatible types: ours"
    ]  # silenced in gymnax's code only


def test_a_shipped_minatar_config_trains_two_generations_and_names_its_env(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """configs/minatar_breakout_jax.json (cut to 8 individuals): two generations, compiled twice
    (population, validation batch), a held-out score, and the run names gymnax's env."""
    path = tmp_path / "breakout.json"
    path.write_text(json.dumps(minatar_config(number_generations=2)))
    assert train.main([str(path), "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "Breakout-MinAtar" in out
    assert "jax: 2 compilations" in out
    assert "validation: mean" in out
    log = (tmp_path / "run" / "log.csv").read_text().splitlines()
    assert len(log) == 3


@pytest.mark.slow
def test_a_minatar_run_on_the_jax_handler_resumes_exactly(tmp_path: Path) -> None:
    """SIGKILL after generation 4 (checkpoint at 3), resume: identical to the straight run --
    the env's random spawns (SpaceInvaders' shots, Asterix' enemies) come from the reset key."""
    data = minatar_config(
        "asterix_egocentric",
        number_generations=6,
        checkpoint={"every_generations": 3, "keep": 2},
        environment={"id": "Asterix-MinAtar", "backend": "gymnax",
                     "kwargs": {"sticky_action_prob": 0.1}},
    )  # fmt: skip
    config = tmp_path / "asterix.json"
    config.write_text(json.dumps(data))
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "killed"
    kill_then_resume(config, run_dir, tmp_path)
    assert_identical(run_dir, straight)


def test_validation_seeds_are_held_out_and_training_reset_seeds_are_played() -> None:
    """On the jax handler: training episodes reset with the named seeds, validation episodes
    with the run's held-out seeds (>= 2**32), each reset from the seed itself."""
    data = minatar_config(
        "space_invaders_egocentric",
        number_generations=2,
        episode_runner={"number_fitness_runs": 2, "max_steps_per_run": 40,
                        "training_reset_seeds": [52, 7]},
    )  # fmt: skip
    experiment = Experiment(parse_config(data), quiet=True)
    resets: list[tuple[bool, np.ndarray]] = []
    try:
        experiment.start()
        worker = experiment.handler.state  # type: ignore[attr-defined]
        run = worker.program.run

        def recording(params, keys, *rest):
            seeds = keys[..., 0].astype(np.uint64) << np.uint64(32) | keys[..., 1]
            resets.append((keys.shape[0] == 1 and worker_validating[0], seeds))
            return run(params, keys, *rest)

        worker_validating = [False]
        worker.program.run = recording
        experiment.step()
        worker_validating[0] = True
        candidate = experiment.candidate()
        request = experiment.validation_request(candidate)
        experiment.handler.batch_evaluate(
            np.repeat(candidate.genome[None], len(request.seeds), 0),
            request.seeds,
            EvaluationContext(validation=True),
        )
    finally:
        experiment.close()
    training = [seeds for validating, seeds in resets if not validating]
    validating = [seeds for validating, seeds in resets if validating]
    assert training and validating
    for seeds in training:
        assert seeds.shape[0] == 2
        assert set(seeds[0].tolist()) == {52} and set(seeds[1].tolist()) == {7}
    expected = validation_seeds(1, 3)
    assert validating[-1][0].tolist() == expected.tolist()
    assert all(int(seed) >= TRAINING_SEED_LIMIT for seed in expected)


@pytest.mark.parametrize("env_id", ["Breakout-MinAtar", "SpaceInvaders-MinAtar"])
def test_jax_conv_ctrnn_equals_the_numpy_brain_on_recorded_minatar_observations(
    env_id: str,
) -> None:
    """float32 JAX conv+CTRNN batch brain vs the numpy single brains on 120 observations a
    random player recorded in the game: raw outputs within 1e-4 at every step."""
    env = JaxGymEnv(environment(env_id).make_jax_env())
    count = ACTIONS[env_id]
    template = template_for(env.observation_space, gym.spaces.Box(-1.0, 1.0, (count,)))
    rng = np.random.default_rng(3)
    observations: list[np.ndarray] = []
    observation, _ = env.reset(seed=11)
    while len(observations) < 120:
        observations.append(observation)
        observation, _, terminated, truncated, _ = env.step(int(rng.integers(count)))
        if terminated or truncated:
            observation, _ = env.reset(seed=len(observations))
    genomes = rng.normal(0.0, 1.0, (4, template.genome_size))
    singles = [template.build(genome) for genome in genomes]
    for single in singles:
        single.reset(np.random.default_rng(0))
    brain = template.jax_brain()
    params = brain.params(genomes, jnp.float32)
    state = brain.initial_state(params)
    step = jax.jit(brain.step)
    worst = 0.0
    for observation in observations:
        expected = np.array([single.step(observation) for single in singles])
        batch = jnp.asarray(np.repeat(observation[None], len(genomes), 0))
        state, outputs = step(params, state, encode_inputs(template.io, batch, jnp.float32))
        worst = max(worst, float(np.max(np.abs(np.asarray(outputs) - expected))))
    assert worst <= 1e-4
    assert len({o.tobytes() for o in observations[:40]}) > 1  # the frames move


def test_the_jax_handler_plays_the_sequential_runners_minatar_episodes() -> None:
    """float64, sticky actions on: fitness and steps equal the sequential runner's (which steps
    the same gymnax game through JaxGymEnv), training and validation alike."""
    spec = spec_for(
        "Breakout-MinAtar", {"sticky_action_prob": 0.25}, number_fitness_runs=2,
        max_steps_per_run=80,
    )  # fmt: skip
    env = spec.environment.make()
    template = template_for(env.observation_space, env.action_space)
    genomes = np.random.default_rng(5).normal(0.0, 1.0, (5, template.genome_size))
    seeds = np.arange(5) + 40
    for expected, got in sequential_and_jax_results(template, spec, genomes, seeds):
        assert [r.steps for r in got] == [r.steps for r in expected]
        assert [r.fitness for r in got] == pytest.approx([r.fitness for r in expected])
    assert len({r.steps for r in got}) > 1


def test_sticky_actions_change_the_game_and_stay_a_function_of_the_seed() -> None:
    """``sticky_action_prob`` repeats the last action with that probability, drawn from the
    episode's key: the same seed plays the same episode, a different probability another."""

    def play(probability: float) -> list[int]:
        env = JaxGymEnv(environment("Breakout-MinAtar", sticky_action_prob=probability)
                        .make_jax_env())  # fmt: skip
        env.reset(seed=3)
        positions = []
        for t in range(30):
            observation, _, terminated, _, _ = env.step(2 if t % 4 < 2 else 1)
            positions.append(int(np.argmax(observation[9, :, 0])))
            if terminated:
                break
        return positions

    assert play(0.5) == play(0.5)
    assert play(0.5) != play(0.0)


@pytest.mark.parametrize(
    ("kwargs", "env_id", "field", "says"),
    [
        ({}, "Seaquest-MinAtar", "environment.id", "gymnax does not register it"),
        ({"sticky_action_prob": 1.0}, "Breakout-MinAtar",
         "environment.kwargs.sticky_action_prob", "must be a number in [0, 1)"),
        ({"difficulty_ramping": False}, "Asterix-MinAtar", "environment.kwargs",
         "takes no argument 'difficulty_ramping'"),
        ({"sticky_action_prob": 0.1}, "CartPole-v1", "environment.kwargs",
         "takes no argument 'sticky_action_prob'"),
    ],
)  # fmt: skip
def test_what_the_minatar_path_cannot_run_is_one_config_error(
    kwargs: dict, env_id: str, field: str, says: str
) -> None:
    with pytest.raises(ConfigError) as error:
        environment(env_id, **kwargs)
    message = str(error.value)
    assert message.startswith(f"{field}: "), message
    assert says in message and "\n" not in message


def test_the_jax_handler_refuses_qd_descriptors_on_minatar(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A MAP-Elites run (per-episode measures) on the jax handler: one line, exit 2, no run."""
    data = minatar_config(
        number_generations=1,
        novelty=None,  # the shipped config's; MAP-Elites cannot take it (another refusal)
        optimizer={"type": "MAP_ELITES", "batch_size": 8,
                   "descriptors": [{"name": "reward", "source": "reward", "reduce": "sum",
                                    "low": 0, "high": 10, "bins": 4}]},
    )  # fmt: skip
    path = tmp_path / "qd.json"
    path.write_text(json.dumps(data))
    assert train.main([str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "the JAX path computes no per-episode measures" in err
    assert not (tmp_path / "run").exists()
