"""Benchmark: time to solve the shipped CartPole config, and sequential env steps per second.

Prints, for ``configs/cartpole.json`` (or the config given) on this machine:
- the training wall time until the hall-of-fame best genome's mean return over 10 fixed
  evaluation seeds reaches 475 (the check itself is not counted), per training seed;
- env steps per second of the sequential handler for a 10-neuron CTRNN on CartPole-v1
  (median of repeats), against the peers' figures measured on this project's machines.

Usage: python scripts/bench_train.py [CONFIG] [--seeds 1 2 3] [--handler sequential]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numpy as np

from neuro_evolution.config import load_config
from neuro_evolution.evaluation.episode import EpisodeRunnerConfig, RunnerSpec
from neuro_evolution.evaluation.handlers.sequential import SequentialHandler
from neuro_evolution.experiment import Experiment, build_template

ROOT = Path(__file__).resolve().parent.parent
SOLVED = 475.0
EVALUATION_SEEDS = range(1000, 1010)


def solve_time(config, max_generations: int) -> tuple[float | None, int, int]:
    """(training seconds until solved or None, generations, env steps)."""
    experiment = Experiment(config)
    runner = experiment.spec.make()
    training = 0.0
    try:
        while experiment.generation < max_generations:
            start = time.perf_counter()
            experiment.step()
            training += time.perf_counter() - start
            brain = experiment.template.build(experiment.hall_of_fame.genomes[0])
            returns = [runner.run_episode(brain, seed).fitness for seed in EVALUATION_SEEDS]
            if np.mean(returns) >= SOLVED:
                return training, experiment.generation, sum(r["env_steps"] for r in experiment.log)
    finally:
        experiment.close()
        runner.close()
    return None, experiment.generation, sum(r["env_steps"] for r in experiment.log)


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
    parser.add_argument("config", nargs="?", default=str(ROOT / "configs" / "cartpole.json"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--handler", default="sequential")
    parser.add_argument("--max-generations", type=int, default=100)
    args = parser.parse_args()

    base = load_config(args.config)
    evaluation = dataclasses.replace(base.evaluation, handler=args.handler)
    print(f"config: {args.config} (handler {args.handler})")
    print(f"{'seed':>6} {'solved':>7} {'seconds':>8} {'gens':>5} {'env steps':>10}")
    times = []
    for seed in args.seeds:
        config = dataclasses.replace(base, random_seed=seed, evaluation=evaluation)
        seconds, generations, steps = solve_time(config, args.max_generations)
        solved = seconds is not None
        shown = f"{seconds:8.2f}" if solved else f"{'-':>8}"
        print(f"{seed:>6} {'yes' if solved else 'no':>7} {shown} {generations:>5} {steps:>10}")
        if solved:
            times.append(seconds)
    if times:
        print(
            f"median time to solve (mean return over 10 seeds >= {SOLVED:g}): "
            f"{statistics.median(times):.2f} s, solved {len(times)}/{len(args.seeds)} "
            f"(target <= 30 s)"
        )
    else:
        print(f"not solved within {args.max_generations} generations for any seed")
    rate = sequential_steps_per_second()
    print(
        f"sequential handler, 10-neuron CTRNN, CartPole-v1: {rate:,.0f} env steps/s (median of 5; "
        f"target >= 30,000; peers measured here: EvoTorch ~6,600, neat-python CTRNN ~8,900)"
    )


if __name__ == "__main__":
    main()
