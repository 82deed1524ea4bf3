"""Per-episode measures and QD descriptors: what the episode loop computes, and the one-line
errors a bad descriptor gets at start-up."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import QD_DESCRIPTORS, installed, qd_config, require

from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError, parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig, RunnerSpec
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.qd.descriptors import DescriptorConfig
from neuro_evolution.run.experiment import Experiment, template_for_env
from neuro_evolution.support.seeds import episode_seed, generation_seeds

IMPACT = [
    {"name": "impact_x", "source": "observation", "index": 0, "reduce": "first_event",
     "event": [6, 7], "fallback": "last", "low": -1.0, "high": 1.0, "bins": 50},
    {"name": "impact_y_velocity", "source": "observation", "index": 3, "reduce": "first_event",
     "event": [6, 7], "fallback": "min", "low": -3.0, "high": 0.0, "bins": 50},
]  # fmt: skip


RETURN = {"name": "return", "source": "reward", "reduce": "sum", "low": -1e3, "high": 1e3}


def tutorial_impact(env: gym.Env, brain: Any, seed: int) -> tuple[float, tuple, bool]:
    """The pyribs lunar lander tutorial's ``simulate`` with our brain as the policy: its
    measures written out by hand (x and y velocity when a leg first touches the ground, else
    the last x and the minimum y velocity)."""
    observation, _ = env.reset(seed=seed)
    total, impact, velocities, done = 0.0, None, [], False
    while not done:
        observation, reward, terminated, truncated, _ = env.step(brain.step(observation))
        done = terminated or truncated
        total += float(reward)
        velocities.append(float(observation[3]))
        if impact is None and (observation[6] or observation[7]):
            impact = (float(observation[0]), float(observation[3]))
    touched = impact is not None
    if impact is None:
        impact = (float(observation[0]), min(velocities))
    return total, impact, touched


def test_first_contact_descriptors_equal_the_pyribs_tutorial_measures() -> None:
    """LunarLander's impact x and y velocity from the runner equal the tutorial's hand loop,
    for landers that touch down and for ones that never do (the fallbacks)."""
    require("box2d")
    environment = parse(EnvironmentConfig, {"id": "LunarLander-v3"}, "environment")
    descriptors = tuple(parse(DescriptorConfig, d, "d") for d in IMPACT)
    spec = RunnerSpec(
        environment=environment,
        episode_runner=EpisodeRunnerConfig(number_fitness_runs=1),
        measures=descriptors,
    )
    brain = parse_config(qd_config(brain={"type": "FFNN", "hidden_layers": []})).brain
    template = template_for_env(environment, brain, np.random.default_rng(0))
    genomes = np.random.default_rng(4).normal(size=(16, template.genome_size))
    seeds = generation_seeds(3, 0, len(genomes), shared=False)
    with SequentialHandler() as handler:
        handler.start(template, spec)
        results = handler.batch_evaluate(genomes, seeds)
    env = environment.make()
    touched_down = []
    for genome, seed, result in zip(genomes, seeds, results):
        brain_ = template.build(genome)
        brain_.reset(np.random.default_rng(0))
        total, impact, touched = tutorial_impact(env, brain_, episode_seed(int(seed), 0))
        assert result.fitness == total
        assert result.measures is not None
        assert tuple(result.measures) == impact
        touched_down.append(touched)
    env.close()
    assert any(touched_down) and not all(touched_down)  # both the event and the fallbacks


def test_function_measures_get_the_trajectory_and_episodes_are_averaged() -> None:
    """A module:function measure sees every step (its length and rewards give back steps and
    return), and an evaluation's measure is the mean over its episodes."""
    measures = [
        {"name": "steps", "source": "function", "function": "helpers:episode_length_and_return"},
        {
            "name": "return",
            "source": "function",
            "function": "helpers:episode_length_and_return",
            "index": 1,
        },
    ]
    spec = RunnerSpec(
        environment=parse(EnvironmentConfig, {"id": "CartPole-v1"}, "environment"),
        episode_runner=EpisodeRunnerConfig(number_fitness_runs=3, max_steps_per_run=80),
        measures=tuple(parse(MeasureConfig, m, "m") for m in measures),
    )
    brain = parse_config(qd_config()).brain
    template = template_for_env(spec.environment, brain, np.random.default_rng(0))
    genomes = np.random.default_rng(2).normal(size=(8, template.genome_size))
    with SequentialHandler() as handler:
        handler.start(template, spec)
        results = handler.batch_evaluate(genomes, generation_seeds(1, 0, 8, shared=False))
    for result in results:
        assert result.measures is not None
        assert result.measures[0] == pytest.approx(result.steps / 3)
        assert result.measures[1] == pytest.approx(result.fitness)


