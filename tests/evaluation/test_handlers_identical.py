"""Every handler gives bit-identical results: sequential, in-process vectorized, mp (each start
method, 1 and 2 workers, vectorized), Dask on a LocalCluster and Dask on a real external
`dask scheduler` + `dask worker`s; for a deterministic FFNN with per-individual episode seeds and
for a noisy CTRNN whose generation shares one seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from helpers import Setup, external_dask_cluster, make_setup

from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.episodes.runner import EvaluationResult
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.dask_handler import DaskHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.directory import LogRow

MP_CASES = [f"mp-{method}-{n}" for method in ("fork", "forkserver", "spawn") for n in (1, 2)]
CASES = [*MP_CASES, "mp-forkserver-2-vectorized", "vectorized", "dask-local", "dask-external"]
CASES += ["dask-external-vectorized"]

EXPERIMENT: dict[str, Any] = {
    "environment": {"id": "CartPole-v1"},
    "random_seed": 21,
    "number_generations": 3,
    "optimizer": {"type": "MU_ES", "mu": 8, "lambda_": 24},
    "brain": {"type": "FFNN", "hidden_layers": [5]},
    "episode_runner": {
        "number_fitness_runs": 2,
        "max_steps_per_run": 120,
        "fix_seed_for_generation": False,
    },
}
# A stateful, noisy CTRNN (per-neuron bounds, y0, perturbations) whose generation shares seeds.
CTRNN_EXPERIMENT: dict[str, Any] = {
    **EXPERIMENT,
    "brain": {
        "type": "CTRNN",
        "number_neurons": 5,
        "optimize_y0": True,
        "optimize_state_boundaries": "per_neuron",
        "parameter_perturbations": 0.02,
        "w_mask": "random",
        "w_mask_param": 0.5,
    },
    "episode_runner": {**EXPERIMENT["episode_runner"], "fix_seed_for_generation": True},
}
EXPERIMENTS = {"ffnn-own-seeds": EXPERIMENT, "ctrnn-noisy-shared-seed": CTRNN_EXPERIMENT}
# The CTRNN experiment runs on one case of each kind of machinery (the start methods are
# covered by the FFNN one).
CTRNN_CASES = ["vectorized", "mp-forkserver-2", "mp-forkserver-2-vectorized", "dask-local"]
CTRNN_CASES += ["dask-external-vectorized"]
LOG_CASES = [("ffnn-own-seeds", case) for case in CASES]
LOG_CASES += [("ctrnn-noisy-shared-seed", case) for case in CTRNN_CASES]


@pytest.fixture(scope="module")
def setup() -> Setup:
    """36 random CartPole genomes with per-individual seeds."""
    return make_setup("CartPole-v1", count=36)


@pytest.fixture(scope="module")
def dask_handlers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, DaskHandler]]:
    """One LocalCluster handler and two handlers on one external cluster, shared by the module."""
    with external_dask_cluster(tmp_path_factory.mktemp("dask")) as cluster:
        handlers = {
            "dask-local": DaskHandler(workers=2),
            "dask-external": DaskHandler(scheduler=cluster.address),
            "dask-external-vectorized": DaskHandler(scheduler=cluster.address, vectorize=True),
        }
        try:
            yield handlers
        finally:
            for handler in handlers.values():
                handler.close()


@pytest.fixture
def handler_for(
    dask_handlers: dict[str, DaskHandler],
) -> Iterator[Callable[[str], EvaluationHandler]]:
    """Case name -> handler: a fresh mp handler (closed after the test) or a shared Dask one."""
    made: list[EvaluationHandler] = []

    def make(case: str) -> EvaluationHandler:
        if case in dask_handlers:
            return dask_handlers[case]
        if case == "vectorized":
            made.append(VectorizedHandler())
            return made[-1]
        _, method, workers, *vectorized = case.split("-")
        handler = MultiprocessingHandler(
            workers=int(workers), start_method=method, vectorize=bool(vectorized)
        )
        made.append(handler)
        return handler

    yield make
    for handler in made:
        handler.close()


def _as_tuples(results: list[EvaluationResult]) -> list[tuple]:
    return [(r.fitness, r.steps, r.terminated, r.truncated) for r in results]


@pytest.mark.parametrize("case", CASES)
def test_batch_evaluate_matches_sequential_exactly(
    case: str, setup: Setup, handler_for: Callable[[str], EvaluationHandler]
) -> None:
    """Fitness, steps and episode-end counts equal the sequential handler's, in order."""
    with SequentialHandler() as sequential:
        sequential.start(setup.template, setup.spec)
        reference = sequential.batch_evaluate(setup.genomes, setup.seeds)
    assert len({r.fitness for r in reference}) > 10  # the genomes really differ
    handler = handler_for(case)
    handler.start(setup.template, setup.spec)
    assert _as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds)) == _as_tuples(reference)
    # A second generation on the same long-lived workers, in a different order, also matches.
    order = np.random.default_rng(0).permutation(len(setup.genomes))
    again = handler.batch_evaluate(setup.genomes[order], setup.seeds[order])
    assert _as_tuples(again) == _as_tuples([reference[i] for i in order])


@pytest.fixture(scope="module")
def sequential_experiment() -> Callable[[str], Any]:
    """Experiment name -> the reference: that experiment run by the sequential handler."""
    from neuro_evolution.run.experiment import Experiment

    done: dict[str, Any] = {}

    def reference(name: str) -> Any:
        if name not in done:
            experiment = Experiment(
                parse_config(EXPERIMENTS[name]), handler=SequentialHandler(), quiet=True
            )
            experiment.run()
            experiment.handler.close()
            done[name] = experiment
        return done[name]

    return reference


def _without_wall_time(log: list[LogRow]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.to_dict().items() if k != "wall_time"} for row in log]


@pytest.mark.parametrize(("name", "case"), LOG_CASES)
def test_experiment_log_and_hall_of_fame_match_sequential(
    name: str,
    case: str,
    sequential_experiment: Callable[[str], Any],
    handler_for: Callable[[str], EvaluationHandler],
) -> None:
    """A 3-generation run gives the same log (wall time aside) and hall of fame on any handler."""
    from neuro_evolution.run.experiment import Experiment

    experiment = Experiment(parse_config(EXPERIMENTS[name]), handler=handler_for(case), quiet=True)
    experiment.run()
    reference = sequential_experiment(name)
    assert len(experiment.log) == 3
    assert _without_wall_time(experiment.log) == _without_wall_time(reference.log)
    np.testing.assert_array_equal(experiment.hall_of_fame.genomes, reference.hall_of_fame.genomes)
    np.testing.assert_array_equal(experiment.hall_of_fame.fitness, reference.hall_of_fame.fitness)
