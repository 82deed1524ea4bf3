"""Benchmark: checkpoint size and write time, and their cost against a generation's wall time.

1. Population 600, a 50-neuron CTRNN on LunarLander-v3 (genome of a few thousand genes): the
   optimizer state after one real ask/tell (fitness drawn from a seeded generator, since what is
   measured is the checkpoint, not the episodes), then the median time of a full checkpoint write
   (encode, atomic write with fsync, status file, pruning) and the file size. MU_ES (mu 100 +
   lambda 500 = 600 evaluated) and CMA_ES (population 600; C and B are genome_size^2 floats each).
2. The ratio of one checkpoint write to one generation's wall time on ``configs/lunarlander.json``
   (or, when that file is missing, an equivalent: CTRNN 20 neurons, MU_ES 10+40, 3 episodes),
   both measured in this run with the sequential handler. Target: < 5 %.

The machine has 2 cores shared with other work: figures are medians; run it on a quiet machine
for stable numbers. ``python scripts/bench_checkpoint.py [--repeats 7] [--skip-cma]``
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.config.tree import parse_config
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.run.checkpoint import Checkpointer
from neuro_evolution.run.directory import LogRow
from neuro_evolution.run.experiment import Experiment

ROOT = Path(__file__).resolve().parent.parent
LUNAR_CONFIG = ROOT / "configs" / "lunarlander.json"
EQUIVALENT_LUNAR: dict[str, Any] = {
    "environment": {"id": "LunarLander-v3"},
    "random_seed": 1,
    "number_generations": 2,
    "optimizer": {"type": "MU_ES", "mu": 10, "lambda_": 40},
    "brain": {"type": "CTRNN", "number_neurons": 20},
    "episode_runner": {"number_fitness_runs": 3},
}
BIG_BRAIN = {"type": "CTRNN", "number_neurons": 50}
BIG_OPTIMIZERS = {
    "MU_ES": {"type": "MU_ES", "mu": 100, "lambda_": 500},  # 600 evaluated: parents + offspring
    "CMA_ES": {"type": "CMA_ES", "population_size": 600},
}


def timed_writes(experiment: Experiment, run_dir: Path, repeats: int) -> tuple[list[float], int]:
    """Seconds of each of ``repeats`` checkpoint writes, and the checkpoint's size in bytes."""
    checkpointer = Checkpointer(experiment)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        path = checkpointer.write(experiment)
        times.append(time.perf_counter() - start)
    return times, path.stat().st_size


def synthetic_row(fitness: np.ndarray) -> LogRow:
    """A log row of generation 0 for seeded fitness (no episodes were run)."""
    low, mean, high = float(fitness.min()), float(fitness.mean()), float(fitness.max())
    return LogRow(
        generation=0,
        evaluations=len(fitness),
        env_steps=0,
        env_steps_total=0,
        fitness_min=low,
        fitness_mean=mean,
        fitness_max=high,
        fitness_std=float(fitness.std()),
        best_so_far=high,
        validation_mean=None,
        validation_std=None,
        validation_min=None,
        validation_steps=None,
        wall_time=0.0,
    )


def one_synthetic_generation(experiment: Experiment) -> int:
    """A real ask/tell with seeded fitness: the optimizer state of a running population."""
    experiment.start()
    genomes = experiment.optimizer.ask()
    fitness = np.random.default_rng(0).normal(size=len(genomes))
    experiment.hall_of_fame.update(genomes, fitness, 0)
    experiment.optimizer.tell(Evaluations(fitness, experiment.hall_of_fame))
    experiment.log.append(synthetic_row(fitness))
    experiment.generation = 1
    return len(genomes)


def bench_big(optimizer: str, repeats: int, workdir: Path) -> None:
    """Part 1 for one optimizer."""
    data = copy.deepcopy(EQUIVALENT_LUNAR)
    data.update(brain=BIG_BRAIN, optimizer=BIG_OPTIMIZERS[optimizer], number_generations=10)
    start = time.perf_counter()
    experiment = Experiment(parse_config(data), run_dir=workdir / f"big-{optimizer}")
    population = one_synthetic_generation(experiment)
    setup = time.perf_counter() - start
    times, size = timed_writes(experiment, workdir / f"big-{optimizer}", repeats)
    experiment.close()
    print(
        f"{optimizer:6s} population {population}, CTRNN 50 neurons, genome size "
        f"{experiment.template.genome_size}: checkpoint "
        f"{size / 1e6:.2f} MB, write median {statistics.median(times) * 1e3:.1f} ms "
        f"(min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}, n={repeats}; "
        f"setup incl. one ask/tell {setup:.1f} s)"
    )


def bench_ratio(repeats: int, workdir: Path) -> None:
    """Part 2: checkpoint write time / generation wall time on LunarLander."""
    if LUNAR_CONFIG.is_file():
        data = json.loads(LUNAR_CONFIG.read_text())
        source = str(LUNAR_CONFIG.relative_to(ROOT))
    else:
        data = copy.deepcopy(EQUIVALENT_LUNAR)
        source = "equivalent of configs/lunarlander.json (file missing): " + json.dumps(
            {k: data[k] for k in ("optimizer", "brain", "episode_runner")}
        )
    data["number_generations"] = 2
    data["evaluation"] = {"handler": "sequential"}
    experiment = Experiment(parse_config(data))
    generations = []
    while not experiment.done:
        start = time.perf_counter()
        experiment.step()
        generations.append(time.perf_counter() - start)
    experiment.attach_run_directory(workdir / "lunar")
    times, size = timed_writes(experiment, workdir / "lunar", repeats)
    experiment.close()
    generation = statistics.median(generations)
    write = statistics.median(times)
    steps = sum(row.env_steps for row in experiment.log) / len(experiment.log)
    print(f"LunarLander: {source}")
    print(
        f"  generation wall time median {generation:.2f} s over {len(generations)} generations "
        f"({', '.join(f'{g:.2f}' for g in generations)} s; {steps:.0f} env steps each, "
        f"sequential handler), genome size {experiment.template.genome_size}"
    )
    print(
        f"  checkpoint {size / 1e3:.1f} kB, write median {write * 1e3:.2f} ms (n={repeats}); "
        f"ratio write / generation = {100 * write / generation:.3f} % (target < 5 %)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="checkpoint writes per case")
    parser.add_argument("--skip-cma", action="store_true", help="skip the CMA_ES case")
    args = parser.parse_args()
    print(
        "note: figures are medians of this run on a 2-core machine that other processes may share"
    )
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        bench_big("MU_ES", args.repeats, workdir)
        if not args.skip_cma:
            bench_big("CMA_ES", max(3, args.repeats // 2), workdir)
        bench_ratio(args.repeats, workdir)


if __name__ == "__main__":
    main()
