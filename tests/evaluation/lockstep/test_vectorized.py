"""Vectorized (lockstep) evaluation gives exactly the sequential handler's results."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from neuro_evolution.brains.base import BrainTemplate, brain_types, parse_brain_config
from neuro_evolution.brains.ffnn import FFNNTemplate
from neuro_evolution.core.schema import parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig, RunnerSpec
from neuro_evolution.evaluation.lockstep.handler import (
    VectorizedHandler,
    VectorizedWorkerState,
    fallback_line,
    fallback_reason,
)
from neuro_evolution.evaluation.pools import make_handler
from neuro_evolution.evaluation.pools.base import WorkerState
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.optimizers.novelty import NoveltyConfig
from neuro_evolution.run.experiment import template_for_env
from neuro_evolution.support.seeds import brain_rng, brain_rngs, episode_seed, episode_seeds

# Small networks keep the tests fast; every brain type with a batch brain is checked, CTRNN also
# with state noise (drawn from the brain rngs, so the per-episode generators are checked too).
BRAIN_CASES: dict[str, dict[str, Any]] = {
    "FFNN": {"type": "FFNN", "hidden_layers": [5]},
    "CTRNN": {"type": "CTRNN", "number_neurons": 5},
    "CTRNN-noisy": {"type": "CTRNN", "number_neurons": 5, "parameter_perturbations": 0.05},
    "LSTM": {"type": "LSTM", "hidden_size": 4},
    "composed": {
        "type": "composed",
        "parts": [
            {"type": "FFNN", "hidden_layers": [4]},
            {"type": "CTRNN", "number_neurons": 4, "parameter_perturbations": 0.05},
        ],
        "sizes": [3],
    },
}


def batch_brain_types() -> list[str]:
    return [case for case, config in BRAIN_CASES.items() if config["type"] in brain_types()]


def make_spec(env_id: str, env_kwargs: dict | None = None, **runner: Any) -> RunnerSpec:
    return RunnerSpec(
        environment=parse(EnvironmentConfig, {"id": env_id, "kwargs": env_kwargs or {}}, "env"),
        episode_runner=parse(EpisodeRunnerConfig, runner, "episode_runner"),
    )


def make_brain_template(brain: str, spec: RunnerSpec) -> BrainTemplate:
    config = parse_brain_config(BRAIN_CASES[brain], "brain")
    return template_for_env(spec.environment, config, np.random.default_rng(3))


def population(template: BrainTemplate, count: int, shared_seed: bool, rng_seed: int = 11):
    rng = np.random.default_rng(rng_seed)
    genomes = rng.normal(0.0, 1.0, size=(count, template.genome_size))
    if shared_seed:
        seeds = np.full(count, rng.integers(2**32), dtype=np.uint32)
    else:
        seeds = rng.integers(0, 2**32, size=count, dtype=np.uint32)
    return genomes, seeds


def screened_population(template, spec, count: int, shared_seed: bool):
    """``count`` genomes: small mutants of the longest-lived genomes of a random pool (with their
    seeds) and plain random ones, so that short and long episodes both occur."""
    pool, pool_seeds = population(template, 200, shared_seed)
    pool[::2] *= 0.4
    state = WorkerState(template, spec)
    try:
        steps = np.array([r.steps for r in state.evaluate(pool, pool_seeds)])
    finally:
        state.close()
    elite = np.argsort(-steps, kind="stable")[:4]
    parents = np.resize(elite, count // 2)
    noise = np.random.default_rng(1).normal(0.0, 0.02, size=(parents.size, template.genome_size))
    genomes = np.concatenate([pool[parents] + noise, pool[: count - parents.size]])
    seeds = np.concatenate([pool_seeds[parents], pool_seeds[: count - parents.size]])
    return genomes, seeds


def evaluate_both(template, spec, genomes, seeds, mode="auto"):
    with SequentialHandler() as sequential, VectorizedHandler(mode) as vectorized:
        sequential.start(template, spec)
        vectorized.start(template, spec)
        return (
            sequential.batch_evaluate(genomes, seeds),
            vectorized.batch_evaluate(genomes, seeds),
        )


def as_tuples(results) -> list[tuple]:
    return [(r.fitness, r.steps, r.terminated, r.truncated) for r in results]


@pytest.mark.parametrize("brain", batch_brain_types())
@pytest.mark.parametrize("shared_seed", [True, False], ids=["shared-seed", "own-seeds"])
@pytest.mark.parametrize(
    "limit, penalty",
    [(0, 0.0), (25, 7.5), (60, 3.0)],
    ids=["env-limit-only", "cut-at-25", "cut-equals-env-limit"],
)
def test_sync_vector_env_matches_sequential_exactly(brain, shared_seed, limit, penalty):
    """SyncVectorEnv lockstep: fitness, steps and end counts equal the sequential handler's bit
    for bit, for 2 episodes, with and without max_steps_per_run + penalty (also when the cut
    coincides with the env's own time limit: the env's truncation wins, no penalty)."""
    spec = make_spec(
        "CartPole-v1",
        {"max_episode_steps": 60},
        number_fitness_runs=2,
        max_steps_per_run=limit,
        max_steps_penalty=penalty,
    )
    template = make_brain_template(brain, spec)
    genomes, seeds = screened_population(template, spec, 32, shared_seed)
    sequential, vectorized = evaluate_both(template, spec, genomes, seeds, mode="sync")
    assert as_tuples(vectorized) == as_tuples(sequential)
    # the population exercises every way an episode can end
    assert sum(r.terminated for r in sequential) > 0
    assert sum(r.truncated for r in sequential) > 0
    assert len({r.steps for r in sequential}) > 3


@pytest.mark.parametrize("brain", batch_brain_types())
@pytest.mark.parametrize("shared_seed", [True, False], ids=["shared-seed", "own-seeds"])
def test_native_cartpole_vector_env_matches_sequential_exactly(brain, shared_seed):
    """CartPoleVectorEnv (float64 state, the same element-wise numpy ops as the single env) with
    single-env reset states loaded per copy gives results identical to the sequential handler."""
    spec = make_spec("CartPole-v1", number_fitness_runs=2, max_steps_per_run=60)
    template = make_brain_template(brain, spec)
    genomes, seeds = screened_population(template, spec, 100, shared_seed)
    with VectorizedHandler("native") as handler:
        handler.start(template, spec)
        assert "native" in handler.describe()
    sequential, vectorized = evaluate_both(template, spec, genomes, seeds, mode="native")
    assert as_tuples(vectorized) == as_tuples(sequential)
    assert any(r.truncated for r in sequential)  # some individuals were cut


def test_native_cartpole_time_limit_and_reward_options_match_single_env():
    """The native env's own max_episode_steps and sutton_barto_reward follow the env kwargs
    exactly like the single env's TimeLimit wrapper and reward."""
    spec = make_spec("CartPole-v1", {"max_episode_steps": 40, "sutton_barto_reward": True})
    template = make_brain_template("FFNN", spec)
    genomes, seeds = population(template, 60, shared_seed=False)
    sequential, vectorized = evaluate_both(template, spec, genomes, seeds, mode="native")
    assert as_tuples(vectorized) == as_tuples(sequential)
    assert any(r.truncated for r in sequential) and any(r.terminated for r in sequential)


