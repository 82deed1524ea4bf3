"""Benchmark the CTRNN brain: build, fill and step times, memory per brain, against a baseline.

For dense CTRNNs of 10, 50 and 200 neurons on the spaces of CartPole-v1 and HalfCheetah-v5 it
prints the median time of ``template.build(genome)``, ``template.fill(brain, genome)`` and
``brain.step(observation)``, the bytes of the arrays a brain owns, and the ratio against a
straightforward implementation measured in the same run: build = allocate V, W, T and scatter the
genome with the boolean masks; step = ``np.tanh``, two matrix products, ``np.clip``, new arrays
each step. Targets (50 neurons): build <= 15 us, fill <= 5 us, step <= 8 us.

Usage: python scripts/bench_brains.py   (a few seconds; medians of 31 samples of ~1 ms each)
"""

from __future__ import annotations

import argparse
import os
import statistics
import timeit
from typing import Any

import gymnasium as gym
import numpy as np

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import parse_brain_config

TARGETS_US = {"build": 15.0, "fill": 5.0, "step": 8.0}  # for a 50-neuron dense CTRNN
SIZES = (10, 50, 200)
ENVS = ("CartPole-v1", "HalfCheetah-v5")


def median_us(call: Any, samples: int) -> float:
    """Median, over ``samples`` short samples (~1 ms each, so that a sample disturbed by another
    process on this shared machine is an outlier), of the mean time of one call, in us."""
    timer = timeit.Timer(call)
    number = max(1, int(1e-3 / (timer.timeit(20) / 20)))
    return statistics.median(timer.repeat(number=number, repeat=samples)) / number * 1e6


class ScratchCTRNN:
    """The straightforward baseline: allocate every matrix, scatter the genome by the masks."""

    def __init__(self, template: Any, genome: np.ndarray):
        c = template.config
        sizes = [int(m.sum()) for m in (template.v_mask, template.w_mask, template.t_mask)]
        ends = np.cumsum(sizes)
        self.V = np.zeros(template.v_mask.shape)
        self.V[template.v_mask] = genome[: ends[0]]
        self.W = np.zeros(template.w_mask.shape)
        self.W[template.w_mask] = genome[ends[0] : ends[1]]
        self.T = np.zeros(template.t_mask.shape)
        self.T[template.t_mask] = genome[ends[1] : ends[2]]
        N = c.number_neurons
        self.b = genome[ends[2] : ends[2] + N].copy() if c.use_bias else np.zeros(N)
        self.y = np.zeros(N)
        self.low = np.full(N, c.clipping_range_min)
        self.high = np.full(N, c.clipping_range_max)
        self.delta_t = c.delta_t
        self.io = template.io

    def step(self, observation: Any) -> Any:
        u = np.asarray(observation, dtype=np.float64).reshape(-1)
        dydt = np.tanh(self.y) @ self.W + u @ self.V + self.b
        self.y = np.clip(self.y + self.delta_t * dydt, self.low, self.high)
        return self.io.decode(np.tanh(self.y @ self.T))


def owned_bytes(brain: Any) -> int:
    """Bytes of the arrays a brain owns (views and shared read-only template arrays skipped)."""
    total = 0
    for cls in type(brain).__mro__:
        for name in getattr(cls, "__slots__", ()):
            value = getattr(brain, name, None)
            if isinstance(value, np.ndarray) and value.base is None and value.flags.writeable:
                total += value.nbytes
    return total


def spaces(env_id: str) -> tuple[gym.Space, gym.Space]:
    env = gym.make(env_id)
    try:
        return env.observation_space, env.action_space
    finally:
        env.close()


def bench(env_id: str, neurons: int, samples: int = 31) -> dict[str, float]:
    observation_space, action_space = spaces(env_id)
    config = parse_brain_config({"type": "CTRNN", "number_neurons": neurons}, "brain")
    template = make_template(config, observation_space, action_space, np.random.default_rng(0))
    genome = np.random.default_rng(1).normal(0.0, 0.5, template.genome_size)
    observation = observation_space.sample()
    brain = template.build(genome)
    brain.reset(np.random.default_rng(0))
    scratch = ScratchCTRNN(template, genome)
    row = {
        "genome": template.genome_size,
        "build": median_us(lambda: template.build(genome), samples),
        "fill": median_us(lambda: template.fill(brain, genome), samples),
        "step": median_us(lambda: brain.step(observation), samples),
        "scratch_build": median_us(lambda: ScratchCTRNN(template, genome), samples),
        "scratch_step": median_us(lambda: scratch.step(observation), samples),
        "bytes": owned_bytes(brain),
    }
    return row


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    header = (
        f"{'env':15s} {'N':>4s} {'genome':>7s} {'build us':>9s} {'fill us':>8s} {'step us':>8s} "
        f"{'bytes':>8s} {'scratch build':>14s} {'ratio':>6s} {'scratch step':>13s} {'ratio':>6s}"
    )
    load = os.getloadavg()[0]
    print(f"CTRNN, dense masks; medians of ~1 ms samples; load average {load:.2f}")
    print("ratio = time of the straightforward baseline / time of neuro_evolution's CTRNN")
    print(header)
    results = {}
    for env_id in ENVS:
        for neurons in SIZES:
            r = bench(env_id, neurons)
            results[env_id, neurons] = r
            print(
                f"{env_id:15s} {neurons:4d} {r['genome']:7d} {r['build']:9.2f} {r['fill']:8.2f} "
                f"{r['step']:8.2f} {r['bytes']:8d} {r['scratch_build']:14.2f} "
                f"{r['scratch_build'] / r['build']:6.1f} {r['scratch_step']:13.2f} "
                f"{r['scratch_step'] / r['step']:6.1f}"
            )
    print("\nTargets for a 50-neuron dense CTRNN:")
    for env_id in ENVS:
        r = results[env_id, 50]
        verdicts = [
            f"{kind} {r[kind]:.2f} us <= {limit:g} us: {'met' if r[kind] <= limit else 'NOT met'}"
            for kind, limit in TARGETS_US.items()
        ]
        print(f"  {env_id:15s} " + "; ".join(verdicts))


if __name__ == "__main__":
    main()
