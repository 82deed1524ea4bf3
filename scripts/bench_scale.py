"""Benchmark: parallel efficiency of the mp and Dask handlers against the number of workers.

The env is ``neuro_evolution/Latency-v0``: each step sleeps ``--step-ms`` (2.5 ms) and uses no
CPU, as a heavy simulator on a core of its own would, so 32 workers can be measured on 2 cores:
what is left to limit scaling is the handler's own cost. Each configuration is a real run
(``Experiment`` with a run directory: PGPE tell, log, hall of fame, plot, a checkpoint every
generation) of population ``--population`` (256), one ``--steps``-step (40) episode each.

Per worker count ``w`` it prints the median over ``--gens`` timed generations (after one warm-up)
of:

- ``gen``: the wall time from one generation's end to the next's;
- ``ideal``: the sequential work over ``w``, P x steps x the per-step time measured here by
  playing an episode in this process (sleep overshoot included);
- ``eff``: parallel efficiency, ideal / gen (in parentheses: with the mean generation time, which
  includes the generations that draw the plot, and against the nominal sleeps alone,
  P x steps x step-ms / w, which counts the sleep overshoot and the episodes' CPU as overhead);
- ``main``: the main process's work between generations (ask, tell, hall of fame, log, plot,
  checkpoint), measured directly as gen minus the time inside ``batch_evaluate``;
- ``fixed``: the whole generation with zero sleep (same run, ``step_seconds=0``): scheduling and
  gathering the chunks, the main-process work and the episodes' own CPU (brain and env, measured
  alone in this process and printed in the header); ``overhead`` is ``fixed`` less that CPU
  spread over min(w, cores) cores: the per-generation cost of the handler itself.

Then a fit of gen(w) = F + W / w over the measured counts separates the fixed cost F from the
work W, and the line "90% needs >= 9 F of work per worker" says where scaling stops on a real
cluster: a generation keeps 90% efficiency while each worker's share of it takes at least nine
times the fixed cost. On 2 cores many Dask worker processes compete with each other for the CPU
(each runs an event loop), which a real cluster with a core per worker would not do.

The plot is drawn in a background thread (``run/plots.py``), so the main process's own work
between generations is tens of milliseconds: it is printed, so a change that makes it grow shows.

Targets on a 2-core machine: >= 90% at 32 mp workers, >= 85% at 8 Dask workers.
Usage: ``python scripts/bench_scale.py`` (mp 1, 2, 8, 32; Dask 1, 2, 8, 32) or ``--quick``
(mp 8, 32; Dask 8; 3 timed generations, about a minute).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.checkpoint import install_checkpoints
from neuro_evolution.run.experiment import Experiment

ENV = "neuro_evolution.envs:neuro_evolution/Latency-v0"


def config(handler: str, workers: int, population: int, steps: int, step_seconds: float) -> Any:
    """The benchmark's experiment: PGPE on the latency env, a checkpoint every generation."""
    return parse_config(
        {
            "environment": {
                "id": ENV,
                "kwargs": {"step_seconds": step_seconds, "max_steps": steps},
            },
            "random_seed": 1,
            "number_generations": 1000,
            "optimizer": {"type": "PGPE", "population_size": population},
            "brain": {"type": "CTRNN", "number_neurons": 6},
            "episode_runner": {"number_fitness_runs": 1},
            "checkpoint": {"every_generations": 1, "keep": 2},
            "evaluation": {"handler": handler, "workers": workers},
        }
    )


@dataclass
class Timing:
    """Medians of one configuration's timed generations, in seconds."""

    generation: float
    evaluation: float
    mean: float  # mean generation time: the plot, drawn every 5 s, shows here, not in medians

    @property
    def main(self) -> float:
        """The main process's work between evaluations."""
        return self.generation - self.evaluation


