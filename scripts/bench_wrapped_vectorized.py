"""Benchmark: what a wrapper costs the vectorized handler (docs/environments.md).

A wrapped env leaves the native vector env: every sub-env of a SyncVectorEnv is made by
``EnvironmentConfig.make`` with the wrappers. This prints env steps per second (medians of
repeats, one run on this machine) for CartPole-v1, a population of random FFNN genomes:

- vectorized, bare env (native CartPoleVectorEnv) -- the baseline;
- vectorized, bare env forced onto SyncVectorEnv;
- vectorized, env + RewardOffset (SyncVectorEnv, chosen automatically);
- sequential, env + RewardOffset, on a subset of the population (a rate, so comparable).

Each vectorized result is checked against the sequential one on that subset.

Usage: python scripts/bench_wrapped_vectorized.py [--population 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from neuro_evolution.brains.base import make_template, parse_brain_config
from neuro_evolution.core.schema import parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig, RunnerSpec
from neuro_evolution.evaluation.episodes.wrappers import REWARD_OFFSET
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler

OFFSET = [{"name": REWARD_OFFSET, "kwargs": {"offset": -0.5}}]


def spec_for(wrappers: list) -> RunnerSpec:
    environment = parse(EnvironmentConfig, {"id": "CartPole-v1", "wrappers": wrappers}, "env")
    return RunnerSpec(environment=environment, episode_runner=EpisodeRunnerConfig())


def rate(handler: EvaluationHandler, spec: RunnerSpec, template, genomes, seeds, repeats: int):
    """(median env steps per second, results) of ``repeats`` evaluations of the population."""
    handler.start(template, spec)
    try:
        rates, results = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            results = handler.batch_evaluate(genomes, seeds)
            elapsed = time.perf_counter() - start
            rates.append(sum(r.steps for r in results) / elapsed)
        return statistics.median(rates), results
    finally:
        handler.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--subset", type=int, default=100, help="genomes run sequentially")
    args = parser.parse_args()
    bare, wrapped = spec_for([]), spec_for(OFFSET)
    env = bare.environment.make()
    brain = parse_brain_config({"type": "FFNN", "hidden_layers": [8]}, "brain")
    template = make_template(
        brain, env.observation_space, env.action_space, np.random.default_rng(0)
    )
    env.close()
    genomes = np.random.default_rng(1).normal(size=(args.population, template.genome_size))
    seeds = np.arange(args.population, dtype=np.int64) + 1000
    cases = [
        ("vectorized, bare env, native", VectorizedHandler(), bare),
        ("vectorized, bare env, SyncVectorEnv", VectorizedHandler(mode="sync"), bare),
        ("vectorized, RewardOffset, SyncVectorEnv", VectorizedHandler(), wrapped),
    ]
    sub = slice(0, args.subset)
    sequential, reference = rate(
        SequentialHandler(), wrapped, template, genomes[sub], seeds[sub], args.repeats
    )
    baseline = None
    print(f"CartPole-v1, FFNN [8], population {args.population}, medians of {args.repeats}")
    for name, handler, spec in cases:
        steps_per_s, results = rate(handler, spec, template, genomes, seeds, args.repeats)
        if spec is wrapped:
            assert [r.fitness for r in results[sub]] == [r.fitness for r in reference]
        baseline = baseline or steps_per_s
        print(f"  {name:42s} {steps_per_s:12,.0f} steps/s  ({steps_per_s / baseline:.2f}x)")
    print(
        f"  {'sequential, RewardOffset (subset)':42s} {sequential:12,.0f} steps/s  "
        f"({sequential / baseline:.2f}x)"
    )


if __name__ == "__main__":
    main()