@pytest.mark.parametrize("env_id", ["CartPole-v1", "LunarLander-v3"])
def test_lockstep_computes_the_runners_measures_to_the_bit(env_id: str) -> None:
    """The vectorized handler computes observation and action measures per lane (CartPole on
    its native vector env, LunarLander on SyncVectorEnv with first-contact descriptors), in
    waves and over several episodes, bit-identical to the runner, and a reward sum that is the
    fitness to the bit; a function measure falls back to the runner's loop with the same
    results."""
    if env_id.startswith("Lunar"):
        require("box2d")
        descriptors = [*IMPACT, {"name": "a", "source": "action", "reduce": "mean",
                                 "low": 0.0, "high": 3.0}]  # fmt: skip
    else:
        descriptors = [*QD_DESCRIPTORS, {"name": "a", "source": "action", "reduce": "max",
                                         "low": 0.0, "high": 1.0}]  # fmt: skip
        descriptors.append({**QD_DESCRIPTORS[0], "name": "first", "reduce": "first_event",
                            "event": [1], "fallback": "min"})  # fmt: skip
    descriptors.append(RETURN)
    spec = RunnerSpec(
        environment=parse(EnvironmentConfig, {"id": env_id}, "environment"),
        episode_runner=EpisodeRunnerConfig(number_fitness_runs=3, max_steps_per_run=150),
        measures=tuple(parse(DescriptorConfig, d, "d") for d in descriptors),
        max_lanes=25,
    )
    brain = parse_config(qd_config()).brain
    template = template_for_env(spec.environment, brain, np.random.default_rng(0))
    genomes = np.random.default_rng(5).normal(size=(20, template.genome_size))
    seeds = generation_seeds(2, 1, 20, shared=False)
    expected = SequentialHandler()
    expected.start(template, spec)
    reference = expected.batch_evaluate(genomes, seeds)
    expected.close()
    function = {"name": "f", "source": "function", "function": "helpers:episode_length_and_return"}
    fallback = dataclasses.replace(
        spec, measures=(*spec.measures, parse(MeasureConfig, function, "m"))
    )
    for case in (spec, fallback):
        handler = VectorizedHandler()
        handler.start(template, case)
        assert (handler.state.fallback is None) == (case is spec)  # type: ignore[union-attr]
        results = handler.batch_evaluate(genomes, seeds)
        handler.close()
        for result, want in zip(results, reference):
            assert result.fitness == want.fitness and result.steps == want.steps
            assert result.measures is not None and want.measures is not None
            width = len(spec.measures)
            assert result.measures[:width].tobytes() == want.measures.tobytes()
            assert result.measures[width - 1] == result.fitness  # the return, to the bit
    assert len({tuple(r.measures) for r in reference}) > 10  # the measures really differ


def test_info_measures_read_every_step_or_the_final_info_dict() -> None:
    """HalfCheetah's per-step reward components summed over the steps give its return (an
    objective's building block), and ``reduce: last`` reads the final info dict."""
    require("mujoco")
    measures = [
        {"name": "run", "source": "info", "key": "reward_forward", "reduce": "sum"},
        {"name": "ctrl", "source": "info", "key": "reward_ctrl", "reduce": "sum"},
        {"name": "x", "source": "info", "key": "x_position"},
        {"name": "speed", "source": "info", "key": "x_velocity", "reduce": "max"},
    ]
    spec = RunnerSpec(
        environment=parse(EnvironmentConfig, {"id": "HalfCheetah-v5"}, "environment"),
        episode_runner=EpisodeRunnerConfig(number_fitness_runs=1, max_steps_per_run=40),
        measures=tuple(parse(MeasureConfig, m, "m") for m in measures),
    )
    brain = parse_config(qd_config()).brain
    template = template_for_env(spec.environment, brain, np.random.default_rng(0))
    genome = np.random.default_rng(3).normal(size=template.genome_size)
    runner = spec.make()
    result = runner.run(template.build(genome), 11)
    env = runner.env  # the same episode by hand (FFNN: no brain noise)
    brain_ = template.build(genome)
    brain_.reset(np.random.default_rng(0))
    observation, _ = env.reset(seed=episode_seed(11, 0))
    speeds = []
    for _ in range(40):
        observation, _, _, _, info = env.step(brain_.step(observation))
        speeds.append(float(info["x_velocity"]))
    runner.close()
    assert result.measures is not None
    run, ctrl, x, speed = result.measures
    assert run + ctrl == pytest.approx(result.fitness, rel=1e-12)
    assert x == float(info["x_position"]) and speed == max(speeds)


