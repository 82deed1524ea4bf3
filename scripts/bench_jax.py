"""Benchmark: env steps per second of the jax handler against the numpy vectorized handler.

A 10-neuron CTRNN (configs/cartpole.json resized, as in bench_vectorized.py) on CartPole-v1 with
the balancing population of bench_vectorized.py (mutants of genomes that balance 500 steps, found
on the numpy path), at P = 1k, 10k, 100k and 1M (1M only when the estimated memory fits):

- jax: the jax handler on gymnax CartPole-v1, on whatever device JAX finds (CPU here, a GPU where
  there is one: the script runs unchanged), float32; compilation is timed apart and excluded;
- numpy: the vectorized handler on Gymnasium's native CartPole vector env, same genomes and
  seeds, measured in the same run at P = 1k and 10k (and 100k with --numpy-100k).

Rates are medians over repeats of env steps / wall-clock second, and env steps / CPU second of
this process (the machine may be shared; XLA uses every core it is given, numpy one).

Usage: python scripts/bench_jax.py [--repeats 3] [--sizes 1000 10000 100000 1000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vectorized import setup  # noqa: E402

from neuro_evolution.core.schema import parse  # noqa: E402
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig  # noqa: E402
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler  # noqa: E402

SEED = 12345
BYTES_PER_INDIVIDUAL = 6000  # genomes and their copies, float64 host parameters, device copies


def rates(evaluate, count: int, repeats: int) -> tuple[float, float, list]:
    """Median env steps per wall second and per CPU second over ``repeats`` calls."""
    wall, cpu, results = [], [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        results = evaluate()
        elapsed, elapsed_cpu = time.perf_counter() - start, time.process_time() - start_cpu
        steps = sum(r.steps for r in results)
        wall.append(steps / elapsed)
        cpu.append(steps / elapsed_cpu)
    return statistics.median(wall), statistics.median(cpu), results


def balancing_population(numpy_handler, jax_handler, genomes: np.ndarray) -> np.ndarray:
    """bench_vectorized.py's balancing population, selected on both envs: tiny mutants of
    genomes that balance 500 steps on Gymnasium's and on gymnax's CartPole (the two start from
    different states for one seed, so a genome fitted to one start may fall on the other)."""
    rng = np.random.default_rng(1)
    seeds = np.full(len(genomes), SEED, dtype=np.uint32)
    for _ in range(40):
        steps = np.minimum(
            [r.steps for r in numpy_handler.batch_evaluate(genomes, seeds)],
            [r.steps for r in jax_handler.batch_evaluate(genomes, seeds)],
        )
        if np.count_nonzero(steps >= 500) >= 5:
            break
        parents = genomes[np.argsort(-steps, kind="stable")[:50]]
        genomes = np.resize(parents, genomes.shape) + rng.normal(0, 0.02, genomes.shape)
    balancing = genomes[np.argsort(-steps, kind="stable")[:5]]
    return np.resize(balancing, genomes.shape) + rng.normal(0, 0.001, genomes.shape)


def available_bytes() -> int:
    """Free memory of the device JAX uses (host memory for the CPU)."""
    import jax

    device = jax.devices()[0]
    stats = device.memory_stats() if device.platform != "cpu" else None
    if stats and "bytes_limit" in stats:
        return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0))
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--numpy-100k", action="store_true", help="numpy at P = 100k too")
    args = parser.parse_args()

    import jax

    from neuro_evolution.evaluation.jax.handler import JaxHandler

    template, spec, (low, high) = setup("cartpole.json", runs=1, number_neurons=10)
    rng = np.random.default_rng(0)
    initial = rng.uniform(low, high, size=(1000, template.genome_size))
    jax_env = parse(EnvironmentConfig, {"id": "CartPole-v1", "backend": "gymnax"}, "environment")
    jax_spec = type(spec)(environment=jax_env, episode_runner=spec.episode_runner)
    print(
        f"CTRNN {template.config.number_neurons} neurons, genome size {template.genome_size}; "
        f"JAX {jax.__version__} on {jax.devices()[0]} ({jax.devices()[0].device_kind}); "
        f"{os.cpu_count()} CPUs"
    )
    numpy_sizes = {1000, 10_000} | ({100_000} if args.numpy_100k else set())
    with JaxHandler() as fast, VectorizedHandler() as vectorized:
        fast.start(template, jax_spec)
        vectorized.start(template, spec)
        balancing = balancing_population(vectorized, fast, initial)
        for count in args.sizes:
            if count * BYTES_PER_INDIVIDUAL > available_bytes() // 2:
                print(f"P={count:>9,}: skipped (needs ~{count * BYTES_PER_INDIVIDUAL / 2**30:.1f} "
                      "GiB, more than half the free memory)")  # fmt: skip
                continue
            genomes = np.resize(balancing, (count, template.genome_size))
            genomes = genomes + np.random.default_rng(1).normal(0, 0.001, genomes.shape)
            seeds = np.full(count, SEED, dtype=np.uint32)
            compiled = fast.statistics().compile_seconds
            fast.batch_evaluate(genomes[:1].repeat(count, axis=0), seeds)  # compiles this shape
            compile_seconds = fast.statistics().compile_seconds - compiled
            wall, cpu, results = rates(
                lambda g=genomes, s=seeds: fast.batch_evaluate(g, s), count, args.repeats
            )
            mean_steps = np.mean([r.steps for r in results])
            compiled_text = (
                f"compile {compile_seconds:.1f} s, excluded"
                if compile_seconds
                else "compiled earlier"
            )
            line = (
                f"P={count:>9,}: jax {wall:>13,.0f} env steps/s wall, {cpu:>13,.0f} per CPU s "
                f"({compiled_text}; {mean_steps:.0f} steps/episode)"
            )
            print(line, flush=True)
            if count in numpy_sizes:
                repeats = args.repeats if count <= 10_000 else 1
                n_wall, n_cpu, _ = rates(
                    lambda g=genomes, s=seeds: vectorized.batch_evaluate(g, s), count, repeats
                )
                print(
                    f"{'':13}numpy vectorized {n_wall:>13,.0f} wall, {n_cpu:>13,.0f} per CPU s"
                    f"  -> jax/numpy {wall / n_wall:.1f}x wall, {cpu / n_cpu:.1f}x CPU",
                    flush=True,
                )
        stats = fast.statistics()
        print(f"jax: {stats.compilations} compilations, {stats.compile_seconds:.1f} s in all")
    print("target: jax >= 5x numpy vectorized at P = 10k on the 2-core CPU; >= 100M on a GPU")


if __name__ == "__main__":
    main()
