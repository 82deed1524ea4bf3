"""Benchmark MAP_ELITES and CMA_ME on the pyribs lunar lander tutorial task, with its figures.

The task (https://docs.pyribs.org/en/stable/tutorials/lunar_lander.html, notebook
``tutorials/lunar_lander.ipynb`` of icaros-usc/pyribs): LunarLander with a linear policy
(argmax of W s: the shipped FFNN without hidden layer or bias and with ``output_activation``
identity, so tanh ties no large outputs); descriptors are the x position
and the y velocity when a leg first touches the ground (else the last x and the minimum y
velocity) over a 50 x 50 grid of [-1, 1] x [-3, 0];
QD score offset -600. The tutorial runs CMA-ME with 5 improvement ("2imp") emitters of batch 30
for 300 iterations = 45,000 evaluations and prints, after 300 iterations: 2,493 elites,
coverage 0.9972, QD score 1,387,979.8, best objective 312.4, in 1,160.5 s (Colab, 2 Dask
workers). Its env resets with seed 52 every time. The shipped CMA_ME config also plays one
fixed scenario (``same_seeds_every_generation``: generation 0's shared seed, 3,209,444,514 for
run seed 1); MAP_ELITES plays a new shared seed every generation, so its elites have met many.
To compare on the same scenario, run pyribs' tutorial code with that env seed, or run ours on
the tutorial's: ``--reset-seed 52`` resets every training episode with seed 52
(``episode_runner.training_reset_seeds``); validation keeps its held-out seeds.

For each of ``configs/qd_lunarlander_map_elites.json`` and ``configs/qd_lunarlander_cma_me.json``
it runs ``--budget`` evaluations (default the tutorial's 45,000) on the mp handler with one
worker per core and prints, every 1,000 evaluations, the QD score, coverage and best elite
(training fitness), then the wall time, and the best elite's held-out validation.

``--floor``: instead, the shipped CMA_ME run on the tutorial's seed (or ``--reset-seed``), which
records every genome it evaluates, then the same genomes played by a bare loop in a process pool
of as many workers (``gym.make``, ``argmax(W s)``, ``env.step``: no framework at all; it prints
how many generations' mean returns differ, 0 when both played the same episodes): what the env
alone costs, the least time any run of the task can take.

Usage: python scripts/bench_qd.py [--budget 45000] [--workers 0] [--smoke] [--vectorize]
[--reset-seed S] [--configs NAME ...] | --floor
``--smoke``: 300 evaluations each, batches cut to 30 (CMA_ME: 2 emitters of 15): under a minute.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.experiment import Experiment

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ("qd_lunarlander_map_elites.json", "qd_lunarlander_cma_me.json")
TUTORIAL = (
    "pyribs tutorial (CMA-ME, 45,000 evaluations, env seed 52): QD score 1,387,979.8, coverage "
    "0.9972, best 312.4, 1,160.5 s on Colab with 2 Dask workers "
    "(https://docs.pyribs.org/en/stable/tutorials/lunar_lander.html)"
)


def batch_of(optimizer: dict[str, Any]) -> int:
    """Evaluations per generation of a QD optimizer section."""
    if optimizer["type"] == "CMA_ME":
        return int(optimizer.get("emitters", 5)) * int(optimizer.get("batch_size", 30))
    return int(optimizer.get("batch_size", 100))


class Options(NamedTuple):
    """How the benchmark runs each config."""

    budget: int  # evaluations
    workers: int  # mp workers (0: one per core)
    smoke: bool = False  # small batches
    vectorize: bool = False  # mp workers step their chunks in lockstep
    reset_seed: int | None = None  # every training episode resets with this seed


def configured(name: str, options: Options) -> dict[str, Any]:
    """The shipped config with the budget's generations and the benchmark's handler (and every
    training episode reset with ``options.reset_seed`` when given)."""
    data = json.loads((ROOT / "configs" / name).read_text())
    if options.reset_seed is not None:
        data.setdefault("episode_runner", {})["training_reset_seeds"] = [options.reset_seed]
    optimizer = data["optimizer"]
    if options.smoke:
        if optimizer["type"] == "CMA_ME":
            optimizer.update(emitters=2, batch_size=15)
        else:
            optimizer["batch_size"] = 30
    data["number_generations"] = max(1, math.ceil(options.budget / batch_of(optimizer)))
    data["evaluation"] = {
        "handler": "mp", "workers": options.workers, "vectorize": options.vectorize
    }  # fmt: skip
    validation = data.get("validation") or {}
    data["validation"] = {
        "every_generations": data["number_generations"],
        "episodes": validation.get("episodes", 10),
    }
    return data


def run(name: str, options: Options) -> None:
    data = configured(name, options)
    experiment = Experiment(parse_config(data), quiet=True)
    how = "mp workers stepping their chunks in lockstep" if options.vectorize else "mp"
    if options.reset_seed is not None:
        how += f", every training episode reset with seed {options.reset_seed}"
    print(f"\n{name}: {data['optimizer']['type']}, {data['number_generations']} generations, {how}")
    print(
        f"{'evaluations':>11}  {'QD score':>12}  {'coverage':>8}  {'best elite':>10}  {'wall s':>7}"
    )
    started = time.perf_counter()
    evaluations, next_report = 0, 1000
    try:
        while not experiment.done:
            row = experiment.step()
            evaluations += row.evaluations
            if evaluations >= next_report or experiment.done:
                metrics = dict(row.metrics)
                print(
                    f"{evaluations:>11,}  {metrics['qd_score']:>12,.1f}  "
                    f"{metrics['coverage']:>8.4f}  {metrics['qd_best']:>10.1f}  "
                    f"{time.perf_counter() - started:>7.1f}"
                )
                next_report = (evaluations // 1000 + 1) * 1000
    finally:
        experiment.close()
    last = experiment.log[-1]
    print(
        f"wall time {time.perf_counter() - started:.1f} s for {evaluations:,} evaluations "
        f"({last.env_steps_total:,} env steps); best elite held-out validation mean "
        f"{last.validation_mean:.1f} over {data['validation']['episodes']} episodes"
    )


def play(task: tuple[np.ndarray, int]) -> tuple[float, int]:
    """One episode of a linear policy with nothing but Gymnasium: (return, steps)."""
    genome, seed = task
    env = _BARE_ENV.get("env")
    if env is None:
        env = _BARE_ENV["env"] = gym.make("LunarLander-v3")
    weights = genome.reshape(int(env.action_space.n), -1)  # type: ignore[attr-defined]
    observation, _ = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        observation, reward, terminated, truncated, _ = env.step(
            int(np.argmax(weights @ observation))
        )
        total, steps, done = total + float(reward), steps + 1, terminated or truncated
    return total, steps


_BARE_ENV: dict[str, gym.Env] = {}


def floor(options: Options) -> None:
    """The shipped CMA_ME run on ``options.reset_seed`` (mp, lockstep), recording every genome
    it asked for, then the same genomes played by a bare loop in a process pool of as many
    workers: what the env alone costs, with no framework at all."""
    seed = options.reset_seed
    assert seed is not None
    data = configured(CONFIGS[1], options._replace(vectorize=True))
    data["validation"] = None
    experiment = Experiment(parse_config(data), quiet=True)
    asked, rows = [], []
    started = time.perf_counter()
    try:
        while not experiment.done:
            asked.append(experiment.optimizer.ask())  # the genomes step() is about to evaluate
            rows.append(experiment.step())
    finally:
        experiment.close()
    ours = time.perf_counter() - started
    genomes = np.concatenate(asked)
    pool_size = options.workers or os.cpu_count() or 1
    with multiprocessing.get_context("forkserver").Pool(pool_size) as pool:
        pool.map(abs, range(pool_size))  # the workers are up before the clock starts
        started = time.perf_counter()
        played = pool.map(play, [(genome, seed) for genome in genomes], chunksize=250)
        bare = time.perf_counter() - started
    steps = sum(s for _, s in played)
    # the bare loop's W @ s may round other than the batch brain's matmul: a near tie of argmax
    # then takes the other action, so a few episodes may differ (counted by generation mean)
    returns = np.split(np.array([r for r, _ in played]), np.cumsum([len(g) for g in asked])[:-1])
    means = np.array([row.fitness_mean for row in rows])
    differ = int(np.sum(~np.isclose([r.mean() for r in returns], means, rtol=0, atol=1e-9)))
    ours_steps = rows[-1].env_steps_total
    print(
        f"{len(genomes):,} evaluations, env seed {seed}, {pool_size} processes:\n"
        f"  this framework (mp, lockstep): {ours:.1f} s, {ours_steps:,} env steps\n"
        f"  bare loop (a Pool of gym.make + argmax(W s) + env.step): {bare:.1f} s, {steps:,} env "
        f"steps ({differ} of {len(rows)} generations' mean returns differ)\n"
        f"  ratio {ours / bare:.3f}; per env step {ours / ours_steps * 1e6 * pool_size:.2f} vs "
        f"{bare / steps * 1e6 * pool_size:.2f} us x processes"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=45_000, help="evaluations per optimizer")
    parser.add_argument("--workers", type=int, default=0, help="mp workers (0: one per core)")
    parser.add_argument("--smoke", action="store_true", help="300 evaluations each, small batches")
    parser.add_argument(
        "--vectorize", action="store_true", help="mp workers step their chunks in lockstep"
    )
    parser.add_argument(
        "--reset-seed", type=int, help="reset every training episode with this seed (52: pyribs')"
    )
    parser.add_argument("--configs", nargs="+", choices=CONFIGS, default=list(CONFIGS))
    parser.add_argument(
        "--floor", action="store_true", help="the CMA_ME run, then its genomes in a bare env loop"
    )
    args = parser.parse_args()
    options = Options(
        budget=300 if args.smoke else args.budget,
        workers=args.workers,
        smoke=args.smoke,
        vectorize=args.vectorize,
        reset_seed=args.reset_seed,
    )
    if args.floor:
        floor(options if options.reset_seed is not None else options._replace(reset_seed=52))
        return
    print(TUTORIAL)
    for name in args.configs:
        run(name, options)


if __name__ == "__main__":
    main()
