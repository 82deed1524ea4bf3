"""GA, DE and PSO against evosax's SimpleGA, DifferentialEvolution and PSO on BBOB f1 sphere and
f2 ellipsoid at 10 genes.

Both sides get the same settings and a first population of the same distribution (evosax takes
its first population and fitness in ``init``; ours draws its own from its config), and the same
problem instance per seed (instances = seeds 1-5). Per method and function this prints the
median, over the seeds, of the evaluations until the best genome asked so far is within
``LEVELS`` of the optimum (first population included; inf: not within the budget), and ours /
evosax. DE and PSO are held to 1e-8. The GA mutates with a fixed sigma, so its population settles
about sigma from an optimum on both sides, and its level is one both reach.

    python scripts/check_population_bbob.py
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import optax
from evosax import algorithms

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.bbob import Problem

jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

DIMENSION = 10
SEEDS = range(1, 6)
BUDGET = 5_000 * DIMENSION
FUNCTIONS = ("sphere", "ellipsoid")
# method -> (population, our optimizer section, level per function)
METHODS: dict[str, tuple[int, dict[str, Any], dict[str, float]]] = {
    "DE": (
        50,
        {"strategy": "rand/1/bin", "differential_weight": 0.5, "crossover_rate": 0.9},
        {"sphere": 1e-8, "ellipsoid": 1e-8},
    ),
    "PSO": (
        20,
        {"inertia": 0.7298, "cognitive": 1.49618, "social": 1.49618},
        {"sphere": 1e-8, "ellipsoid": 1e-8},
    ),
    "GA": (
        100,
        {"truncation": 50, "elites": 0, "sigma": 0.1, "initial_stdev": 2.0},
        {"sphere": 1.0, "ellipsoid": 5e3},
    ),
}


def evaluations_to(best: list[float], population: int, level: float) -> float:
    """Evaluations until the running best (one value per generation) is below ``level``."""
    hits = np.flatnonzero(np.asarray(best) < level)
    return float((hits[0] + 1) * population) if len(hits) else float("inf")


def ours(name: str, problem: Problem, seed: int) -> list[float]:
    """The running best after each generation of our optimizer."""
    population, settings, _ = METHODS[name]
    section = {"type": name, "population_size": population, **settings}
    if name != "GA":
        section["initial_gene_range"] = [-5.0, 5.0]
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), DIMENSION, seed)
    best, values = np.inf, []
    for _ in range(BUDGET // population):
        genomes = optimizer.ask()
        fitness = problem(genomes)
        optimizer.tell(Evaluations(-fitness))
        best = min(best, float(fitness.min()))
        values.append(best)
    return values


def evosax_strategy(name: str) -> tuple[Any, Any, Callable[[np.random.Generator], np.ndarray]]:
    """evosax's strategy, its params set to ours, and its first population's distribution."""
    population, settings, _ = METHODS[name]
    zeros = jnp.zeros(DIMENSION)
    if name == "DE":
        es = algorithms.DifferentialEvolution(population, zeros)
        weight = settings["differential_weight"]
        params = es.default_params.replace(
            elitism=False,
            crossover_rate=settings["crossover_rate"],
            differential_weight=weight,
            differential_weight_min=weight,
            differential_weight_max=weight,
        )
    elif name == "PSO":
        es = algorithms.PSO(population, zeros)
        params = es.default_params.replace(
            inertia_coeff=settings["inertia"],
            cognitive_coeff=settings["cognitive"],
            social_coeff=settings["social"],
        )
    else:
        es = algorithms.SimpleGA(
            population, zeros, std_schedule=optax.constant_schedule(settings["sigma"])
        )
        params = es.default_params

    def first(rng: np.random.Generator) -> np.ndarray:
        if name == "GA":
            return rng.normal(0.0, settings["initial_stdev"], (population, DIMENSION))
        return rng.uniform(-5.0, 5.0, (population, DIMENSION))

    return es, params, first


def reference(name: str, problem: Problem, seed: int) -> list[float]:
    """The running best after each generation of evosax's counterpart (it minimizes)."""
    es, params, first = evosax_strategy(name)
    population = METHODS[name][0]
    genomes = first(np.random.default_rng(seed))
    fitness = problem(genomes)
    key = jax.random.key(seed)
    state = es.init(key, jnp.asarray(genomes), jnp.asarray(fitness), params)
    ask, tell = jax.jit(es.ask), jax.jit(es.tell)
    best = float(fitness.min())
    values = [best]
    for _ in range(BUDGET // population - 1):
        key, ask_key, tell_key = jax.random.split(key, 3)
        x, state = ask(ask_key, state, params)
        fitness = problem(np.asarray(x))
        state, _ = tell(tell_key, x, jnp.asarray(fitness), state, params)
        best = min(best, float(fitness.min()))
        values.append(best)
    return values


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--methods", default=",".join(METHODS), help="e.g. DE,PSO")
    names = parser.parse_args(argv).methods.split(",")
    print(f"{DIMENSION} genes, seeds {SEEDS.start}-{SEEDS.stop - 1}, budget {BUDGET} evaluations")
    for name in names:
        population, _, levels = METHODS[name]
        for function in FUNCTIONS:
            level = levels[function]
            counts: dict[str, list[float]] = {"ours": [], "evosax": []}
            final: dict[str, list[float]] = {"ours": [], "evosax": []}
            for seed in SEEDS:
                problem = Problem.make(function, DIMENSION, seed)
                for side, run in (("ours", ours), ("evosax", reference)):
                    best = run(name, problem, seed)
                    counts[side].append(evaluations_to(best, population, level))
                    final[side].append(best[-1])
            medians = {side: float(np.median(values)) for side, values in counts.items()}
            ratio = medians["ours"] / medians["evosax"]
            print(
                f"{name} {function} to {level:g}: ours {medians['ours']:.0f}"
                f" (per seed {[int(v) if np.isfinite(v) else 'inf' for v in counts['ours']]}),"
                f" evosax {medians['evosax']:.0f}, ours/evosax {ratio:.2f}"
                f" ({'within' if ratio <= 1.5 else 'above'} 1.5); best after the budget:"
                f" ours {np.median(final['ours']):.3g}, evosax {np.median(final['evosax']):.3g}"
            )


if __name__ == "__main__":
    main()
