"""ARS against evosax's ARS (set up as the paper's plain step) on BBOB f1 sphere and f2 ellipsoid.

With a fixed exploration noise nu the center settles where the noise term dominates, so f < 1e-8
is out of reach for both: per function this prints, over 5 seeds (instances = seeds), the median
number of evaluations until f(center) first falls below a level both reach, the median f(center)
after the budget, and ours / evosax for each. Both start at center 0 with the same population
(32 genomes, b = 4, alpha = 0.02, nu = 0.03).

    python scripts/check_ars_bbob.py
"""

from __future__ import annotations

import jax
import numpy as np
import optax
from evosax.algorithms import ARS

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.bbob import Problem

jax.config.update("jax_enable_x64", True)

DIMENSION, POPULATION, TOP_B, ALPHA, NU = 10, 32, 4, 0.02, 0.03
SEEDS = range(1, 6)
GENERATIONS = 2000
LEVELS = {"sphere": 1e-2, "ellipsoid": 1e3}


def first_below(values: list[float], level: float) -> float:
    """Evaluations until the first value below ``level`` (inf when none is)."""
    hits = np.flatnonzero(np.asarray(values) < level)
    return float((hits[0] + 1) * POPULATION) if len(hits) else float("inf")


def ours(problem: Problem, seed: int) -> list[float]:
    """f(center) after each generation of our ARS."""
    section = {"type": "ARS", "population_size": POPULATION, "top_b": TOP_B}
    section |= {"step_size": ALPHA, "noise": NU}
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), DIMENSION, seed)
    values = []
    for _ in range(GENERATIONS):
        genomes = optimizer.ask()
        optimizer.tell(Evaluations(-problem(genomes)))
        center = optimizer.center()
        assert center is not None
        values.append(float(problem(center[None])[0]))
    return values


def reference(problem: Problem, seed: int) -> list[float]:
    """f(mean) after each generation of evosax's ARS with optax.sgd and b of N directions."""
    es = ARS(
        population_size=POPULATION,
        solution=jax.numpy.zeros(DIMENSION),
        optimizer=optax.sgd(ALPHA),
        std_schedule=optax.constant_schedule(NU),
    )
    es.elite_ratio = TOP_B / (POPULATION // 2)
    params = es.default_params
    ask, tell = jax.jit(es.ask), jax.jit(es.tell)
    key = jax.random.key(seed)
    state = es.init(key, jax.numpy.zeros(DIMENSION), params)
    values = []
    for _ in range(GENERATIONS):
        key, ask_key, tell_key = jax.random.split(key, 3)
        x, state = ask(ask_key, state, params)
        state, _ = tell(tell_key, x, jax.numpy.asarray(problem(np.asarray(x))), state, params)
        values.append(float(problem(np.asarray(state.mean)[None])[0]))
    return values


def main() -> None:
    for function, level in LEVELS.items():
        runs: dict[str, list[list[float]]] = {"ours": [], "evosax": []}
        for seed in SEEDS:
            problem = Problem.make(function, DIMENSION, seed)
            runs["ours"].append(ours(problem, seed))
            runs["evosax"].append(reference(problem, seed))
        evals = {k: float(np.median([first_below(v, level) for v in r])) for k, r in runs.items()}
        final = {k: float(np.median([v[-1] for v in r])) for k, r in runs.items()}
        print(
            f"{function}: evaluations to f < {level:g}: ours {evals['ours']:.0f},"
            f" evosax {evals['evosax']:.0f}, ratio {evals['ours'] / evals['evosax']:.2f};"
            f" f after {GENERATIONS * POPULATION} evaluations: ours {final['ours']:.3g},"
            f" evosax {final['evosax']:.3g}, ratio {final['ours'] / final['evosax']:.2f}"
        )


if __name__ == "__main__":
    main()
