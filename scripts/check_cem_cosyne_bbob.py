"""CEM and COSYNE on BBOB f1 sphere and f2 ellipsoid (d = 10), with their default options.

Neither has a maintained reference implementation to race, so this prints ours alone: per
optimizer and function, over 5 seeds (instances = seeds), how many runs reach f < 1e-8 and the
median evaluations they need, and the median best f evaluated within the budget.

    python scripts/check_cem_cosyne_bbob.py
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.bbob import Problem

DIMENSION, SEEDS, BUDGET, TARGET = 10, range(1, 6), 100_000, 1e-8


def run(name: str, function: str, seed: int) -> tuple[float, float]:
    """(evaluations until the best f < TARGET or inf, best f) within BUDGET evaluations."""
    problem = Problem.make(function, DIMENSION, seed)
    config = OPTIMIZERS.parse_config({"type": name}, "optimizer")
    optimizer = make_optimizer(config, DIMENSION, seed)
    evaluations, best = 0, float("inf")
    while evaluations < BUDGET:
        genomes = optimizer.ask()
        values = problem(genomes)
        evaluations += len(genomes)
        best = min(best, float(values.min()))
        if best < TARGET:
            return float(evaluations), best
        optimizer.tell(Evaluations(-values))
    return float("inf"), best


def main() -> None:
    for name in ("CEM", "COSYNE"):
        for function in ("sphere", "ellipsoid"):
            results = [run(name, function, seed) for seed in SEEDS]
            hits = [evaluations for evaluations, _ in results if np.isfinite(evaluations)]
            reached = f"median {np.median(hits):.0f} evaluations" if hits else "-"
            print(
                f"{name} {function}: {len(hits)}/{len(results)} reach f < {TARGET:g} ({reached});"
                f" median best f within {BUDGET} evaluations:"
                f" {np.median([best for _, best in results]):.3g}"
            )


if __name__ == "__main__":
    main()
