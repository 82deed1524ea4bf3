"""Benchmark of the evaluation handlers: per-generation overhead and 2-worker speed-up.

Two measurements, all handlers in one run, each handler alone on the machine while it is measured
(started, timed, closed, then the next: an idle Dask scheduler runs an event loop inside this
process, which would otherwise slow the sequential baseline and inflate the speed-ups), medians
printed:

1. Overhead: population 200 on CartPole-v1 with ``max_steps_per_run=1`` (one env step per
   genome, so env work is negligible). Printed: the wall time of one ``batch_evaluate`` per
   handler, and overhead = handler time - sequential time of the same batch.
2. Speed-up: population 100 on env-heavy tasks (LunarLander-v3, whose random brains crash
   after uneven episode lengths, and HalfCheetah-v5, whose episodes all run to the 400-step cut),
   a few generations; speed-up = sequential median / handler median.

Targets on a 2-core machine: speed-up mp >= 1.8x, dask >= 1.6x; overhead mp <= 20 ms,
dask <= 150 ms. Usage: ``python scripts/bench_handlers.py [--envs HalfCheetah-v5] [--gens 4]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.core.schema import parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig, RunnerSpec
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.dask_handler import DaskHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import template_for_env
from neuro_evolution.support.seeds import generation_seeds


def make_handlers(workers: int) -> dict[str, Callable[[], EvaluationHandler]]:
    """Factories of the handlers compared: sequential, mp and Dask LocalCluster."""
    return {
        "sequential": SequentialHandler,
        f"mp ({workers} workers, forkserver)": lambda: MultiprocessingHandler(
            workers=workers, start_method="forkserver"
        ),
        f"dask LocalCluster ({workers} workers)": lambda: DaskHandler(workers=workers),
    }


def measure(
    handlers: dict[str, Callable[[], EvaluationHandler]],
    env_id: str,
    runner: EpisodeRunnerConfig,
    population: int,
    generations: int,
) -> dict[str, list[float]]:
    """Seconds per generation for each handler (first, warm-up generation not counted)."""
    environment = parse(EnvironmentConfig, {"id": env_id}, "environment")
    spec = RunnerSpec(environment=environment, episode_runner=runner)
    brain = parse_brain_config({"type": "FFNN", "hidden_layers": [16]}, "brain")
    template = template_for_env(environment, brain, np.random.default_rng(0))
    times: dict[str, list[float]] = {name: [] for name in handlers}
    reference: list[list[float]] = []
    for name, factory in handlers.items():
        rng = np.random.default_rng(1)  # the same genomes for every handler
        handler = factory()
        try:
            handler.start(template, spec)
            for generation in range(generations + 1):
                genomes = rng.normal(scale=0.5, size=(population, template.genome_size))
                seeds = generation_seeds(0, generation, population, shared=False)
                began = time.perf_counter()
                results = handler.batch_evaluate(genomes, seeds)
                elapsed = time.perf_counter() - began
                if generation > 0:
                    times[name].append(elapsed)
                fitness = [r.fitness for r in results]
                if len(reference) <= generation:
                    reference.append(fitness)
                elif fitness != reference[generation]:
                    raise AssertionError(f"{name} gave different results from sequential")
        finally:
            handler.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--envs",
        nargs="+",
        default=["LunarLander-v3", "HalfCheetah-v5"],
        help="env-heavy tasks for the speed-up",
    )
    parser.add_argument("--gens", type=int, default=6, help="timed generations of the heavy task")
    parser.add_argument("--overhead-gens", type=int, default=15, help="timed cheap generations")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}")
    handlers = make_handlers(args.workers)
    cheap = measure(
        handlers,
        "CartPole-v1",
        EpisodeRunnerConfig(max_steps_per_run=1),
        population=200,
        generations=args.overhead_gens,
    )
    heavy = {
        env_id: measure(
            handlers,
            env_id,
            EpisodeRunnerConfig(max_steps_per_run=400),
            population=100,
            generations=args.gens,
        )
        for env_id in args.envs
    }

    sequential_name = next(iter(handlers))
    cheap_seq = statistics.median(cheap[sequential_name])
    print(
        f"\n1) overhead: CartPole-v1, population 200, max_steps_per_run=1, "
        f"median of {args.overhead_gens} generations"
    )
    print(f"   {'handler':34s} {'batch time':>11s} {'overhead vs sequential':>24s}")
    for name, values in cheap.items():
        median = statistics.median(values)
        print(f"   {name:34s} {median * 1e3:8.1f} ms {(median - cheap_seq) * 1e3:21.1f} ms")
    for number, (env_id, times) in enumerate(heavy.items(), start=2):
        heavy_seq = statistics.median(times[sequential_name])
        print(f"\n{number}) speed-up: {env_id}, population 100, median of {args.gens} generations")
        print(f"   {'handler':34s} {'generation':>11s} {'speed-up':>9s}")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"   {name:34s} {median:9.2f} s {heavy_seq / median:8.2f}x")
    print("\nall handlers gave identical fitness in every generation")
    print(f"load average after: {os.getloadavg()[0]:.2f} (other processes share these cores)")


if __name__ == "__main__":
    main()
