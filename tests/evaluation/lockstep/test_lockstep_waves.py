"""Lockstep evaluation in waves of at most ``evaluation.max_lanes`` lanes: same results as one
wave and as the sequential handler; the option is validated; a wave that cannot fit is refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.core.normalization import ObservationNormalizationConfig
from neuro_evolution.core.schema import parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import (
    EpisodeRunnerConfig,
    EvaluationContext,
    RunnerSpec,
)
from neuro_evolution.evaluation.episodes.wrappers import REWARD_OFFSET
from neuro_evolution.evaluation.lockstep.handler import VectorizedWorkerState, lane_waves
from neuro_evolution.evaluation.lockstep.lane_memory import PROBE_LANES, check_wave_memory
from neuro_evolution.evaluation.pools import make_handler
from neuro_evolution.evaluation.pools.options import evaluation_config
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import template_for_env
from neuro_evolution.support.errors import ConfigError

POPULATION = 13
RUNS = 3  # 39 lanes: the wave sizes below are smaller than R, do not divide R x P, or exceed it
WAVE_SIZES = [1, 2, 5, 7, 13, 38, 39, 1000]
ENVIRONMENTS: dict[str, dict[str, Any]] = {
    "native-cartpole": {"id": "CartPole-v1"},
    "wrapped-cartpole-sync": {
        "id": "CartPole-v1",
        "kwargs": {"max_episode_steps": 80},
        "wrappers": [{"name": REWARD_OFFSET, "kwargs": {"offset": -0.25}}],
    },
}


def make_spec(environment: dict[str, Any], max_lanes: int | None = None) -> RunnerSpec:
    return RunnerSpec(
        environment=parse(EnvironmentConfig, environment, "environment"),
        episode_runner=EpisodeRunnerConfig(
            number_fitness_runs=RUNS, max_steps_per_run=20, max_steps_penalty=2.0
        ),
        observation_normalization=ObservationNormalizationConfig(),
        max_lanes=max_lanes,
    )


def setup(environment: dict[str, Any]):
    spec = make_spec(environment)
    brain = parse_brain_config({"type": "CTRNN", "number_neurons": 4}, "brain")
    template = template_for_env(spec.environment, brain, np.random.default_rng(5))
    rng = np.random.default_rng(8)
    genomes = rng.normal(0.0, 1.0, size=(POPULATION, template.genome_size))
    genomes[::2] *= 0.1  # some long episodes beside the short ones
    seeds = rng.integers(0, 2**32, size=POPULATION, dtype=np.uint32)
    seeds[3:6] = seeds[0]  # shared seeds too
    return spec, template, genomes, seeds


def evaluate(template, spec, genomes, seeds, context=None) -> list:
    state = VectorizedWorkerState(template, spec)
    try:
        if context is None:
            return state.evaluate(genomes, seeds)
        return state.evaluate(genomes, seeds, context)
    finally:
        state.close()


def as_tuples(results) -> list[tuple]:
    return [
        (
            r.fitness,
            r.steps,
            r.terminated,
            r.truncated,
            None if r.observation_stats is None else r.observation_stats.tolist(),
        )
        for r in results
    ]


@pytest.mark.parametrize("environment", list(ENVIRONMENTS), ids=list(ENVIRONMENTS))
def test_waves_give_the_results_of_one_wave_and_of_the_sequential_handler(environment):
    """Every wave size gives bit-identical fitness, steps, end counts and observation
    statistics: lanes are independent and per-individual totals are added in episode order."""
    spec, template, genomes, seeds = setup(ENVIRONMENTS[environment])
    one_wave = evaluate(template, spec, genomes, seeds)
    with SequentialHandler() as sequential:
        sequential.start(template, spec)
        expected = sequential.batch_evaluate(genomes, seeds)
    assert as_tuples(one_wave) == as_tuples(expected)
    steps = [r.steps for r in expected]
    assert len(set(steps)) > 3 and max(steps) == RUNS * 20  # short, long and cut episodes
    mode = VectorizedWorkerState(template, spec)
    assert ("native" in mode.describe()) == (environment == "native-cartpole")
    mode.close()
    for size in WAVE_SIZES:
        waved = evaluate(template, dataclasses.replace(spec, max_lanes=size), genomes, seeds)
        assert as_tuples(waved) == as_tuples(one_wave), f"max_lanes={size}"


def test_validation_waves_match_one_wave():
    """Validation (one episode reset with each seed itself) splits into waves the same way."""
    spec, template, genomes, seeds = setup(ENVIRONMENTS["native-cartpole"])
    context = EvaluationContext(validation=True)
    one_wave = evaluate(template, spec, genomes, seeds, context)
    for size in (1, 4, 12):
        waved = evaluate(
            template, dataclasses.replace(spec, max_lanes=size), genomes, seeds, context
        )
        assert as_tuples(waved) == as_tuples(one_wave), f"max_lanes={size}"


def test_lane_waves_cover_every_lane_once_in_order():
    assert lane_waves(39, None) == [(0, 39)]
    assert lane_waves(39, 1000) == [(0, 39)]
    assert lane_waves(39, 10) == [(0, 10), (10, 20), (20, 30), (30, 39)]
    assert [lane for a, b in lane_waves(39, 7) for lane in range(a, b)] == list(range(39))


def test_max_lanes_is_validated_in_one_line():
    assert evaluation_config("vectorized").max_lanes is None
    assert evaluation_config("vectorized", max_lanes=1).max_lanes == 1
    with pytest.raises(ConfigError) as error:
        evaluation_config("vectorized", max_lanes=0)
    assert "evaluation.max_lanes" in str(error.value)
    assert "\n" not in str(error.value)


def test_a_wave_that_cannot_fit_is_refused_naming_the_numbers():
    """One line on evaluation.max_lanes with the wave, the bytes it needs, what is available
    and the largest max_lanes that fits; small waves are never refused."""
    with pytest.raises(ConfigError) as error:
        check_wave_memory(100_000, 100 * 1024, "5 episodes x 20,000 individuals", 2 * 1024**3)
    message = str(error.value)
    assert message.startswith("evaluation.max_lanes")
    assert "100,000 lanes (5 episodes x 20,000 individuals)" in message
    assert "9.54 GiB" in message and "100 KiB per lane" in message and "2 GiB available" in message
    assert "set max_lanes to at most 20,971" in message
    assert "\n" not in message
    check_wave_memory(20_971, 100 * 1024, "max_lanes 20,971", 2 * 1024**3)  # fits
    check_wave_memory(PROBE_LANES, 10**9, "max_lanes 32", 1)  # as small as the probe


def test_an_impossible_max_lanes_is_refused_when_the_state_starts():
    """The worker state measures one lane at start-up and refuses a configured wave larger than
    the machine's memory before any evaluation."""
    spec, template, _, _ = setup(ENVIRONMENTS["native-cartpole"])
    state = VectorizedWorkerState(template, spec)
    try:
        lane_bytes = state.lane_bytes()
    finally:
        state.close()
    assert 0 < lane_bytes < 10 * 1024**2  # a CartPole lane: kilobytes, not megabytes
    with pytest.raises(ConfigError, match=r"evaluation\.max_lanes: a lockstep wave of"):
        VectorizedWorkerState(template, dataclasses.replace(spec, max_lanes=10**15))


def test_mp_workers_with_vectorize_evaluate_their_chunks_in_waves():
    """max_lanes travels in the RunnerSpec, so each mp worker's vectorized state splits its
    chunk into waves too (real process pool): results equal one wave in this process; a wave
    that cannot fit is refused when the handler starts, before any worker evaluates."""
    spec, template, genomes, seeds = setup(ENVIRONMENTS["wrapped-cartpole-sync"])
    one_wave = evaluate(template, spec, genomes, seeds)
    with make_handler("mp", workers=2, vectorize=True, start_method="fork") as handler:
        handler.start(template, dataclasses.replace(spec, max_lanes=4))
        assert as_tuples(handler.batch_evaluate(genomes, seeds)) == as_tuples(one_wave)
    refused = r"evaluation\.max_lanes: a lockstep wave of"
    with (
        make_handler("mp", workers=2, vectorize=True) as handler,
        pytest.raises(ConfigError, match=refused),
    ):
        handler.start(template, dataclasses.replace(spec, max_lanes=10**15))
