"""Learning check: PGPE + ClipUp with a linear policy on LunarLanderContinuous-v3.

Trains through the library API (``Experiment``, mp handler) with the settings the peer library's
authors published for this env (population 200, ClipUp max_speed 0.3 and step 0.15, radius 4.5,
stdev learning rate 0.1, stdev_max_change 0.2, centered ranks), and every ``--every``
generations scores the distribution's center on ``--episodes`` held-out episode seeds (base
seeds from 10,000 on, which training's SeedSequence-derived seeds practically never hit).
The check itself is not counted in the training time. Stops at the target or the time limit.

Usage: python scripts/check_pgpe_lunarlander.py [--seed 1] [--limit 180] [--workers 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.experiment import Experiment

TARGET = 200.0
HELD_OUT_BASE = 10_000


def config_for(seed: int, workers: int, generations: int) -> dict:
    return {
        "environment": {"id": "LunarLanderContinuous-v3"},
        "random_seed": seed,
        "number_generations": generations,
        "optimizer": {
            "type": "PGPE",
            "population_size": 200,
            "radius_init": 4.5,
            "max_speed": 0.3,
            "center_learning_rate": 0.15,
            "stdev_learning_rate": 0.1,
            "stdev_max_change": 0.2,
            "fitness_shaping": "centered_ranks",
        },
        "brain": {"type": "FFNN", "hidden_layers": []},
        "episode_runner": {"number_fitness_runs": 1, "max_steps_per_run": 1000},
        "evaluation": {"handler": "mp", "workers": workers},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=float, default=180.0, help="training seconds at most")
    parser.add_argument("--every", type=int, default=5, help="generations between checks")
    parser.add_argument("--episodes", type=int, default=10, help="held-out episodes per check")
    args = parser.parse_args()

    experiment = Experiment(parse_config(config_for(args.seed, args.workers, 10_000)))
    held_out = np.arange(HELD_OUT_BASE, HELD_OUT_BASE + args.episodes, dtype=np.uint32)
    print(f"genome size {experiment.template.genome_size} (linear policy), seed {args.seed}")
    print(f"{'gen':>4} {'train s':>8} {'env steps':>10} {'pop mean':>9} {'held-out':>9} {'min':>8}")
    training = 0.0
    try:
        while training < args.limit:
            start = time.perf_counter()
            row = experiment.step()
            training += time.perf_counter() - start
            if experiment.generation % args.every:
                continue
            center = experiment.optimizer.center()
            results = experiment.handler.batch_evaluate(
                np.tile(center, (len(held_out), 1)), held_out
            )
            returns = np.array([r.fitness for r in results])
            steps = sum(r.env_steps for r in experiment.log)
            print(
                f"{experiment.generation:>4} {training:>8.1f} {steps:>10} "
                f"{row.fitness_mean:>9.1f} {returns.mean():>9.1f} {returns.min():>8.1f}",
                flush=True,
            )
            if returns.mean() >= TARGET:
                print(
                    f"solved: held-out mean {returns.mean():.1f} >= {TARGET:g} after "
                    f"{training:.1f} s of training, {steps} env steps"
                )
                return
        print(f"not solved within {args.limit:g} s of training")
    finally:
        experiment.close()


if __name__ == "__main__":
    main()
