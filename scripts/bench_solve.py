"""Benchmark: wall time and env steps until the shipped configs are *solved* on this machine.

"Solved" is the project's one definition: the genome the run stands behind (the optimizer's
center, or the hall of fame's best for MU_ES) reaches the target as the mean return of the
run's held-out validation episodes (seeds training never uses). Each shipped config runs
unchanged except for its ``random_seed``, ``validation.target`` (the table's), the handler
(mp on every core) and the ``--set`` settings, which change one option for a comparison; a run
that does not get there within its generations, or within the case's time limit (``--limit``
replaces it; the run is stopped there), counts as not solved.

Prints one row per case: the median over the seeds that got there of wall time and env steps
to the target (wall time includes the validations), the held-out validation env steps spent
until then (the price of looking, counted apart from training's), the median of the final
validated score, and how many seeds got there, against the case's time limit.

Usage:
    python scripts/bench_solve.py                 # CartPole, LunarLander (discrete, continuous)
    python scripts/bench_solve.py --long          # + BipedalWalker (up to 30 min per seed) and
                                                  #   HalfCheetah (up to 10 min per seed)
    python scripts/bench_solve.py --cases cartpole --seeds 1 2 3 4 5
    python scripts/bench_solve.py --cases lunarlander_continuous --limit 900 \
        --set optimizer.stdev_init=null --set optimizer.radius_init=4.5
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time
from pathlib import Path
from typing import Any, NamedTuple

from neuro_evolution.config.overrides import read_config_data, single_settings, with_settings
from neuro_evolution.config.tree import ExperimentConfig, parse_config
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


def solve(case: Case, seed: int, workers: int, settings: list[str]) -> dict[str, Any]:
    """Run one seed of ``case`` (its config with ``settings``, each ``KEY=VALUE`` as train's
    ``--set``) until validation reaches the target or generations run out."""
    data = read_config_data(ROOT / "configs" / case.config)
    config: ExperimentConfig = parse_config(
        with_settings(data, single_settings(settings, "bench_solve"))
    )
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
    looked = 0  # validation env steps until the first validation at the target
    try:
        while not experiment.done and time.perf_counter() - start < case.limit_seconds:
            solved_before = experiment.solved is not None
            row = experiment.step()
            if not solved_before:
                looked += row.validation_steps or 0
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
        "validation_steps": looked,
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
    parser.add_argument("--limit", type=float, help="seconds per seed (default: the case's limit)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change every case's config as train's --set does (repeatable)",
    )
    args = parser.parse_args()
    names = args.cases or [n for n, c in CASES.items() if args.long or not c.long]
    print(
        f"# bench_solve: {args.workers} workers on {os.cpu_count()} cores, seeds {args.seeds}"
        + "".join(f", --set {text}" for text in args.set)
    )
    rows = []
    for name in names:
        case = CASES[name]
        if args.limit is not None:
            case = case._replace(limit_seconds=args.limit)
        runs = []
        for seed in args.seeds:
            run = solve(case, seed, args.workers, args.set)
            runs.append(run)
            solved = run["solved"]
            where = (
                f"solved after generation {solved.generation}: {solved.wall_time:.1f} s, "
                f"{solved.env_steps} env steps (validation {run['validation_steps']})"
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
                median([run["validation_steps"] for run in runs if run["solved"]]),
                median([run["validation"] for run in runs]),
                f"{len(solved)}/{len(runs)}",
            )
        )
    print()
    print(
        "| case | target | median time to target | limit | median env steps | "
        "median validation env steps | median last validation | seeds solved |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, target, seconds, limit, steps, looked, last, count in rows:
        print(
            f"| {name} | {target:g} | {seconds:.1f} s | {limit:g} s | {steps:,.0f} | "
            f"{looked:,.0f} | {last:.1f} | {count} |"
        )


if __name__ == "__main__":
    main()