@pytest.mark.parametrize(
    "env_id, runner",
    [
        ("Pendulum-v1", {"number_fitness_runs": 1, "max_steps_per_run": 80}),
        ("MountainCarContinuous-v0", {"number_fitness_runs": 1, "max_steps_per_run": 120}),
        ("FrozenLake-v1", {"number_fitness_runs": 3}),
    ],
)
@pytest.mark.parametrize("brain", batch_brain_types())
def test_box_action_and_discrete_observation_envs_match_sequential(env_id, runner, brain):
    """Box actions (scaled to the bounds) and Discrete observations (one-hot) go through the
    lockstep loop exactly as through the sequential runner; slippery FrozenLake also checks that
    every copy's env randomness follows its own episode seed."""
    spec = make_spec(env_id, **runner)
    template = make_brain_template(brain, spec)
    genomes, seeds = population(template, 10, shared_seed=False)
    sequential, vectorized = evaluate_both(template, spec, genomes, seeds)
    assert as_tuples(vectorized) == as_tuples(sequential)
    assert len({(r.fitness, r.steps) for r in sequential}) > 1


def test_worker_state_api_matches_plain_worker_state_across_chunk_sizes():
    """VectorizedWorkerState.evaluate equals WorkerState.evaluate on chunks of varying size, and
    a cached vector env reused for a later chunk of the same size gives the same results."""
    spec = make_spec("CartPole-v1", number_fitness_runs=2, max_steps_per_run=80)
    template = make_brain_template("FFNN", spec)
    genomes, seeds = population(template, 30, shared_seed=False)
    plain = WorkerState(template, spec)
    vectorized = VectorizedWorkerState(template, spec)
    try:
        for chunk in (slice(0, 12), slice(12, 30), slice(0, 12), slice(5, 6)):
            expected = plain.evaluate(genomes[chunk], seeds[chunk])
            assert as_tuples(vectorized.evaluate(genomes[chunk], seeds[chunk])) == as_tuples(
                expected
            )
        assert vectorized.evaluate(genomes[:0], seeds[:0]) == []
    finally:
        plain.close()
        vectorized.close()


