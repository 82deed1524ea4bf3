"""Benchmark: does novelty search solve a deceptive task more often and faster?

MountainCar-v0 is deceptive for pure fitness: every policy that does not reach the flag scores
exactly -200, so fitness gives selection nothing to work with until the first success. For several
seeds this runs ``configs/mountaincar_novelty.json`` with its novelty section and without it
(pure fitness), and prints per seed the first generation in which any individual reached the flag
(return > -200) and the best fitness at the end, then the success rates.

Usage: python scripts/bench_novelty.py [--seeds 1 2 3 4 5] [--generations 30] [--handler mp]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from neuro_evolution.config.tree import load_config
from neuro_evolution.run.experiment import Experiment

ROOT = Path(__file__).resolve().parent.parent
FLAG = -200.0  # MountainCar-v0 returns -200 unless the car reaches the flag


def first_success(config) -> tuple[int | None, float, float]:
    """(first generation with a return > -200 or None, best fitness, seconds)."""
    experiment = Experiment(config)
    start = time.perf_counter()
    experiment.run()
    seconds = time.perf_counter() - start
    first = next((row.generation for row in experiment.log if row.fitness_max > FLAG), None)
    return first, experiment.hall_of_fame.best_fitness, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--generations", type=int, default=30)
    parser.add_argument("--handler", default="mp")
    args = parser.parse_args()
    base = load_config(ROOT / "configs" / "mountaincar_novelty.json")
    evaluation = dataclasses.replace(base.evaluation, handler=args.handler)
    base = dataclasses.replace(base, number_generations=args.generations, evaluation=evaluation)
    variants = {"fitness only": dataclasses.replace(base, novelty=None), "novelty": base}
    print(
        f"MountainCar-v0, {args.generations} generations, seeds {args.seeds}, "
        f"novelty weight {base.novelty.novelty_weight}, handler {args.handler}"
    )
    print(f"{'variant':<14} {'seed':>4} {'first success':>14} {'best fitness':>13} {'seconds':>8}")
    summary = {}
    for name, config in variants.items():
        successes = []
        for seed in args.seeds:
            first, best, seconds = first_success(dataclasses.replace(config, random_seed=seed))
            successes.append(first)
            shown = "-" if first is None else str(first)
            print(f"{name:<14} {seed:>4} {shown:>14} {best:>13.1f} {seconds:>8.1f}")
        summary[name] = successes
    for name, successes in summary.items():
        solved = [s for s in successes if s is not None]
        mean_first = f"{sum(solved) / len(solved):.1f}" if solved else "-"
        print(
            f"{name}: reached the flag in {len(solved)}/{len(successes)} seeds, "
            f"mean first generation {mean_first}"
        )


if __name__ == "__main__":
    main()
