"""``episode_runner.training_reward_shift``: a training evaluation's fitness is the true return
less shift x steps, on every handler, while held-out validation episodes (and replay) score the
true return -- ARS's ``shift`` (Mania et al. 2018; modestyachts/ARS ``code/ars.py``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from helpers import (
    Setup,
    as_tuples,
    make_setup,
    parse,
    parse_brain_config,
    require,
    sequential_and_jax_results,
    template_for_env,
)

from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import (
    EpisodeRunnerConfig,
    EvaluationContext,
    RunnerSpec,
)
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler

SHIFT = 0.375  # a binary fraction: return - shift * steps is exact in float64
VALIDATION = EvaluationContext(validation=True)


def shifted(setup: Setup, shift: float) -> Setup:
    rules = dataclasses.replace(setup.spec.episode_runner, training_reward_shift=shift)
    return setup._replace(spec=dataclasses.replace(setup.spec, episode_runner=rules))


def evaluate(handler: EvaluationHandler, setup: Setup, context: Any) -> list[tuple]:
    with handler:
        handler.start(setup.template, setup.spec)
        return as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds, context))


HANDLERS: dict[str, Any] = {
    "sequential": SequentialHandler,
    "vectorized": VectorizedHandler,
    "mp": lambda: MultiprocessingHandler(workers=2, start_method="forkserver"),
}


@pytest.mark.parametrize("case", list(HANDLERS))
def test_training_fitness_is_return_less_shift_times_steps_and_validation_is_true(
    case: str,
) -> None:
    """Training: fitness = true mean return - shift * steps / episodes (steps are the
    evaluation's total over its 2 episodes); validation: the unshifted handler's result, bit for
    bit; every handler gives the sequential handler's numbers."""
    plain = make_setup("CartPole-v1", count=12)
    setup = shifted(plain, SHIFT)
    runs = setup.spec.episode_runner.number_fitness_runs
    true = evaluate(SequentialHandler(), plain, EvaluationContext())
    expected = [(f - SHIFT * s / runs, s, t, u) for f, s, t, u in true]
    training = evaluate(HANDLERS[case](), setup, EvaluationContext())
    assert training == expected
    assert training != true  # the shift did change fitness (CartPole's reward is 1 a step)
    held_out = evaluate(HANDLERS[case](), setup, VALIDATION)
    assert held_out == evaluate(SequentialHandler(), plain, VALIDATION)


def test_replay_and_validation_runner_episode_is_never_shifted() -> None:
    """``EpisodeRunner.run_episode`` (validation, replay, export checks) scores the true return."""
    plain = make_setup("CartPole-v1", count=3)
    setup = shifted(plain, SHIFT)
    results = []
    for case in (plain, setup):
        runner = case.spec.make()
        try:
            brain = case.template.build(case.genomes[0])
            results.append(runner.run_episode(brain, 17).fitness)
        finally:
            runner.close()
    assert results[0] == results[1]


def test_jax_handler_shifts_training_and_not_validation() -> None:
    """The compiled loop's results follow the same rule as the sequential runner's."""
    require("jax")
    environment = parse(EnvironmentConfig, {"id": "CartPole-v1", "backend": "gymnax"}, "env")
    rules = EpisodeRunnerConfig(number_fitness_runs=2, training_reward_shift=SHIFT)
    spec = RunnerSpec(environment=environment, episode_runner=rules)
    brain = parse_brain_config({"type": "FFNN", "hidden_layers": [4]}, "brain")
    template = template_for_env(environment, brain, np.random.default_rng(1))
    genomes = np.random.default_rng(2).normal(0.0, 1.0, (4, template.genome_size))
    seeds = np.array([11, 12, 13, 14])
    (train_seq, train_jax), (val_seq, val_jax) = sequential_and_jax_results(
        template, spec, genomes, seeds
    )
    for a, b in zip(train_jax + val_jax, train_seq + val_seq, strict=True):
        assert a.steps == b.steps
        assert a.fitness == pytest.approx(b.fitness, abs=1e-9)
    for result in val_seq:  # CartPole pays 1 a step: the true return is the step count
        assert result.fitness == result.steps
    for result in train_seq:
        assert result.fitness == pytest.approx((1 - SHIFT) * result.steps / 2)