def test_finished_sub_envs_are_not_stepped():
    """In sync mode an individual whose episode ended is masked out: its env is never stepped
    after termination (Gymnasium warns when that happens)."""
    spec = make_spec("CartPole-v1", number_fitness_runs=2)
    template = make_brain_template("FFNN", spec)
    genomes, seeds = population(template, 20, shared_seed=True)
    with VectorizedHandler("sync") as handler, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        handler.start(template, spec)
        results = handler.batch_evaluate(genomes, seeds)
    assert len({r.steps for r in results}) > 1  # episodes of different lengths
    assert not [w for w in caught if "already returned terminated" in str(w.message)]


def test_make_handler_builds_the_vectorized_handler_on_the_native_env_for_cartpole():
    """make_handler("vectorized") gives a VectorizedHandler; auto mode picks CartPole's native
    vector env and SyncVectorEnv (with the reason) for an env without one."""
    handler = make_handler("vectorized")
    assert isinstance(handler, VectorizedHandler)
    spec = make_spec("CartPole-v1")
    with handler:
        handler.start(make_brain_template("FFNN", spec), spec)
        assert "native vector env of CartPole-v1" in handler.describe()
    spec = make_spec("Pendulum-v1")
    with make_handler("vectorized") as handler:
        handler.start(make_brain_template("FFNN", spec), spec)
        assert "SyncVectorEnv (Pendulum-v1 has no native vector env)" in handler.describe()


class NoBatchFFNNTemplate(FFNNTemplate):
    """An FFNN template that behaves like a brain type without a batch brain."""

    __slots__ = ()
    batch_brain = BrainTemplate.batch_brain


def test_brain_without_batch_brain_falls_back_to_the_per_individual_loop(capsys):
    """A brain type without batch_brain is evaluated one individual at a time and gives the same
    results; the reason is the run's start-up warning (the handler itself prints nothing)."""
    spec = make_spec("CartPole-v1", number_fitness_runs=2)
    env = spec.environment.make()
    template = NoBatchFFNNTemplate.from_config(
        parse_brain_config({"type": "FFNN", "hidden_layers": [3]}, "brain"),
        env.observation_space,
        env.action_space,
        np.random.default_rng(0),
    )
    env.close()
    assert not template.supports_batch
    genomes, seeds = population(template, 6, shared_seed=False)
    sequential, vectorized = evaluate_both(template, spec, genomes, seeds)
    assert capsys.readouterr().err == ""
    assert fallback_line(fallback_reason(template, spec)) == (
        "vectorized evaluation falls back to one individual at a time: "
        "brain.type: brain type 'FFNN' has no batch form; write NoBatchFFNNTemplate.batch_brain() "
        "(see docs/writing-a-brain.md) to run it in lockstep"
    )
    assert as_tuples(vectorized) == as_tuples(sequential)


