"""Benchmark: env steps per second of the sequential handler (10-neuron CTRNN, CartPole-v1).

Prints the median of repeats against the peers' figures measured on this project's machines.
Time to *solve* (held-out validation reaching the target) is ``scripts/bench_solve.py``.

Usage: python scripts/bench_train.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numpy as np

from neuro_evolution.config.tree import load_config
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig, RunnerSpec
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import build_template

ROOT = Path(__file__).resolve().parent.parent


def sequential_steps_per_second(repeats: int = 5, population: int = 50) -> float:
    """Median env steps/s of the sequential handler, 10-neuron CTRNN, CartPole-v1."""
    config = load_config(ROOT / "configs" / "cartpole.json")
    brain = dataclasses.replace(config.brain, number_neurons=10)
    config = dataclasses.replace(config, brain=brain)
    template = build_template(config)
    spec = RunnerSpec(
        environment=config.environment, episode_runner=EpisodeRunnerConfig(number_fitness_runs=1)
    )
    handler = SequentialHandler()
    handler.start(template, spec)
    rng = np.random.default_rng(0)
    # Genomes that balance for a while, so that episodes are long (steps, not resets, dominate).
    genomes = rng.normal(scale=0.5, size=(population, template.genome_size))
    seeds = np.arange(population, dtype=np.uint32)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        results = handler.batch_evaluate(genomes, seeds)
        elapsed = time.perf_counter() - start
        rates.append(sum(r.steps for r in results) / elapsed)
    handler.close()
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rate = sequential_steps_per_second(args.repeats)
    print(
        f"sequential handler, 10-neuron CTRNN, CartPole-v1: {rate:,.0f} env steps/s (median of "
        f"{args.repeats}; target >= 30,000; peers measured here: EvoTorch ~6,600, neat-python "
        "CTRNN ~8,900)"
    )


if __name__ == "__main__":
    main()
