"""Command line: ``python -m neuro_evolution.sweep CONFIG.json [--seeds 1-10] [--set K=V1,V2]``.

Every (settings, seed) combination is an ordinary run directory under ``--out`` (default
``sweeps/<config-name>``), named by its settings, e.g. ``optimizer.sigma=0.1/seed-3``; ``replay``
and ``train --resume`` work on it. Every new run passes the start-up checks of ``train``
(:mod:`neuro_evolution.run.start_up`) before the sweep folder or any worker exists. The runs
share the pool of one handler: one process pool (``--handler mp``, the default), one Dask
cluster (``--handler dask [--scheduler ADDRESS]``; this process writes every file), or this
process (``sequential``, ``vectorized``, ``jax``).

Stopping: the first Ctrl-C (or SIGTERM) lets every open run finish its generation and write a
checkpoint, then exits 130 (143); a second one stops at once. Running the same command again
skips the runs that ended and resumes the others.

Failure: a run whose own generation code raises (an optimizer that diverged, say) keeps its last
completed generation's checkpoint and the traceback in its ``failure.txt``; the other runs go
on, the sweep names each failed run in one line and exits 3, and the same command again retries
them. An error that comes back from the evaluations (an env that raises, workers that keep
dying, a lost Dask scheduler) stops every run at once.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from neuro_evolution.cli import (
    EXIT_FAILED,
    StopRequest,
    add_override_arguments,
    apply_overrides,
    error_line,
    first_line,
    one_line_warnings,
    run_cli,
    stop_signals,
)
from neuro_evolution.evaluation.pools import handler_names
from neuro_evolution.evaluation.pools.options import EvaluationConfig
from neuro_evolution.evaluation.pools.run_pool import RunPool
from neuro_evolution.run.directory import make_writable_directory
from neuro_evolution.support.console import plural
from neuro_evolution.support.errors import USER_ERRORS, UserError
from neuro_evolution.support.kernels import require_portable
from neuro_evolution.sweep.grid import (
    MAX_RUNS,
    RunPlan,
    check_run_count,
    expand_grid,
    in_existing_directories,
    parse_seeds,
    parse_setting,
    read_config_data,
)
from neuro_evolution.sweep.pools import check_worker_modules, make_pool, worker_modules
from neuro_evolution.sweep.scheduler import Sweep, SweepSummary
from neuro_evolution.sweep.start_up import StartUpChecks

PROGRAM = "neuro_evolution.sweep"


def build_parser() -> argparse.ArgumentParser:
    """The ``sweep`` argument parser."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {PROGRAM}",
        description="Train every combination of seeds and settings of a config on one shared "
        "pool; compare them with python -m neuro_evolution.compare.",
    )
    parser.add_argument("config", type=Path, help="experiment config (JSON)")
    parser.add_argument(
        "--seeds", help="run seeds, e.g. 1-10 or 1,3,5-7 (default: the config's random_seed)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="a dotted config key and its values, e.g. optimizer.sigma=0.1,0.3 (repeatable: "
        "a grid); values are JSON where they parse, else strings; optimizer.type=X drops the "
        "options X does not take",
    )
    parser.add_argument("--out", type=Path, help="sweep directory (default: sweeps/<config>)")
    add_override_arguments(
        parser,
        handler_names(),
        "shared pool (default: mp)",
        "override number_generations",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help=f"make a sweep of more than {MAX_RUNS} runs (refused without it)",
    )
    parser.add_argument(
        "--parallel-runs",
        type=int,
        help="runs open at once, sharing the workers (default: 4 per worker)",
    )
    return parser


def plans_from_arguments(args: argparse.Namespace) -> list[RunPlan]:
    """Every run of the sweep, configs validated and command-line overrides applied."""
    data = read_config_data(args.config)
    settings = [parse_setting(text) for text in args.set]
    for setting in settings:
        if setting.key.split(".")[0] == "evaluation":
            raise UserError(
                f"--set {setting.key}: every run of a sweep shares one pool; use --handler, "
                "--workers, ... instead"
            )
    seeds = parse_seeds(args.seeds) if args.seeds else [int(data.get("random_seed", 0))]
    count = check_run_count(settings, seeds, args.yes)  # before the configs are built
    if not args.quiet:
        print(
            f"sweep: {plural(count, 'run')} ({plural(len(seeds), 'seed')} x "
            f"{plural(count // len(seeds), 'setting')}); checking their configs",
            flush=True,
        )
    if args.handler is None:
        args.handler = "mp"  # a sweep always shares a pool; the config's handler may be another
    plans = expand_grid(data, settings, seeds)
    return [dataclasses.replace(p, config=apply_overrides(p.config, args)) for p in plans]


class Progress:
    """The progress bar: runs done of all, runs open and waiting, best validation so far."""

    def __init__(self, total: int, show: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, unit="run", disable=not show, dynamic_ncols=True)

    def __call__(self, sweep: Sweep) -> None:
        best = sweep.summary.best_validation
        self.bar.update(sweep.done - self.bar.n)
        self.bar.set_postfix_str(
            f"running {len(sweep.open)}, left {len(sweep.waiting)}, best validation "
            + ("-" if best is None else f"{best:.4g}"),
            refresh=True,
        )

    def close(self) -> None:
        self.bar.close()


def report(summary: SweepSummary, total: int, directory: Path) -> list[str]:
    """The end-of-sweep lines."""
    ended = len(summary.finished) + len(summary.skipped)
    best = summary.best_validation
    lines = [
        f"sweep: {ended} of {total} runs ended ({len(summary.finished)} now, "
        f"{len(summary.skipped)} before); {len(summary.solved)} reached the validation target",
        "best validation mean: " + ("none" if best is None else f"{best:.6g}"),
        f"workers busy {summary.busy_fraction:.0%} of {summary.wall_time:.1f} s "
        f"({summary.slots} worker slots)",
        f"results: {directory}",
        f"compare: python -m neuro_evolution.compare {directory}",
    ]
    return lines


def remove_empty(made: list[Path]) -> None:
    """Remove the folders of ``made`` (innermost first) while they are empty."""
    for path in made:
        try:
            path.rmdir()
        except OSError:
            break


def start_pool(section: EvaluationConfig, parallel_runs: int, made: list[Path]) -> RunPool:
    """The pool ``section`` names for ``parallel_runs`` open runs, its workers checked for the
    modules they need; a refused start closes it and removes the folders ``made``."""
    try:
        pool = make_pool(section, parallel_runs)
        try:
            check_worker_modules(getattr(pool, "client", None), worker_modules(section))
        except BaseException:
            pool.close()
            raise
    except BaseException:
        remove_empty(made)  # a refused start leaves no folder behind
        raise
    return pool


def say_generation_failed(program: str, error: Exception) -> None:
    """The lines of a failed generation: the error, and that every run keeps its checkpoint."""
    error_line(program, f"{type(error).__name__}: {first_line(error)}")
    print(
        f"{program}: every run keeps its last checkpoint; run the same command again to continue",
        file=sys.stderr,
        flush=True,
    )


def say_failed_runs(program: str, summary: SweepSummary) -> None:
    """One line per run whose generation raised, then what the same command does with them."""
    for failed in summary.failed:
        where = "" if failed.details is None else f" (traceback in {failed.details})"
        error_line(program, f"run {failed.name}: {failed.line}{where}")
    if summary.failed:
        print(
            f"{program}: {plural(len(summary.failed), 'run')} failed; the same command again "
            "retries each from its last checkpoint (from the start where it has none)",
            file=sys.stderr,
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = build_parser().parse_args(argv)
    request = StopRequest(PROGRAM)

    def sweep() -> int:
        if args.parallel_runs is not None and args.parallel_runs < 1:
            raise UserError(f"--parallel-runs must be >= 1, got {args.parallel_runs}")
        with one_line_warnings(PROGRAM):  # the keys a --set X.type dropped, old option names
            plans = plans_from_arguments(args)
            if plans[0].config.evaluation.portable_kernels:  # the runs share one pool
                require_portable(PROGRAM, "evaluation.portable_kernels", restart=argv is None)
        directory = args.out or Path("sweeps") / args.config.stem
        plans = in_existing_directories(plans, directory)
        section = plans[0].config.evaluation
        checks = StartUpChecks(PROGRAM, args.parallel_runs or max(2, 4 * section.worker_count))
        checks.check_new_runs(plans, directory)  # every new run, before anything is made
        made = [path for path in (directory, *directory.parents) if not path.exists()]
        make_writable_directory(  # before any worker starts: one line, nothing made
            directory,
            "--out"
            if args.out
            else "sweeps/ (the default sweep folder, under the working directory)",
            "pass --out with a folder you can write in",
        )
        pool = start_pool(section, checks.parallel_runs, made)
        parallel = checks.parallel_runs = args.parallel_runs or max(2, 4 * pool.slots)
        progress = Progress(len(plans), show=not args.quiet)
        try:
            if not args.quiet:
                print(f"sweep: {len(plans)} runs in {directory}; {pool.describe()}", flush=True)
            runner = Sweep(
                plans,
                directory,
                pool,
                parallel,
                request.requested,
                progress,
                checks=checks,
                keep_going=True,
            )
            with stop_signals(request), request.graceful(), one_line_warnings(PROGRAM):
                summary = runner.run()
        except USER_ERRORS + (KeyboardInterrupt,):
            raise
        except Exception as error:  # a generation failed: one line, every run keeps its checkpoint
            progress.close()
            say_generation_failed(PROGRAM, error)
            return EXIT_FAILED
        finally:
            progress.close()
            pool.close()
        say_failed_runs(PROGRAM, summary)  # also when a signal stopped the others
        if request.signal is not None and len(summary.finished) + len(summary.skipped) < len(plans):
            print(
                f"stopped: {len(summary.stopped)} runs checkpointed; run the same command again "
                "to continue"
            )
            return 128 + request.signal
        for line in report(summary, len(plans), directory):
            print(line)
        return EXIT_FAILED if summary.failed else 0

    return run_cli(sweep, PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
