"""Benchmark: env steps per second of the vectorized handler against the sequential handler.

Prints, measured in one run on this machine (medians of repeats):
- CartPole-v1, population 1000, the shipped 10-neuron CTRNN (configs/cartpole.json), on the
  native vector env: a generation-0 population (genes uniform in the config's
  initial_gene_range; most episodes end after a few dozen steps) and a balancing population
  (mutants of balancing genomes found by a short search in this script; most episodes last 500
  steps, as after a few generations of training);
- LunarLander-v3, population 200, the shipped 20-neuron CTRNN (configs/lunarlander.json), on a
  SyncVectorEnv (it has no native vector env), generation-0 population.
The sequential baseline runs on a subset of each population (a rate, so comparable) with the same
genomes and seeds. Every vectorized result is checked against the sequential one on that subset,
and finally over many random genomes of every brain type on the native CartPole vector env.

With ``--memory``: peak resident memory (``ru_maxrss``, one fresh subprocess per setting) of
one generation-0 LunarLander-v3 evaluation (``--memory-population`` individuals x 5 episodes, the
shipped CTRNN, SyncVectorEnv) without a lane cap and with a few ``max_lanes`` values; each child
checks its results against the uncapped ones (same fitness sum to the bit).

Usage: python scripts/bench_vectorized.py [--repeats 3] [--memory [--memory-population 600]]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from neuro_evolution.brains.base import BrainTemplate, make_template, parse_brain_config
from neuro_evolution.config.tree import load_config
from neuro_evolution.core.schema import parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig, RunnerSpec
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import build_template

ROOT = Path(__file__).resolve().parent.parent


def setup(
    config_name: str, runs: int, number_neurons: int | None = None
) -> tuple[BrainTemplate, RunnerSpec, tuple[float, float]]:
    """Template, runner spec (``runs`` episodes, shared seeds) and initial gene range
    (the optimizer's, or [-1, 1] for CMA-ES); ``number_neurons`` resizes the CTRNN."""
    config = load_config(ROOT / "configs" / config_name)
    if number_neurons is not None:
        brain = dataclasses.replace(config.brain, number_neurons=number_neurons)
        config = dataclasses.replace(config, brain=brain)
    runner = dataclasses.replace(
        config.episode_runner, number_fitness_runs=runs, fix_seed_for_generation=True
    )
    spec = RunnerSpec(environment=config.environment, episode_runner=runner)
    gene_range = getattr(config.optimizer, "initial_gene_range", (-1.0, 1.0))
    return build_template(config), spec, tuple(gene_range)


def steps_per_second(
    handler: EvaluationHandler, genomes: np.ndarray, seeds: np.ndarray, repeats: int
) -> tuple[float, list]:
    """Median env steps per CPU second of this process over ``repeats`` evaluations (the machine
    is shared: wall-clock time would measure the neighbours), and the last results."""
    rates, results = [], []
    for _ in range(repeats):
        start = time.process_time()
        results = handler.batch_evaluate(genomes, seeds)
        elapsed = time.process_time() - start
        rates.append(sum(r.steps for r in results) / elapsed)
    return statistics.median(rates), results


def balancing_population(
    template: BrainTemplate, spec: RunnerSpec, genomes: np.ndarray, seeds: np.ndarray
) -> np.ndarray:
    """Tiny mutants of genomes that balance for 500 steps, found by truncation selection."""
    rng = np.random.default_rng(1)
    quick = dataclasses.replace(
        spec, episode_runner=EpisodeRunnerConfig(number_fitness_runs=1, max_steps_per_run=500)
    )
    with VectorizedHandler() as handler:
        handler.start(template, quick)
        for _ in range(30):
            steps = np.array([r.steps for r in handler.batch_evaluate(genomes, seeds)])
            if np.count_nonzero(steps >= 500) >= 5:
                break
            parents = genomes[np.argsort(-steps, kind="stable")[:50]]
            genomes = np.resize(parents, genomes.shape) + rng.normal(0, 0.02, genomes.shape)
    balancing = genomes[np.argsort(-steps, kind="stable")[:5]]
    return np.resize(balancing, genomes.shape) + rng.normal(0, 0.001, genomes.shape)


def compare(
    name: str,
    template: BrainTemplate,
    spec: RunnerSpec,
    genomes: np.ndarray,
    sequential_subset: int,
    repeats: int,
) -> tuple[float, float]:
    """Print and return (vectorized, sequential) env steps/s for one population."""
    seeds = np.full(len(genomes), 12345, dtype=np.uint32)
    with SequentialHandler() as sequential, VectorizedHandler() as vectorized:
        sequential.start(template, spec)
        vectorized.start(template, spec)
        vector_rate, vector_results = steps_per_second(vectorized, genomes, seeds, repeats)
        subset = slice(0, sequential_subset)
        sequential_rate, sequential_results = steps_per_second(
            sequential, genomes[subset], seeds[subset], repeats
        )
        how = vectorized.describe()
    if vector_results[subset] != sequential_results:
        raise SystemExit(f"{name}: vectorized results differ from sequential ones")
    mean_steps = (
        np.mean([r.steps for r in vector_results]) / spec.episode_runner.number_fitness_runs
    )
    print(
        f"{name}: P={len(genomes)}, {mean_steps:.0f} steps per episode on average, {how}\n"
        f"    vectorized {vector_rate:>12,.0f} env steps/s (CPU time)\n"
        f"    sequential {sequential_rate:>12,.0f} env steps/s (first {sequential_subset} "
        f"individuals)\n"
        f"    ratio      {vector_rate / sequential_rate:>12.1f}x"
    )
    return vector_rate, sequential_rate


def identity(
    label: str, template: BrainTemplate, spec: RunnerSpec, genomes: np.ndarray, seeds: np.ndarray
) -> None:
    """Print how many individuals get identical results on the native env and sequentially."""
    with SequentialHandler() as sequential, VectorizedHandler("native") as vectorized:
        sequential.start(template, spec)
        vectorized.start(template, spec)
        expected = sequential.batch_evaluate(genomes, seeds)
        results = vectorized.batch_evaluate(genomes, seeds)
    equal = sum(a == b for a, b in zip(expected, results))
    steps = [r.steps for r in expected]
    print(
        f"native CartPole-v1 vs sequential, {label}: {equal}/{len(genomes)} individuals identical "
        f"({sum(steps):,} env steps, longest evaluation {max(steps)} steps)"
    )


def random_identity(count: int) -> None:
    """Identity over random genomes of every brain type (own seeds, 2 episodes each)."""
    rng = np.random.default_rng(2)
    spec = RunnerSpec(
        environment=parse(EnvironmentConfig, {"id": "CartPole-v1"}, "environment"),
        episode_runner=EpisodeRunnerConfig(number_fitness_runs=2),
    )
    env = spec.environment.make()
    for brain in ("CTRNN", "FFNN", "LSTM"):
        config = parse_brain_config({"type": brain}, "brain")
        template = make_template(config, env.observation_space, env.action_space, rng)
        scale = rng.choice([0.1, 0.3, 1.0, 3.0], size=(count, 1))
        genomes = rng.normal(size=(count, template.genome_size)) * scale
        seeds = rng.integers(0, 2**32, size=count, dtype=np.uint32)
        identity(f"random {brain}", template, spec, genomes, seeds)
    env.close()


MEMORY_RUNS = 5
MEMORY_CAPS = (None, 1000, 250, 50)


def memory_child(population: int, max_lanes: int | None) -> None:
    """Evaluate one LunarLander population with ``max_lanes`` and print JSON: peak resident
    memory before and after the evaluation (MiB), the fitness sum, CPU seconds."""
    lander, spec, (low, high) = setup("lunarlander.json", runs=MEMORY_RUNS)
    spec = dataclasses.replace(spec, max_lanes=max_lanes)
    genomes = np.random.default_rng(0).uniform(low, high, size=(population, lander.genome_size))
    seeds = np.full(population, 12345, dtype=np.uint32)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    start = time.process_time()
    with VectorizedHandler() as handler:
        handler.start(lander, spec)
        results = handler.batch_evaluate(genomes, seeds)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    fitness = sum(r.fitness for r in results)
    print(
        json.dumps(
            {
                "before": before,
                "after": after,
                "fitness": fitness.hex(),
                "cpu": time.process_time() - start,
            }
        )
    )


def memory_mode(population: int) -> None:
    """Print peak memory against lanes, one subprocess per max_lanes setting."""
    lanes = population * MEMORY_RUNS
    print(
        f"LunarLander-v3, P={population} x {MEMORY_RUNS} episodes = {lanes:,} lanes, "
        "generation 0, peak resident memory per fresh process (shared machine):"
    )
    reference = None
    for cap in MEMORY_CAPS:
        command = [
            sys.executable,
            __file__,
            "--memory-child",
            str(cap),
            "--memory-population",
            str(population),
        ]
        report = json.loads(
            subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()[
                -1
            ]
        )
        reference = reference or report["fitness"]
        same = "identical" if report["fitness"] == reference else "DIFFERENT"
        print(
            f"    max_lanes {'none' if cap is None else f'{cap:,}':>6}: peak "
            f"{report['after']:7.0f} MiB ({report['after'] - report['before']:+6.0f} MiB over "
            f"the {report['before']:.0f} MiB before evaluating), {report['cpu']:5.1f} s CPU, "
            f"results {same}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--identity", type=int, default=2000, help="genomes per brain type")
    parser.add_argument("--memory", action="store_true", help="peak memory against max_lanes")
    parser.add_argument("--memory-population", type=int, default=600)
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child is not None:
        cap = None if args.memory_child == "None" else int(args.memory_child)
        return memory_child(args.memory_population, cap)
    if args.memory:
        return memory_mode(args.memory_population)
    rng = np.random.default_rng(0)

    cartpole, cartpole_spec, (low, high) = setup("cartpole.json", runs=1, number_neurons=10)
    print(f"CartPole-v1 brain: {cartpole.config.type_name()}, genome size {cartpole.genome_size}")
    initial = rng.uniform(low, high, size=(1000, cartpole.genome_size))
    compare("CartPole-v1 generation 0", cartpole, cartpole_spec, initial, 100, args.repeats)
    seeds = np.full(1000, 12345, dtype=np.uint32)
    balancing = balancing_population(cartpole, cartpole_spec, initial, seeds)
    compare("CartPole-v1 balancing", cartpole, cartpole_spec, balancing, 40, args.repeats)
    print("    targets: >= 500,000 env steps/s and >= 20x sequential")

    lander, lander_spec, (low, high) = setup("lunarlander.json", runs=1)
    print(f"LunarLander-v3 brain: {lander.config.type_name()}, genome size {lander.genome_size}")
    initial = rng.uniform(low, high, size=(200, lander.genome_size))
    compare("LunarLander-v3 generation 0", lander, lander_spec, initial, 40, args.repeats)
    print("    target: >= 1.5x sequential")

    identity("balancing CTRNN population", cartpole, cartpole_spec, balancing, seeds)
    random_identity(args.identity)


if __name__ == "__main__":
    main()
