"""Benchmark: wall time and env steps until the shipped configs are *solved* on this machine.

"Solved" is the project's one definition: the genome the run stands behind (the optimizer's
center, or the hall of fame's best for MU_ES) reaches the target as the mean return of the
run's held-out validation episodes (seeds training never uses). Each shipped config runs
unchanged except for its ``random_seed``, ``validation.target`` (the table's) and the handler
(mp on every core); a run that does not get there within its generations, or within the case's
time limit (where the run is stopped), counts as not solved.

Prints one row per case: the median over the seeds that got there of wall time and env steps
to the target (wall time includes the validations), the median of the final validated score,
and how many seeds got there, against the case's time limit.

Usage:
    python scripts/bench_solve.py                 # CartPole, LunarLander (discrete, continuous)
    python scripts/bench_solve.py --long          # + BipedalWalker (up to 30 min per seed) and
                                                  #   HalfCheetah (up to 10 min per seed)
    python scripts/bench_solve.py --cases cartpole --seeds 1 2 3 4 5
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time
from pathlib import Path
from typing import Any, NamedTuple

from neuro_evolution.config.tree import load_config
from neuro_evolution.evaluation.episodes.validation import ValidationConfig
from neuro_evolution.evaluation.pools import default_workers
from neuro_evolution.run.experiment import Experiment

ROOT = Path(__file__).resolve().parent.parent


class Case(NamedTuple):
    config: str
    target: float
    limit_seconds: float
    long: bool = False


CASES = {
    "cartpole": Case("cartpole.json", 475.0, 5.0),
    "lunarlander": Case("lunarlander.json", 200.0, 60.0),
    "lunarlander_continuous": Case("lunarlander_continuous.json", 200.0, 60.0),
    "bipedalwalker": Case("bipedalwalker.json", 300.0, 1800.0, long=True),
    # Gymnasium's reward_threshold; the issue set no limit for it: 10 minutes here
    "halfcheetah": Case("halfcheetah.json", 4800.0, 600.0, long=True),
}


def solve(case: Case, seed: int, workers: int) -> dict[str, Any]:
    """Run one seed of ``case`` until validation reaches the target or generations run out."""
    config = load_config(ROOT / "configs" / case.config)
    validation = config.validation or ValidationConfig()
    config = dataclasses.replace(
        config,
        random_seed=seed,
        validation=dataclasses.replace(validation, target=case.target),
        evaluation=dataclasses.replace(config.evaluation, handler="mp", workers=workers),
    )
    start = time.perf_counter()
    experiment = Experiment(config)
    experiment.start()
    try:
        while not experiment.done and time.perf_counter() - start < case.limit_seconds:
            row = experiment.step()
            if case.long and row.validation_mean is not None:
                print(
                    f"  seed {seed} generation {row.generation}: validation "
                    f"{row.validation_mean:.1f} after {time.perf_counter() - start:.0f} s, "
                    f"{row.env_steps_total:,} env steps",
                    flush=True,
                )
    finally:
        experiment.close()
    summary = experiment.summary()
    return {
        "solved": summary.solved,
        "validation": summary.validation.mean if summary.validation else float("nan"),
        "generations": summary.generations,
        "env_steps": summary.env_steps,
        "seconds": time.perf_counter() - start,
    }


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), help="default: all short")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--long", action="store_true", help="include BipedalWalker, HalfCheetah")
    parser.add_argument("--workers", type=int, default=default_workers())
    args = parser.parse_args()
    names = args.cases or [n for n, c in CASES.items() if args.long or not c.long]
    print(f"# bench_solve: {args.workers} workers on {os.cpu_count()} cores, seeds {args.seeds}")
    rows = []
    for name in names:
        case = CASES[name]
        runs = []
        for seed in args.seeds:
            run = solve(case, seed, args.workers)
            runs.append(run)
            solved = run["solved"]
            where = (
                f"solved after generation {solved.generation}: {solved.wall_time:.1f} s, "
                f"{solved.env_steps} env steps"
                if solved
                else f"not solved: stopped after {run['generations']} generations "
                f"({run['seconds']:.0f} s)"
            )
            print(f"{name} seed {seed}: {where}; last validation {run['validation']:.1f}")
        solved = [run["solved"] for run in runs if run["solved"]]
        rows.append(
            (
                name,
                case.target,
                median([s.wall_time for s in solved]),
                case.limit_seconds,
                median([s.env_steps for s in solved]),
                median([run["validation"] for run in runs]),
                f"{len(solved)}/{len(runs)}",
            )
        )
    print()
    print(
        "| case | target | median time to target | limit | median env steps | "
        "median last validation | seeds solved |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, target, seconds, limit, steps, last, count in rows:
        print(
            f"| {name} | {target:g} | {seconds:.1f} s | {limit:g} s | {steps:,.0f} | "
            f"{last:.1f} | {count} |"
        )


if __name__ == "__main__":
    main()
