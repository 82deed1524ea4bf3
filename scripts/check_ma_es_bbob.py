"""MA_ES and LM_MA_ES against evosax's on BBOB sphere and ellipsoid: evaluations to f < 1e-8.

Each optimizer starts at mean 0 with sigma 2 and the default population size for d genes (the
same for ours and evosax's), and runs until a sample scores below 1e-8 or the budget is spent;
printed per optimizer and function: the evaluations of each seed, the medians and ours /
evosax's. Ours should need at most 1.5 times evosax's median.

Usage: python scripts/check_ma_es_bbob.py [--dimension 10] [--seeds 5] [--budget 200000]
(needs evosax, a test-only dependency)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.bbob import Problem

TARGET = 1e-8
SIGMA = 2.0
NAMES = ("MA_ES", "LM_MA_ES")
FUNCTIONS = ("sphere", "ellipsoid")


def ours(name: str, problem: Callable, dimension: int, seed: int, budget: int) -> int | None:
    """Evaluations until a sample of our ``name`` scores below TARGET (None: budget spent)."""
    section = {"type": name, "sigma": SIGMA}
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), dimension, seed)
    evaluations = 0
    while evaluations < budget:
        genomes = optimizer.ask()
        values = problem(genomes)
        evaluations += len(genomes)
        if values.min() < TARGET:
            return evaluations
        optimizer.tell(Evaluations(-values))
    return None


def reference(name: str, problem: Callable, dimension: int, seed: int, budget: int) -> int | None:
    """Evaluations until a sample of evosax's ``name`` scores below TARGET (None: spent)."""
    import jax
    import jax.numpy as jnp
    from evosax.algorithms import LM_MA_ES, MA_ES  # type: ignore[import-untyped]

    jax.config.update("jax_enable_x64", True)
    population_size = 4 + int(3 * np.log(dimension))
    strategy = {"MA_ES": MA_ES, "LM_MA_ES": LM_MA_ES}[name](population_size, jnp.zeros(dimension))
    params = strategy.default_params.replace(std_init=SIGMA)
    key = jax.random.key(seed)
    state = strategy.init(key, jnp.zeros(dimension), params)
    ask, tell = jax.jit(strategy.ask), jax.jit(strategy.tell)
    evaluations = 0
    while evaluations < budget:
        key, ask_key, tell_key = jax.random.split(key, 3)
        population, state = ask(ask_key, state, params)
        values = problem(np.asarray(population))
        evaluations += len(values)
        if values.min() < TARGET:
            return evaluations
        state, _ = tell(tell_key, population, jnp.asarray(values), state, params)  # minimizes
    return None


def median(counts: list[int | None], budget: int) -> float:
    """The median, a run that never reached the target counting as the budget."""
    return float(np.median([budget if c is None else c for c in counts]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dimension", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=200_000)
    args = parser.parse_args()
    for name in NAMES:
        for function in FUNCTIONS:
            problem = Problem.make(function, args.dimension, 1)
            runs = range(args.seeds)
            mine = [ours(name, problem, args.dimension, s, args.budget) for s in runs]
            theirs = [reference(name, problem, args.dimension, s, args.budget) for s in runs]
            ratio = median(mine, args.budget) / median(theirs, args.budget)
            print(f"{name} {function} d={args.dimension}: ours {mine} evosax {theirs}")
            print(
                f"  medians ours {median(mine, args.budget):.0f} evosax "
                f"{median(theirs, args.budget):.0f}, ratio {ratio:.2f}"
            )


if __name__ == "__main__":
    main()
