"""Wrapped and custom envs give identical results on every handler: sequential, mp (forkserver,
spawn), Dask on a real LocalCluster, and vectorized (which wraps each sub-env of a SyncVectorEnv).
A worker process builds the env from the config alone: it imports the modules itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from helpers import (
    WRAPPED_BLACKJACK,
    as_tuples,
    config_setup,
    line_target_config,
    sequential_results,
    small_config,
    without_time,
)

from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.evaluation.episodes.wrappers import REWARD_OFFSET
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.dask_handler import DaskHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import Experiment

CASES = ["mp-forkserver", "mp-spawn", "mp-forkserver-vectorized", "dask-local", "vectorized"]


def blackjack_data() -> dict[str, Any]:
    return small_config(environment=WRAPPED_BLACKJACK, episode_runner={"number_fitness_runs": 5})


@pytest.fixture(scope="module")
def dask_local() -> Iterator[DaskHandler]:
    """One LocalCluster for the module (each start() registers a new plugin on it)."""
    handler = DaskHandler(workers=2)
    try:
        yield handler
    finally:
        handler.close()


@pytest.fixture
def handler_for(dask_local: DaskHandler) -> Iterator[Callable[[str], EvaluationHandler]]:
    """Case name -> a fresh mp pool / vectorized handler (closed afterwards) or the Dask one."""
    made: list[EvaluationHandler] = []

    def make(case: str) -> EvaluationHandler:
        if case == "dask-local":
            return dask_local
        if case == "vectorized":
            handler: EvaluationHandler = VectorizedHandler()
        else:
            _, method, *vectorized = case.split("-")
            handler = MultiprocessingHandler(
                workers=2, start_method=method, vectorize=bool(vectorized)
            )
        made.append(handler)
        return handler

    yield make
    for handler in made:
        handler.close()


@pytest.mark.parametrize("case", CASES)
def test_wrapped_blackjack_matches_sequential_exactly(
    case: str, handler_for: Callable[[str], EvaluationHandler]
) -> None:
    """Blackjack-v1 + FlattenObservation + a reward offset: same results on every handler."""
    setup = config_setup(blackjack_data())
    reference = sequential_results(setup)
    assert len({r[0] for r in reference}) > 3  # the genomes really differ
    assert any(r[0] % 0.25 == 0 and r[0] % 1 != 0 for r in reference)  # the offset is applied
    handler = handler_for(case)
    handler.start(setup.template, setup.spec)
    assert as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds)) == reference
    if case == "vectorized":
        assert "SyncVectorEnv (wrappers are applied to each sub-env" in handler.describe()


@pytest.mark.parametrize("case", ["mp-forkserver", "dask-local", "vectorized"])
def test_wrapped_blackjack_run_logs_match_sequential(
    case: str, handler_for: Callable[[str], EvaluationHandler]
) -> None:
    """A 3-generation run gives the same log and hall of fame on every handler."""
    data = blackjack_data()
    reference = Experiment(parse_config(data), handler=SequentialHandler())
    reference.run()
    reference.close()
    experiment = Experiment(parse_config(data), handler=handler_for(case))
    experiment.run()
    assert without_time(experiment.log) == without_time(reference.log)
    np.testing.assert_array_equal(experiment.hall_of_fame.genomes, reference.hall_of_fame.genomes)


def test_cartpole_with_a_reward_offset_leaves_the_native_vector_env() -> None:
    """CartPole's native vector env steps the bare env; with a wrapper the vectorized handler
    takes SyncVectorEnv and still matches sequential, where each step earns 1 - 0.5."""
    wrapped = {
        "id": "CartPole-v1",
        "wrappers": [{"name": REWARD_OFFSET, "kwargs": {"offset": -0.5}}],
    }
    setup = config_setup(small_config(environment=wrapped))
    reference = sequential_results(setup)
    with VectorizedHandler() as handler:
        handler.start(setup.template, setup.spec)
        assert "SyncVectorEnv" in handler.describe()
        assert as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds)) == reference
    runs = setup.spec.episode_runner.number_fitness_runs
    assert all(fitness * runs == 0.5 * steps for fitness, steps, _, _ in reference)
    with VectorizedHandler(mode="native") as handler, pytest.raises(ValueError, match="wrappers"):
        handler.start(setup.template, setup.spec)


@pytest.mark.slow
@pytest.mark.parametrize("way", ["imports", "module_id", "entry_point"])
@pytest.mark.parametrize("case", ["mp-spawn", "mp-forkserver", "dask-fresh"])
def test_custom_env_is_made_by_workers_that_never_imported_it(way: str, case: str) -> None:
    """Fresh worker processes (spawn, forkserver, a new LocalCluster) import the env's module
    themselves -- for an id registered by ``imports`` too -- and match sequential."""
    setup = config_setup(line_target_config(way), count=12)
    reference = sequential_results(setup)
    if case == "dask-fresh":
        handler: EvaluationHandler = DaskHandler(workers=1)
    else:
        handler = MultiprocessingHandler(workers=1, start_method=case.split("-")[1])
    with handler:
        handler.start(setup.template, setup.spec)
        assert as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds)) == reference


def test_a_module_missing_on_the_workers_is_one_config_error_at_start() -> None:
    """A worker that cannot import a module of ``imports`` (say, not installed on a cluster
    node) fails ``start`` with the same one-line ConfigError the main process would give."""
    setup = config_setup(blackjack_data(), count=4)
    spec = dataclasses.replace(setup.spec, imports=("no_such_module_on_workers",))
    missing = r"^imports\[0\]: cannot import module 'no_such"
    with (
        MultiprocessingHandler(workers=1, start_method="spawn") as handler,
        pytest.raises(ConfigError, match=missing),
    ):
        handler.start(setup.template, spec)
