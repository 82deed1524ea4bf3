"""``episode_runner.training_reset_seeds``: training episode k of every individual resets with
the k-th named seed, on every handler, while validation keeps its held-out seeds; bad seeds are
one-line config errors."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from helpers import Setup, as_tuples, make_setup, small_config

from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.evaluation.episodes.runner import EvaluationContext
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.support.seeds import TRAINING_SEED_LIMIT

NAMED = (52, 7)


def named_setup() -> Setup:
    """``make_setup``'s CartPole generation (2 episodes, per-individual base seeds) with the
    reset seeds named."""
    setup = make_setup("CartPole-v1", count=12)
    rules = dataclasses.replace(setup.spec.episode_runner, training_reset_seeds=NAMED)
    return setup._replace(spec=dataclasses.replace(setup.spec, episode_runner=rules))


def evaluate(handler: EvaluationHandler, setup: Setup, context: Any = None) -> list[tuple]:
    with handler:
        handler.start(setup.template, setup.spec)
        if context is None:
            return as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds))
        return as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds, context))


def reset_with_named_seeds(setup: Setup) -> list[tuple]:
    """Each genome's two episodes reset with the named seeds themselves, scored as one
    evaluation: what the option promises (the FFNN draws no brain noise)."""
    per_seed = []
    for seed in NAMED:
        seeds = np.full(len(setup.genomes), seed, dtype=np.int64)
        with SequentialHandler() as handler:
            handler.start(setup.template, setup.spec)
            per_seed.append(
                handler.batch_evaluate(setup.genomes, seeds, EvaluationContext(validation=True))
            )
    return [
        (
            (a.fitness + b.fitness) / 2,
            a.steps + b.steps,
            a.terminated + b.terminated,
            a.truncated + b.truncated,
        )
        for a, b in zip(*per_seed, strict=True)
    ]


@pytest.mark.parametrize("case", ["sequential", "vectorized", "mp"])
def test_every_handler_resets_training_episode_k_with_the_kth_named_seed(case: str) -> None:
    setup = named_setup()
    expected = reset_with_named_seeds(setup)
    handlers: dict[str, Any] = {
        "sequential": SequentialHandler,
        "vectorized": VectorizedHandler,
        "mp": lambda: MultiprocessingHandler(workers=2, start_method="forkserver"),
    }
    results = evaluate(handlers[case](), setup)
    assert [r[:2] for r in results] == [e[:2] for e in expected]
    assert results == expected
    derived = evaluate(SequentialHandler(), make_setup("CartPole-v1", count=12))
    assert derived != results  # without the option the episodes are other ones


def test_validation_keeps_its_held_out_seeds_with_named_training_seeds() -> None:
    data = small_config(
        episode_runner={"number_fitness_runs": 1, "training_reset_seeds": [52]},
        validation={"every_generations": 1, "episodes": 3},
    )
    experiment = Experiment(parse_config(data), quiet=True)
    try:
        experiment.step()
        training = experiment.training_request(experiment.optimizer.ask())
        validation = experiment.validation_request(experiment.candidate())
    finally:
        experiment.close()
    assert experiment.config.episode_runner.reset_seed(int(training.seeds[0]), 0) == 52
    assert all(int(seed) >= TRAINING_SEED_LIMIT for seed in validation.seeds)


@pytest.mark.parametrize(
    ("seeds", "says"),
    [
        ([52], "names 1 seeds for 2 episodes"),
        ([52, -1], "-1 is not a training reset seed"),
        ([52, 2**32], f"{2**32} is not a training reset seed"),
        ([52, True], "[1]: must be an integer, got True"),
    ],
)
def test_bad_training_reset_seeds_are_one_line_config_errors(seeds: list, says: str) -> None:
    data = small_config(episode_runner={"number_fitness_runs": 2, "training_reset_seeds": seeds})
    with pytest.raises(ConfigError) as error:
        parse_config(data)
    message = str(error.value)
    assert "episode_runner.training_reset_seeds" in message
    assert says in message
    assert "\n" not in message
