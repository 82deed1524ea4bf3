"""Evaluations until f < 1e-8 for IPOP/BIPOP CMA_ES (ours) and pycma's ``fmin2`` restarts.

BBOB sphere and ellipsoid (d = 10, instance 1) and the Rastrigin function shifted to BBOB f3's
optimum (BBOB f3 itself, with its asymmetry and conditioning, is not solved to 1e-8 by either
within 1.5e6 evaluations). Both start at 0 with sigma 2 and lambda 10, non-negative weights, 9
large restarts with factor 2. Prints the median of 5 seeds for each and the ratio ours / pycma.

    python scripts/check_cma_restarts_bbob.py [ipop|bipop]
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.bbob import Problem

Objective = Callable[[np.ndarray], np.ndarray]
DIMENSION, TARGET, BUDGET, SEEDS = 10, 1e-8, 1_500_000, range(5)


def shifted_rastrigin(dimension: int) -> Objective:
    """10 d + sum z^2 - 10 cos(2 pi z), z = x - x_opt of BBOB f3 (instance 1)."""
    shift = Problem.make("rastrigin", dimension, 1).x_opt

    def f(x: np.ndarray) -> np.ndarray:
        z = x - shift
        return 10 * z.shape[-1] + np.sum(z**2 - 10 * np.cos(2 * np.pi * z), axis=-1)

    return f


def ours(f: Objective, kind: str, seed: int) -> int:
    """Evaluations of our CMA_ES with ``restarts.kind`` until f < TARGET (BUDGET if never)."""
    section = {"type": "CMA_ES", "sigma": 2.0, "population_size": 10, "restarts": {"kind": kind}}
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), DIMENSION, seed)
    evaluations = 0
    while evaluations < BUDGET:
        values = f(optimizer.ask())
        evaluations += len(values)
        if values.min() < TARGET:
            return evaluations
        optimizer.tell(Evaluations(-values))
    return BUDGET


def reference(f: Objective, kind: str, seed: int) -> int:
    """The same for pycma's ``fmin2(restarts=9, incpopsize=2, bipop=...)``."""
    import cma

    options = {"seed": seed + 1, "verbose": -9, "ftarget": TARGET, "CMA_active": False,
               "popsize": 10, "maxfevals": BUDGET}  # fmt: skip
    _, es = cma.fmin2(lambda x: float(f(np.asarray(x)[None])[0]), np.zeros(DIMENSION), 2.0,
                      options, restarts=9, incpopsize=2, bipop=kind == "bipop")  # fmt: skip
    return int(es.result.evaluations) if es.best.f < TARGET else BUDGET


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "ipop"
    problems = {
        "sphere": Problem.make("sphere", DIMENSION),
        "ellipsoid": Problem.make("ellipsoid", DIMENSION),
        "rastrigin (shifted)": shifted_rastrigin(DIMENSION),
    }
    print(f"{kind}, d = {DIMENSION}, target {TARGET:g}, median evaluations of {len(SEEDS)} seeds")
    for name, f in problems.items():
        ours_median = float(np.median([ours(f, kind, seed) for seed in SEEDS]))
        pycma_median = float(np.median([reference(f, kind, seed) for seed in SEEDS]))
        ratio = ours_median / pycma_median
        print(f"{name:20s} ours {ours_median:9.0f}  pycma {pycma_median:9.0f}  ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
