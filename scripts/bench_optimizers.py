"""Benchmark of every registered optimizer's ask/tell cost as the genome grows.

For each optimizer in the registry (so optimizers added later appear by themselves), genome size
G in 100, 1k, 3k, 10k, 100k, 1M and population 40 and 200: median ask and tell time over up to
20 generations on a cheap objective (a cell stops after ``--cell-seconds`` with at least 5
generations; the table says how many ran), the mean tell (which includes CMA_ES's occasional
eigendecompositions), the measured bytes of ``state()`` after the last generation and the
declared peak ``state_bytes``. A cell is skipped, with the reason printed, when the optimizer
would not fit in the available memory or when the previous genome size predicts a generation
slower than ``--cell-seconds``. DEAP's CMA strategy (the old ``CMA_ES``) is measured at
G = 3,000, population 40 as the in-run baseline.

Targets on the 2-core machine: CMA_ES tell at G = 3,000, population 40 <= 100 ms (median over
20 generations); every O(G) optimizer's tell <= 50 ms at G = 1M, population 40.
Usage: ``python scripts/bench_optimizers.py [--sizes 100 3000] [--populations 40]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from typing import Any

import numpy as np
from deap import cma as deap_cma

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.optimizers import OPTIMIZERS, Optimizer
from neuro_evolution.optimizers.base import Evaluations, OptimizerConfig
from neuro_evolution.optimizers.cost import (
    available_memory_bytes,
    default_config,
    format_bytes,
    interchangeable_names,
    state_bytes,
)

SIZES = (100, 1_000, 3_000, 10_000, 100_000, 1_000_000)
POPULATIONS = (40, 200)
MAX_GENERATIONS, MIN_GENERATIONS = 20, 5


def config_with_population(name: str, population: int) -> OptimizerConfig:
    """Optimizer ``name``'s default config asked for ``population`` genomes per generation
    (``population_size``; MU_ES: mu = P/4 parents re-evaluated among lambda_ = 3P/4 offspring);
    an optimizer without such an option keeps its default and the table shows its size."""
    config = default_config(name)
    fields = {field.name for field in dataclasses.fields(config)}
    if "population_size" in fields:
        return dataclasses.replace(config, population_size=population)
    if {"mu", "lambda_"} <= fields:
        return dataclasses.replace(config, mu=population // 4, lambda_=population - population // 4)
    return config


def state_nbytes(optimizer: Optimizer) -> int:
    """Bytes of the arrays in ``optimizer.state()`` (what it holds between generations)."""
    return sum(v.nbytes for v in optimizer.state().values() if isinstance(v, np.ndarray))


def measure(config: OptimizerConfig, genome_size: int, cell_seconds: float) -> dict[str, Any]:
    """Time ask and tell for up to MAX_GENERATIONS generations of a cheap objective."""
    _, optimizer_cls = OPTIMIZERS.get(config.type_name())
    optimizer = optimizer_cls(config, genome_size, 0)
    hall_of_fame = HallOfFame(1, genome_size)
    asks, tells, population = [], [], 0
    start = time.perf_counter()
    for _ in range(MAX_GENERATIONS):
        t0 = time.perf_counter()
        genomes = optimizer.ask()
        t1 = time.perf_counter()
        fitness = -np.abs(genomes[:, 0] - 1.0)  # cheap: the optimizer's cost is measured
        t2 = time.perf_counter()
        optimizer.tell(Evaluations(fitness, hall_of_fame))
        t3 = time.perf_counter()
        asks.append(t1 - t0)
        tells.append(t3 - t2)
        population = len(genomes)
        del genomes
        if len(asks) >= MIN_GENERATIONS and time.perf_counter() - start > cell_seconds:
            break
    return {
        "population": population,
        "generations": len(asks),
        "ask": statistics.median(asks),
        "tell": statistics.median(tells),
        "tell_mean": statistics.fmean(tells),
        "state": state_nbytes(optimizer),
    }


def deap_baseline(genome_size: int, population: int, generations: int) -> dict[str, Any]:
    """DEAP's ``cma.Strategy`` (the previous CMA_ES), same cheap objective."""

    class Scored(np.ndarray):
        fitness: Any

    class Fitness:
        def __init__(self, value: float):
            self.values = (value,)
            self.wvalues = (value,)

        def __lt__(self, other: Fitness) -> bool:
            return self.wvalues < other.wvalues

    np.random.seed(0)
    strategy = deap_cma.Strategy(centroid=[0.0] * genome_size, sigma=0.5, lambda_=population)
    asks, tells = [], []
    for _ in range(generations):
        t0 = time.perf_counter()
        rows = np.array(strategy.generate(np.array))
        t1 = time.perf_counter()
        individuals = []
        for row in rows:
            individual = row.view(Scored)
            individual.fitness = Fitness(-abs(float(row[0]) - 1.0))
            individuals.append(individual)
        t2 = time.perf_counter()
        strategy.update(individuals)
        t3 = time.perf_counter()
        asks.append(t1 - t0)
        tells.append(t3 - t2)
    return {
        "population": population,
        "generations": generations,
        "ask": statistics.median(asks),
        "tell": statistics.median(tells),
        "tell_mean": statistics.fmean(tells),
        "state": 8 * (3 * genome_size**2 + 4 * genome_size),  # C, B, BD and vectors
    }


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def row(name: str, genome_size: int, result: dict[str, Any], declared: str) -> str:
    return (
        f"| {name} | {genome_size:,} | {result['population']} | {result['generations']} | "
        f"{ms(result['ask'])} | {ms(result['tell'])} | {ms(result['tell_mean'])} | "
        f"{format_bytes(result['state'])} | {declared} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--populations", type=int, nargs="+", default=POPULATIONS)
    parser.add_argument(
        "--optimizers", nargs="+", default=None, help="default: every one that runs on defaults"
    )
    parser.add_argument("--cell-seconds", type=float, default=12.0)
    parser.add_argument("--deap-generations", type=int, default=5)
    args = parser.parse_args()
    names = args.optimizers or interchangeable_names()  # QD optimizers need their descriptors
    print(
        "| optimizer | G | population | generations | ask median (ms) | tell median (ms) | "
        "tell mean (ms) | state() | declared peak |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    notes: list[str] = []
    results: dict[tuple[str, int, int], dict[str, Any]] = {}
    started = time.perf_counter()
    for name in names:
        for population in args.populations:
            previous: tuple[int, float] | None = None
            for genome_size in sorted(args.sizes):
                config = config_with_population(name, population)
                needed, available = state_bytes(config, genome_size), available_memory_bytes()
                if needed > available:
                    notes.append(
                        f"{name} stops at G = {genome_size:,}, population {population}: it needs"
                        f" {format_bytes(needed)}, {format_bytes(available)} available"
                    )
                    break
                if previous is not None:
                    size, seconds = previous
                    predicted = seconds * genome_size / size
                    if predicted * MIN_GENERATIONS > 4 * args.cell_seconds:
                        notes.append(
                            f"{name} skipped from G = {genome_size:,}, population {population}:"
                            f" a generation would take >= {predicted:.1f} s (linear from"
                            f" G = {size:,})"
                        )
                        break
                result = measure(config, genome_size, args.cell_seconds)
                results[(name, genome_size, population)] = result
                previous = (genome_size, result["ask"] + result["tell_mean"])
                print(row(name, genome_size, result, format_bytes(needed)), flush=True)
    baseline = deap_baseline(3_000, 40, args.deap_generations)
    print(row("DEAP cma.Strategy (old CMA_ES)", 3_000, baseline, "-"), flush=True)
    for note in notes:
        print(f"\n- {note}", end="")
    print()
    ours = results.get(("CMA_ES", 3_000, 40))
    if ours is not None:
        print(
            f"\nCMA_ES tell at G = 3,000, population 40: median {ms(ours['tell'])} ms (target"
            f" <= 100), mean {ms(ours['tell_mean'])} ms; DEAP's median {ms(baseline['tell'])} ms:"
            f" {baseline['tell'] / ours['tell']:.0f}x faster (median),"
            f" {baseline['tell_mean'] / ours['tell_mean']:.0f}x (mean)"
        )
    for (name, genome_size, population), result in results.items():
        if genome_size == 1_000_000 and population == 40:
            print(f"{name} tell at G = 1M, population 40: {ms(result['tell'])} ms (target <= 50)")
    print(f"total bench time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