def test_jax_handler_refuses_measures_in_one_line() -> None:
    """The JAX path computes no measures: one line naming optimizer.descriptors."""
    if not installed("jax"):
        pytest.skip("needs the jax extra")
    from neuro_evolution.evaluation.jax.handler import JaxWorkerState

    config = parse_config(qd_config())
    experiment = Experiment(config, handler=SequentialHandler())
    with pytest.raises(ConfigError) as error:
        JaxWorkerState(experiment.template, experiment.spec)
    assert str(error.value).startswith("optimizer.descriptors: the JAX path computes no")
    experiment.close()


def with_descriptor(**changes: Any) -> dict[str, Any]:
    """The tiny QD config with its first descriptor changed (a None value removes the key)."""
    data = qd_config()
    descriptors = copy.deepcopy(QD_DESCRIPTORS)
    descriptors[0].update(changes)
    descriptors[0] = {k: v for k, v in descriptors[0].items() if v is not None}
    data["optimizer"]["descriptors"] = descriptors
    return data


BAD_DESCRIPTORS = {
    "low not below high": (
        with_descriptor(low=1.0, high=1.0),
        "optimizer.descriptors[0].high: must be > low (1)",
    ),
    "unknown source": (
        with_descriptor(source="observaton"),
        "optimizer.descriptors[0].source: must be one of",
    ),
    "unknown reduce": (
        with_descriptor(reduce="median"),
        "optimizer.descriptors[0].reduce: must be one of",
    ),
    "missing bound": (with_descriptor(low=None), "optimizer.descriptors[0].low: is required"),
    "unknown key": (with_descriptor(bin=4), "optimizer.descriptors[0].bin: unknown key"),
    "event without first_event": (
        with_descriptor(event=[1]),
        "optimizer.descriptors[0].event: is only used with reduce first_event",
    ),
    "first_event without event": (
        with_descriptor(reduce="first_event"),
        "optimizer.descriptors[0].event: first_event needs observation indices",
    ),
    "info without key": (with_descriptor(source="info"), "optimizer.descriptors[0].key: source"),
    "function not importable": (
        with_descriptor(source="function", function="no_such_module:f"),
        "optimizer.descriptors[0].function: cannot import module 'no_such_module'",
    ),
    "function misnamed": (
        with_descriptor(source="function", function="helpers:episode_lenght_and_return"),
        "optimizer.descriptors[0].function: module 'helpers' has no",
    ),
    "name twice": (
        with_descriptor(name="mean_pole_angle"),
        "optimizer.descriptors[1].name: 'mean_pole_angle' is named twice",
    ),
    "index outside the observation": (
        with_descriptor(index=4),
        "optimizer.descriptors[0].index: observation has 4 elements (0..3), got 4",
    ),
    "no descriptors": (
        qd_config(optimizer={"type": "MAP_ELITES", "descriptors": []}),
        "optimizer.descriptors: needs at least one descriptor",
    ),
    "novelty as well": (
        qd_config(novelty={}),
        "novelty: optimizer MAP_ELITES selects on per-episode measures",
    ),
}


@pytest.mark.parametrize("case", BAD_DESCRIPTORS)
def test_a_bad_descriptor_is_one_line_naming_the_field(case: str) -> None:
    """Bounds, names, sources and indices are checked when the config is read or the run
    starts (before any worker), each as one ConfigError line that names the field."""
    data, start = BAD_DESCRIPTORS[case]
    with pytest.raises(ConfigError) as error:
        Experiment(parse_config(data), handler=SequentialHandler()).close()
    message = str(error.value)
    assert message.startswith(start), message
    assert "\n" not in message


def test_a_function_measure_named_by_its_module_before_the_move_still_loads() -> None:
    """A config saved by an older version names the shipped measure functions' old module; it
    loads the same function, so an old run directory resumes and replays."""
    from neuro_evolution.core.importing import load_object
    from neuro_evolution.measures.functions import lunar_lander_fuel

    old_module = "neuro_evolution." + "measure_functions"  # split: the name is the point
    loaded = load_object(f"{old_module}:lunar_lander_fuel", "objectives[0].function", "m:f")
    assert loaded is lunar_lander_fuel
    with pytest.raises(ConfigError, match="no module named 'neuro_evolution.measure_funcs'"):
        load_object("neuro_evolution.measure_funcs:lunar_lander_fuel", "objectives[0].function", "")
