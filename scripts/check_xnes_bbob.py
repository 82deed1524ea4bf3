"""Evaluations until f < 1e-8 on BBOB sphere and ellipsoid (d = 10): ours against evosax.

Both start at mean 0 with step size 2 and the same population size (the default of ours);
5 seeds each; prints the medians and ours / reference. Usage:
``python scripts/check_xnes_bbob.py [XNES|CR_FM_NES]`` (needs evosax).
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
from evosax.algorithms import CR_FM_NES, xNES

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.bbob import Problem

jax.config.update("jax_enable_x64", True)
DIMENSION, TARGET, SIGMA, SEEDS, MAX_EVALUATIONS = 10, 1e-8, 2.0, range(1, 6), 200_000
REFERENCES = {"XNES": xNES, "CR_FM_NES": CR_FM_NES}


def ours(name: str, problem: Problem, seed: int) -> int:
    """Evaluations until the best sample of a generation is below TARGET."""
    section = {"type": name, "stdev_init": SIGMA}
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), DIMENSION, seed)
    evaluations = 0
    while evaluations < MAX_EVALUATIONS:
        genomes = optimizer.ask()
        values = problem(genomes)
        evaluations += len(genomes)
        if values.min() < TARGET:
            return evaluations
        optimizer.tell(Evaluations(-values))
    return evaluations


def reference(name: str, problem: Problem, seed: int, population: int) -> int:
    """The same count for evosax's implementation (it minimizes)."""
    es = REFERENCES[name](population_size=population, solution=jnp.zeros(DIMENSION))
    params = es.default_params
    key = jax.random.key(seed)
    state = es.init(key, jnp.zeros(DIMENSION), params)
    state = state.replace(std=jnp.asarray(SIGMA))
    if name == "XNES":  # evosax starts B at std_init * I; the step size is std alone here
        state = state.replace(B=jnp.eye(DIMENSION))
    evaluations = 0
    while evaluations < MAX_EVALUATIONS:
        key, ask_key, tell_key = jax.random.split(key, 3)
        population, state = es.ask(ask_key, state, params)
        values = problem(np.asarray(population))  # the same numpy function as ours
        evaluations += len(values)
        if values.min() < TARGET:
            return evaluations
        state, _ = es.tell(tell_key, population, jnp.asarray(values), state, params)
    return evaluations


def main(name: str) -> None:
    population = (
        make_optimizer(OPTIMIZERS.parse_config({"type": name}, "optimizer"), DIMENSION, 0)
        .ask()
        .shape[0]
    )
    for function in ("sphere", "ellipsoid"):
        problem = Problem.make(function, DIMENSION, 1)
        mine = [ours(name, problem, seed) for seed in SEEDS]
        theirs = [reference(name, problem, seed, population) for seed in SEEDS]
        ratio = float(np.median(mine)) / float(np.median(theirs))
        print(
            f"{name} {function} d={DIMENSION} lambda={population}: ours {mine} median "
            f"{np.median(mine):.0f}; evosax {theirs} median {np.median(theirs):.0f};"
            f" ratio {ratio:.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "XNES")
