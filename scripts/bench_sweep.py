"""Benchmark: 8 seeds of a small-population config as one sweep versus 8 runs one after another.

The config is ``configs/cartpole.json`` (PGPE, 6-neuron CTRNN, population 20, 100 generations,
mp workers with lockstep in each) with 5 episodes per evaluation and validation every 10
generations without a target (every run does all its generations). ``--generations 30`` shows
the fixed costs: the pool's start (0.2 s) and the runs' last plots weigh more in a 4-second sweep
(measured on 2 cores: ratio 0.47, workers busy 79%, against 0.51 and 94% at 100 generations).
Measured in the same process, alternating:

- sequence: 8 runs, each as ``train`` runs it (an Experiment with its own mp pool of W workers,
  a run directory and checkpoints), one after another;
- sweep: the 8 runs on one shared mp pool of W workers (``neuro_evolution.sweep``).

Prints the wall time of each, the ratio sweep / sequence (target <= 0.6), and the share of the
sweep's wall time that the workers spent evaluating, summed inside the workers (target >= 85%).
Both end with the same 8 logs (wall time aside); the script checks that too.

Usage: python scripts/bench_sweep.py [--workers 2] [--repeats 3] [--seeds 8] [--generations 100]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

from neuro_evolution.config.tree import load_config
from neuro_evolution.evaluation.episodes.validation import ValidationConfig
from neuro_evolution.run.checkpoint import install_checkpoints
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.sweep.grid import RunPlan
from neuro_evolution.sweep.pools import make_pool
from neuro_evolution.sweep.scheduler import Sweep

ROOT = Path(__file__).resolve().parent.parent


def plans(seeds: int, workers: int, generations: int = 100) -> list[RunPlan]:
    config = load_config(ROOT / "configs" / "cartpole.json")
    config = dataclasses.replace(
        config,
        number_generations=generations,
        optimizer=dataclasses.replace(config.optimizer, population_size=20),
        episode_runner=dataclasses.replace(config.episode_runner, number_fitness_runs=5),
        validation=ValidationConfig(every_generations=10, episodes=10, target=None),
        evaluation=dataclasses.replace(config.evaluation, workers=workers),
    )
    return [
        RunPlan(f"seed-{seed}", (), seed, dataclasses.replace(config, random_seed=seed))
        for seed in range(1, seeds + 1)
    ]


def run_sequence(runs: list[RunPlan], directory: Path) -> float:
    """Seconds for the runs one after another, each with its own pool (as ``train`` does)."""
    start = time.perf_counter()
    for plan in runs:
        experiment = Experiment(plan.config)
        experiment.start()
        experiment.attach_run_directory(directory / plan.name)
        install_checkpoints(experiment)
        experiment.run(progress=False)
    return time.perf_counter() - start


def run_sweep(runs: list[RunPlan], directory: Path) -> tuple[float, float]:
    """(seconds, worker busy fraction) of the runs as one sweep, pool start-up included."""
    start = time.perf_counter()
    pool = make_pool(runs[0].config.evaluation, parallel_runs=len(runs))
    try:
        summary = Sweep(runs, directory, pool, parallel_runs=len(runs)).run()
    finally:
        pool.close()
    seconds = time.perf_counter() - start
    return seconds, summary.busy_seconds / (pool.slots * seconds)


def same_logs(a: Path, b: Path, runs: list[RunPlan]) -> bool:
    def strip(path: Path) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "wall_time"} for r in read_log(path)]

    return all(strip(a / p.name / "log.csv") == strip(b / p.name / "log.csv") for p in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument(
        "--generations", type=int, default=100, help="per run (default: cartpole.json's 100)"
    )
    args = parser.parse_args()
    runs = plans(args.seeds, args.workers, args.generations)
    sequence_times, sweep_times, busy = [], [], []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            sequence_times.append(run_sequence(runs, Path(tmp) / "sequence"))
            seconds, fraction = run_sweep(runs, Path(tmp) / "sweep")
            sweep_times.append(seconds)
            busy.append(fraction)
            identical = same_logs(Path(tmp) / "sequence", Path(tmp) / "sweep", runs)
        print(
            f"repeat {repeat + 1}: sequence {sequence_times[-1]:.2f} s, sweep {seconds:.2f} s, "
            f"ratio {seconds / sequence_times[-1]:.2f}, workers busy {fraction:.1%}, "
            f"logs identical: {identical}",
            flush=True,
        )
    sequence, sweep = statistics.median(sequence_times), statistics.median(sweep_times)
    print(
        f"\n{args.seeds} seeds of configs/cartpole.json with population 20, {args.generations} "
        f"generations, {args.workers} mp workers, median of {args.repeats}:"
    )
    print(f"  8 train runs in sequence: {sequence:.2f} s")
    print(f"  one sweep:                {sweep:.2f} s")
    print(f"  ratio sweep / sequence:   {sweep / sequence:.2f}  (target <= 0.6)")
    print(f"  workers busy in sweep:    {statistics.median(busy):.1%}  (target >= 85%)")


if __name__ == "__main__":
    main()
