"""Benchmark exported policies: one step of the ONNX model (onnxruntime, CPU provider) and of
the numpy-only file against the framework's brain, and the exported files' sizes.

Two policies: a 10-neuron CTRNN on CartPole-v1's spaces (with observation normalization) and
MinAtar Breakout's conv + CTRNN (the shipped ``configs/minatar_breakout.json`` brain: one
3x3 conv of 8 channels with max pooling into 8 neurons). Each step is timed on one recorded
observation, feeding the state back; it prints the median time per step (us) of each, the
ratio of each export to the brain, and the bytes of the ``.onnx``, ``.py`` and ``.npz``. Before
timing, it plays 10 episodes (seeds 0-9, at most 500 steps) with the brain and both exports side
by side and prints whether every action agreed and the largest state difference of each.

Usage: python scripts/bench_export.py [--samples 31]   (needs the export extra; seconds)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import timeit
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.export.loaded import NumpyPolicy, OnnxPolicy
from neuro_evolution.export.numpy_file import policy_files
from neuro_evolution.export.onnx_model import model_bytes
from neuro_evolution.export.policy import policy_graph
from neuro_evolution.run.experiment import build_template
from neuro_evolution.support.atomic import atomic_savez

BASE = {"random_seed": 1, "number_generations": 1, "optimizer": {"type": "PGPE"}}
POLICIES: dict[str, dict[str, Any]] = {
    "CTRNN-10, CartPole-v1": {
        "environment": {"id": "CartPole-v1"},
        "brain": {"type": "CTRNN", "number_neurons": 10},
        "observation_normalization": {},
    },
    "conv+CTRNN-8, MinAtar Breakout": {
        "environment": {"id": "minatar:MinAtar/Breakout-v1"},
        "brain": {
            "type": "composed",
            "parts": [
                {"type": "conv", "layers": [{"channels": 8, "kernel": 3, "pool": "max"}]},
                {"type": "CTRNN", "number_neurons": 8},
            ],
        },
    },
}


def median_us(call: Any, samples: int) -> float:
    """Median over ``samples`` samples (~1 ms each) of the mean time of one call, in us."""
    timer = timeit.Timer(call)
    number = max(1, int(1e-3 / (timer.timeit(20) / 20)))
    return statistics.median(timer.repeat(number=number, repeat=samples)) / number * 1e6


def exported(folder: Path, section: dict[str, Any]) -> tuple[Any, Any, Any, Any, dict[str, int]]:
    """(brain, scaler, onnx policy, numpy policy, file sizes) of a random genome of seed 0."""
    config = parse_config({**BASE, **section})
    template = build_template(config)
    rng = np.random.default_rng(0)
    genome = rng.normal(0.0, 1.0, template.genome_size)
    env = config.environment.make()
    space = env.observation_space
    env.close()
    scaler = None
    if config.observation_normalization is not None:
        size = int(np.prod(space.shape))
        scaler = ObservationScaler(
            mean=rng.normal(0, 0.3, size), scale=rng.uniform(0.5, 2, size), clip=5.0
        )
    graph = policy_graph(template, genome, scaler, space)
    (folder / "policy.onnx").write_bytes(model_bytes(graph, {}, "benchmark"))
    source, arrays = policy_files(graph, {}, "benchmark", "policy")
    (folder / "policy.py").write_text(source)
    atomic_savez(folder / "policy.npz", arrays)
    sizes = {
        name: (folder / name).stat().st_size for name in ("policy.onnx", "policy.py", "policy.npz")
    }
    brain = template.build(genome)
    brain.reset(np.random.default_rng(0))
    return (
        brain,
        scaler,
        OnnxPolicy(folder / "policy.onnx"),
        NumpyPolicy(folder / "policy.py"),
        sizes,
    )


def deviation(env: Any, brain: Any, scaler: Any, policy: Any) -> tuple[int, bool, float]:
    """(steps, every action equal, largest |state - brain state|) over 10 episodes."""
    steps, same, largest = 0, True, 0.0
    for seed in range(10):
        observation, _ = env.reset(seed=seed)
        brain.reset(np.random.default_rng(seed))
        state = policy.initial_state()
        for _ in range(500):
            action = brain.step(observation if scaler is None else scaler.apply(observation))
            exported_action, state = policy.step(observation, state)
            same = same and bool(np.array_equal(exported_action, action))
            for key, value in brain.internal_state().items():
                largest = max(largest, float(np.max(np.abs(state[key] - value))))
            steps += 1
            observation, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    return steps, same, largest


def bench(name: str, section: dict[str, Any], samples: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        brain, scaler, onnx_policy, numpy_policy, sizes = exported(Path(folder), section)
        env = parse_config({**BASE, **section}).environment.make()
        agreement = {
            "ONNX (onnxruntime)": deviation(env, brain, scaler, onnx_policy),
            "numpy file": deviation(env, brain, scaler, numpy_policy),
        }
        observation, _ = env.reset(seed=0)
        env.close()
        states = {"onnx": onnx_policy.initial_state(), "numpy": numpy_policy.initial_state()}

        def brain_step() -> None:
            brain.step(observation if scaler is None else scaler.apply(observation))

        def onnx_step() -> None:
            states["onnx"] = onnx_policy.step(observation, states["onnx"])[1]

        def numpy_step() -> None:
            states["numpy"] = numpy_policy.step(observation, states["numpy"])[1]

        times = {
            "framework brain": median_us(brain_step, samples),
            "ONNX (onnxruntime)": median_us(onnx_step, samples),
            "numpy file": median_us(numpy_step, samples),
        }
    reference = times["framework brain"]
    print(f"{name}: median us per step (ratio to the framework brain)")
    for label, value in times.items():
        print(f"  {label:20s} {value:9.1f} us  ({value / reference:.2f}x)")
    for label, (steps, same, largest) in agreement.items():
        print(
            f"  {label} against the brain over {steps} steps of 10 episodes: actions "
            f"{'all equal' if same else 'DIFFER'}, largest state difference {largest:.3g}"
        )
    print("  files: " + ", ".join(f"{file} {size:,} bytes" for file, size in sizes.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=31, help="timing samples per median")
    args = parser.parse_args()
    for name, section in POLICIES.items():
        bench(name, section, args.samples)


if __name__ == "__main__":
    main()