@pytest.mark.parametrize("source", ["observation", "action", "state"])
def test_novelty_behaviours_are_the_sequential_ones_and_state_falls_back(source, capsys):
    """Behaviours of the action or the observation are recorded in lockstep, the sequential
    loop's to the bit; env.unwrapped.state needs the env object, so such a run falls back to the
    per-individual loop, for a reason naming the recorder's missing lockstep form (the run's
    start-up warning; the handler itself prints nothing)."""
    base = make_spec("CartPole-v1", number_fitness_runs=2)
    novelty = {"behavioral_max_length": 20, "behavioral_interval": 3, "behavior_source": source}
    spec = RunnerSpec(
        environment=base.environment,
        episode_runner=base.episode_runner,
        novelty=parse(NoveltyConfig, novelty, "novelty"),
    )
    template = make_brain_template("FFNN", spec)
    genomes, seeds = population(template, 5, shared_seed=True)
    sequential, vectorized = evaluate_both(template, spec, genomes, seeds)
    assert capsys.readouterr().err == ""
    if source == "state":
        assert fallback_reason(template, spec) == (
            "novelty.behavior_source: recorder 'behavior' has no lockstep form "
            "(env.unwrapped.state needs the env object); write Behavior.lanes() (see "
            "docs/measurements.md) to record it in the lockstep loop"
        )
    else:
        assert fallback_reason(template, spec) == ""
    assert as_tuples(vectorized) == as_tuples(sequential)
    assert any(r.behavior is not None and r.behavior.any() for r in sequential)
    for a, b in zip(sequential, vectorized):
        assert a.behavior is not None and b.behavior is not None
        assert a.behavior.tobytes() == b.behavior.tobytes()


def test_bad_input_gives_clear_errors():
    """Native mode on an env without a native vector env, an unknown mode and a wrongly shaped
    genome array are one-line errors naming the problem."""
    spec = make_spec("Pendulum-v1")
    template = make_brain_template("FFNN", spec)
    with pytest.raises(ValueError, match="Pendulum-v1.*no native vector env.*auto"):
        VectorizedWorkerState(template, spec, mode="native")
    with pytest.raises(ValueError, match="mode 'fast' is unknown"):
        VectorizedWorkerState(template, spec, mode="fast")  # type: ignore[arg-type]
    state = VectorizedWorkerState(template, spec)
    try:
        with pytest.raises(ValueError, match=r"expected \(P, "):
            state.evaluate(np.zeros((2, template.genome_size + 1)), np.zeros(2))
        with pytest.raises(ValueError, match="one per genome"):
            state.evaluate(np.zeros((2, template.genome_size)), np.zeros(3))
    finally:
        state.close()
    with pytest.raises(RuntimeError, match="start"):
        VectorizedHandler().batch_evaluate(np.zeros((1, 1)), np.zeros(1))


def test_batched_brain_rngs_are_the_streams_of_brain_rng():
    """brain_rngs (one SeedSequence per distinct seed) gives every individual the stream that
    brain_rng(seed, episode) gives, and separate generator objects for equal seeds."""
    seeds = np.array([7, 2**32 - 1, 7, 0, 123456789], dtype=np.uint32)
    for episode in (0, 3):
        fast = brain_rngs(seeds, episode)
        assert len({id(g) for g in fast}) == len(seeds)
        for seed, generator in zip(seeds, fast):
            expected = brain_rng(int(seed), episode).standard_normal(20)
            np.testing.assert_array_equal(generator.standard_normal(20), expected)
        assert episode_seeds(seeds, episode) == [episode_seed(int(s), episode) for s in seeds]
