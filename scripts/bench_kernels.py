"""Benchmark: what portable kernels (``--portable-kernels``) cost in speed on this machine.

Portable mode runs numpy's kernels up to X86_V3 (AVX2) and OpenBLAS's Haswell kernels, so on a
CPU with AVX-512 it gives up those kernels, and where the machine picks other kernels the command
starts Python a second time. Each repeat trains ``CONFIG`` for ``--generations`` on the
sequential handler as two fresh commands, the default kernels and the portable ones, in
alternating order; it prints each mode's kernels (from training_status.json), the median of the
training wall time the run records and of the whole command's wall time (start-up included), and
the ratio portable / default of each. Where this machine already picks the portable set the two
modes run the same kernels and the ratios measure noise.

Usage: ``python scripts/bench_kernels.py [CONFIG] [--generations N] [--repeats K]``
(default configs/cartpole.json, 10 generations, 5 repeats).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIABLES = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")


def train(
    config: Path, generations: int, out: Path, portable: bool
) -> tuple[float, float, str, int]:
    """(training wall time, command wall time, kernels, generations trained) of one fresh
    ``train`` command (a run that reaches its validation target stops before ``generations``)."""
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    command = [sys.executable, "-m", "neuro_evolution.train", str(config), "--quiet"]
    command += ["--generations", str(generations), "--handler", "sequential", "--out", str(out)]
    command += ["--portable-kernels"] if portable else []
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True)
    whole = time.perf_counter() - start
    (status_file,) = out.rglob("training_status.json")
    status = json.loads(status_file.read_text())
    kernels = status["kernels"]
    text = f"numpy {' '.join(kernels['numpy']) or 'baseline only'}, {kernels['blas']}"
    return float(status["wall_time"]), whole, text, int(status["generation"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path, nargs="?", default=ROOT / "configs" / "cartpole.json")
    parser.add_argument("--generations", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    kernels: dict[bool, str] = {}
    trained: set[int] = set()
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            for portable in (False, True) if repeat % 2 == 0 else (True, False):
                out = Path(folder) / f"{repeat}-{portable}"
                training, whole, kernels[portable], done = train(
                    args.config, args.generations, out, portable
                )
                times[portable].append((training, whole))
                trained.add(done)
    done_text = ", ".join(map(str, sorted(trained)))
    print(f"{args.config.name}, {done_text} generations trained, {args.repeats} repeats each")
    medians = {}
    for portable, label in ((False, "default"), (True, "portable")):
        training = statistics.median(t for t, _ in times[portable])
        whole = statistics.median(w for _, w in times[portable])
        medians[portable] = (training, whole)
        print(f"{label:9s} {kernels[portable]}: training {training:.2f} s, command {whole:.2f} s")
    ratio_training = medians[True][0] / medians[False][0]
    ratio_whole = medians[True][1] / medians[False][1]
    print(f"portable / default: training {ratio_training:.3f}, command {ratio_whole:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
