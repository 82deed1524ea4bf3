"""A run's results do not depend on how many BLAS threads the process may use."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from threadpoolctl import threadpool_limits

from neuro_evolution.config.tree import load_config
from neuro_evolution.evaluation.pools.options import evaluation_config
from neuro_evolution.run.experiment import Experiment

ROOT = Path(__file__).resolve().parents[2]


def test_cma_es_run_is_identical_with_one_or_two_blas_threads():
    """OpenBLAS splits CMA-ES's eigendecomposition differently for 1 and 2 threads, and the
    last bits differ; the experiment runs its optimizer on one thread, so the machine's core
    count (or a sweep's thread limit) cannot change a run (this 78-gene run diverged at
    generation 3 before)."""
    config = load_config(ROOT / "configs" / "cartpole.json")
    config = dataclasses.replace(
        config,
        number_generations=5,
        optimizer=dataclasses.replace(config.optimizer, population_size=20),
        evaluation=evaluation_config("sequential"),
    )
    logs = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            experiment = Experiment(config)
            experiment.run(progress=False)
        logs.append(
            [{k: v for k, v in r.to_dict().items() if k != "wall_time"} for r in experiment.log]
        )
    assert experiment.template.genome_size == 78
    assert logs[0] == logs[1]