def time_generations(experiment_config: Any, generations: int) -> Timing:
    """Median generation and evaluation time of a real run (one warm-up generation first)."""
    with tempfile.TemporaryDirectory(prefix="bench_scale-") as directory:
        experiment = Experiment(experiment_config, quiet=True)
        try:
            experiment.start()
            experiment.attach_run_directory(Path(directory) / "run")
            install_checkpoints(experiment)
            handler = experiment.handler
            evaluate = handler.batch_evaluate
            inside: list[float] = []

            def timed(*args: Any, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return evaluate(*args, **kwargs)
                finally:
                    inside.append(time.perf_counter() - start)

            handler.batch_evaluate = timed  # type: ignore[method-assign]
            experiment.step()  # warm-up: workers build their envs, imports, first compile
            totals, evaluations = [], []
            for _ in range(generations):
                inside.clear()
                start = time.perf_counter()
                experiment.step()
                totals.append(time.perf_counter() - start)
                evaluations.append(sum(inside))
        finally:
            experiment.close()
    return Timing(
        statistics.median(totals), statistics.median(evaluations), statistics.mean(totals)
    )


def step_seconds_here(steps: int, step_seconds: float, episodes: int = 24) -> float:
    """The wall time of one env + brain step, measured by playing episodes in this process."""
    experiment_config = config("sequential", 1, episodes, steps, step_seconds)
    experiment = Experiment(experiment_config, quiet=True)
    try:
        experiment.start()
        genomes = np.zeros((episodes, experiment.template.genome_size))
        seeds = np.arange(episodes, dtype=np.int64)
        start = time.perf_counter()
        results = experiment.handler.batch_evaluate(genomes, seeds)
        seconds = time.perf_counter() - start
    finally:
        experiment.close()
    return seconds / sum(r.steps for r in results)


def fit(workers: list[int], seconds: list[float]) -> tuple[float, float]:
    """Least squares of seconds = fixed + work / workers: (fixed, work)."""
    design = np.column_stack([np.ones(len(workers)), 1.0 / np.asarray(workers, dtype=float)])
    (fixed, work), *_ = np.linalg.lstsq(design, np.asarray(seconds), rcond=None)
    return float(fixed), float(work)


def run_handler(
    name: str, counts: list[int], args: argparse.Namespace, per_step: float, cpu_step: float
) -> list[str]:
    """Print the table of one handler, one row per worker count, and its fit; return the rows of
    the closing markdown table."""
    step_seconds = args.step_ms / 1000
    work = args.population * args.steps * per_step
    nominal = args.population * args.steps * step_seconds  # the sleeps alone
    cpu = args.population * args.steps * cpu_step  # the episodes' own CPU, spread over the cores
    print(
        f"{name}: workers  gen [s]  ideal [s]   eff  (mean) (nominal)  main [ms]  fixed [s]  "
        "(zero-sleep main [ms], overhead [s])",
        flush=True,
    )
    measured, rows = [], []
    for workers in counts:
        cores = min(workers, len(os.sched_getaffinity(0)))
        timing = time_generations(
            config(name, workers, args.population, args.steps, step_seconds), args.gens
        )
        zero = time_generations(config(name, workers, args.population, args.steps, 0.0), args.gens)
        ideal = work / workers
        measured.append(timing.generation)
        line = (
            f"{name}: {workers:7d}  {timing.generation:7.3f}  {ideal:9.3f}  "
            f"{ideal / timing.generation:4.0%}  ({ideal / timing.mean:4.0%})  "
            f"({nominal / workers / timing.generation:4.0%})    "
            f"{1000 * timing.main:9.1f}  "
            f"{zero.generation:9.3f}  ({1000 * zero.main:.1f}, {zero.generation - cpu / cores:.3f})"
        )
        print(line, flush=True)
        rows.append(
            f"| {name} | {workers} | {timing.generation:.3f} | {ideal / timing.generation:.0%} | "
            f"{nominal / workers / timing.generation:.0%} | {1000 * timing.main:.0f} | "
            f"{zero.generation - cpu / cores:.3f} |"
        )
    if len(counts) >= 2:
        fixed, fitted = fit(counts, measured)
        line = (
            f"{name}: fit gen(w) = {fixed:.3f} s + {fitted:.2f} s / w (work measured {work:.2f} s);"
        )
        if fixed > 0:
            line += f" 90% needs >= {9 * fixed:.2f} s of work per worker per generation"
        else:  # the fit cannot tell F from zero: bound it by the zero-sleep generation instead
            line += " F is below the fit's noise: take the zero-sleep generations as its bound"
        print(line, flush=True)
    return rows


def counts_of(text: str) -> list[int]:
    """``"1,2,8"`` -> [1, 2, 8] (empty: none)."""
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="mp 8,32; dask 8; 3 timed gens")
    parser.add_argument("--mp", default="1,2,8,32", help="mp worker counts (comma-separated)")
    parser.add_argument("--dask", default="1,2,8,32", help="Dask worker counts")
    parser.add_argument("--population", type=int, default=256)
    parser.add_argument("--steps", type=int, default=40, help="steps per episode")
    parser.add_argument("--step-ms", type=float, default=2.5, help="sleep per step")
    parser.add_argument("--gens", type=int, default=4, help="timed generations (median)")
    args = parser.parse_args()
    # The LocalCluster's scheduler runs in this process; its shutdown chatter is not a result.
    for name in ("distributed", "distributed.scheduler", "distributed.core"):
        logging.getLogger(name).addFilter(lambda record: False)
    if args.quick:
        args.mp, args.dask, args.gens = "8,32", "8", 3
    per_step = step_seconds_here(args.steps, args.step_ms / 1000)
    cpu_step = step_seconds_here(args.steps, 0.0, episodes=128)
    print(
        f"machine: {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}); population "
        f"{args.population}, {args.steps}-step episodes, {args.step_ms:g} ms sleep per step "
        f"({1000 * per_step:.3f} ms measured per step here); medians of {args.gens} generations; "
        f"load average {os.getloadavg()[0]:.1f}; the episodes' own CPU "
        f"{1e6 * cpu_step:.0f} us per step, {args.population * args.steps * cpu_step:.3f} s per "
        "generation",
        flush=True,
    )
    rows = []
    for name, counts in (("mp", counts_of(args.mp)), ("dask", counts_of(args.dask))):
        if counts:
            rows += run_handler(name, counts, args, per_step, cpu_step)
    print(
        f"\n{len(os.sched_getaffinity(0))} cores, population {args.population}, {args.steps} steps "
        f"of {args.step_ms:g} ms, medians of {args.gens} generations:\n\n"
        "| handler | workers | generation [s] | efficiency | vs the sleeps alone "
        "| main process [ms] | handler overhead [s] |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    print("\n".join(rows))
    print(
        f"\nload average at the end {os.getloadavg()[0]:.1f} (other work on the machine skews all)"
    )


if __name__ == "__main__":
    main()
