"""Command line: ``python -m neuro_evolution.train CONFIG.json [options]``.

A thin shell over :class:`neuro_evolution.experiment.Experiment`. Everything that can be checked
at start-up is checked before a run directory is created: the config, the env id, the brain for
the env's spaces, and a dry run of one env step.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
from pathlib import Path

from neuro_evolution.cli import UserError, run_cli
from neuro_evolution.config import ExperimentConfig, load_config
from neuro_evolution.experiment import Experiment
from neuro_evolution.results import new_run_directory

PROGRAM = "neuro_evolution.train"


def build_parser() -> argparse.ArgumentParser:
    """The ``train`` argument parser."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {PROGRAM}",
        description="Evolve brains on a Gymnasium environment from a JSON config.",
    )
    parser.add_argument(
        "config", type=Path, help="experiment config (JSON), e.g. configs/cartpole.json"
    )
    parser.add_argument(
        "--out", type=Path, help="run directory (default: runs/<config>-<timestamp>)"
    )
    parser.add_argument(
        "--handler",
        choices=("sequential", "mp", "dask", "vectorized"),
        help="evaluation handler (default: the config's evaluation.handler)",
    )
    parser.add_argument(
        "--workers", type=int, help="worker processes for mp/dask (0: one per core)"
    )
    parser.add_argument(
        "--start-method", choices=("fork", "forkserver", "spawn"), help="start method for mp"
    )
    parser.add_argument(
        "--scheduler", help="address of an existing Dask scheduler (tcp://HOST:PORT)"
    )
    parser.add_argument(
        "--vectorize", action="store_true", default=None, help="mp/dask workers evaluate vectorized"
    )
    parser.add_argument("--generations", type=int, help="override number_generations")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def apply_overrides(config: ExperimentConfig, args: argparse.Namespace) -> ExperimentConfig:
    """The config with command-line overrides applied (validated like the file)."""
    changes = {
        "handler": args.handler,
        "workers": args.workers,
        "start_method": args.start_method,
        "scheduler": args.scheduler,
        "vectorize": args.vectorize,
    }
    changes = {key: value for key, value in changes.items() if value is not None}
    if args.workers is not None and args.workers < 0:
        raise UserError(f"--workers must be >= 0, got {args.workers}")
    if args.generations is not None and args.generations < 1:
        raise UserError(f"--generations must be >= 1, got {args.generations}")
    evaluation = dataclasses.replace(config.evaluation, **changes)
    config = dataclasses.replace(config, evaluation=evaluation)
    if args.generations is not None:
        config = dataclasses.replace(config, number_generations=args.generations)
    return config


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = build_parser().parse_args(argv)

    def train() -> int:
        config = apply_overrides(load_config(args.config), args)
        experiment = Experiment(config, quiet=args.quiet)  # validates, builds, dry-runs
        run_dir = new_run_directory(args.config, args.out)
        try:
            experiment.attach_run_directory(run_dir)
        except BaseException:
            shutil.rmtree(run_dir, ignore_errors=True)
            raise
        if not args.quiet:
            print(f"run directory: {run_dir}")
            print(f"evaluation: {experiment.handler.describe()}", flush=True)
        summary = experiment.run()
        print(
            f"done: {summary['generations']} generations, best fitness "
            f"{summary['best_fitness']:.6g}, {summary['env_steps']} env steps in "
            f"{summary['wall_time']:.1f} s"
        )
        print(f"results: {run_dir}")
        print(f"replay:  python -m neuro_evolution.replay {run_dir}")
        return 0

    return run_cli(train, PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
