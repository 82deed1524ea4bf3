"""Command line: ``python -m neuro_evolution.pbt CONFIG.json [--runs N] [--out DIR]``.

CONFIG.json is an experiment config with a ``pbt`` section (:mod:`.section`). Everything that
can be checked is checked before a folder is made or a worker starts: the section, every
explored key and value, the interval against ``number_generations`` and the validation period,
and how each explored setting reaches a copied run (:mod:`.transfer`). A bad input is one line
and exit code 2.

The runs share the pool of one handler, as a sweep's do (``--handler mp``, the default; ``dask``;
``sequential``, ``vectorized``, ``jax``). The folder (``--out``, default ``pbt/<config-name>``)
holds ``pbt_state.json``, ``lineage.json``, ``pbt.png`` and ``runs/run-N/``, ordinary run
directories (``replay``, ``compare`` read them).

Stopping: the first Ctrl-C (or SIGTERM) lets every open run finish its generation and write a
checkpoint (or lets the copies between intervals finish), then exits 130 (143); a second stops at
once. Running the same command again continues exactly where it stopped; with a larger
``--generations`` it extends the PBT, finished or not, to the one that number would have given
from the start, and what cannot be extended exactly is refused in one line (:mod:`.extend`).
``--set KEY=VALUE`` sets a key of the file (the experiment or the pbt section), as on ``train``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neuro_evolution.cli import (
    EXIT_FAILED,
    StopRequest,
    add_override_arguments,
    apply_overrides,
    one_line_warnings,
    run_cli,
    stop_signals,
)
from neuro_evolution.config.overrides import read_config_data, single_settings, with_settings
from neuro_evolution.config.tree import ExperimentConfig, config_to_dict, parse_config
from neuro_evolution.evaluation.pools import handler_names
from neuro_evolution.pbt.extend import continued_state, kept_length
from neuro_evolution.pbt.lineage import LINEAGE_FILE, RUNS_DIR, STATE_FILE, PbtState, read_state
from neuro_evolution.pbt.loop import (
    PLOT_FILE,
    PbtLoop,
    PbtSetup,
    end_of_interval,
    initial_state,
    interval_plans,
    score_key,
)
from neuro_evolution.pbt.section import PbtConfig, parse_pbt_section, split_pbt_data
from neuro_evolution.pbt.space import parse_space
from neuro_evolution.pbt.transfer import merge_entries, seeded_entries
from neuro_evolution.run.directory import make_writable_directory
from neuro_evolution.support.console import plural
from neuro_evolution.support.errors import USER_ERRORS, ConfigError, UserError
from neuro_evolution.support.kernels import require_portable
from neuro_evolution.sweep.cli import Progress, say_generation_failed, start_pool
from neuro_evolution.sweep.start_up import StartUpChecks

PROGRAM = "neuro_evolution.pbt"


def build_parser() -> argparse.ArgumentParser:
    """The ``pbt`` argument parser."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {PROGRAM}",
        description="Population-based training: runs that copy the best runs' checkpoints and "
        "explore their settings, ranked by held-out validation (docs/guide/pbt.md).",
    )
    parser.add_argument("config", type=Path, help="experiment config with a pbt section (JSON)")
    parser.add_argument("--runs", type=int, help="runs in the population (default: pbt.runs)")
    parser.add_argument("--out", type=Path, help="PBT folder (default: pbt/<config>)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a dotted config key, e.g. optimizer.sigma=0.1 or pbt.interval=4 (repeatable;"
        " JSON where it parses, else a string); optimizer.type=X drops the options X does not "
        "take",
    )
    add_override_arguments(
        parser, handler_names(), "shared pool (default: mp)", "override number_generations"
    )
    parser.add_argument(
        "--parallel-runs",
        type=int,
        help="runs open at once, sharing the workers (default: every run, at most 4 per worker)",
    )
    return parser


def check_schedule(config: ExperimentConfig, section: PbtConfig) -> None:
    """Every interval must end with a validation, and the run length (number_generations, no
    env-step budget) hold whole intervals."""
    interval = section.interval
    if config.validation is None:
        raise ConfigError(
            "validation",
            "a PBT ranks its runs by held-out validation: give a validation section, e.g. "
            '{"every_generations": 5, "episodes": 10}',
        )
    every = config.validation.every_generations
    if interval < every:
        raise ConfigError(
            "pbt.interval",
            f"{interval} is shorter than validation.every_generations {every}: every interval "
            f"must end with a validation; use {every} or a multiple of it",
        )
    if interval % every:
        raise ConfigError(
            "pbt.interval",
            f"{interval} is not a multiple of validation.every_generations {every}: every "
            f"interval must end with a validation; use {interval - interval % every} or "
            f"{interval - interval % every + every}",
        )
    for budget in ("max_env_steps", "max_evaluations"):
        if getattr(config, budget) is not None:
            raise ConfigError(
                budget,
                "a PBT runs every member for number_generations, interval by interval; set "
                f"{budget} to null and give the length as number_generations",
            )
    generations = config.number_generations
    if generations % interval:
        raise ConfigError(
            "number_generations",
            f"{generations} is not a multiple of pbt.interval {interval}; use "
            f"{generations - generations % interval + interval}",
        )
    if generations // interval < 2:
        raise ConfigError(
            "number_generations",
            f"{generations} is one interval of {interval}; a PBT copies between intervals, so "
            f"it needs at least 2 (number_generations >= {2 * interval})",
        )


def configured_data(args: argparse.Namespace) -> dict[str, Any]:
    """The config file's data with each ``--set KEY=VALUE`` applied."""
    data = read_config_data(args.config)
    if not args.set:
        return data
    chosen = single_settings(args.set, "pbt")
    for key, _ in chosen:
        if key.split(".")[0] == "evaluation":
            raise UserError(
                f"--set {key}: the runs of a PBT share one pool; use --handler, --workers, ... "
                "instead"
            )
    return with_settings(data, chosen)


def setup_from_arguments(args: argparse.Namespace) -> PbtSetup:
    """The checked setup of the command (nothing is written)."""
    if args.runs is not None and args.runs < 2:
        raise UserError(f"--runs must be >= 2 (a run copies another), got {args.runs}")
    if args.parallel_runs is not None and args.parallel_runs < 1:
        raise UserError(f"--parallel-runs must be >= 1, got {args.parallel_runs}")
    experiment_data, section_data = split_pbt_data(configured_data(args), args.config)
    section = parse_pbt_section(section_data, args.runs)
    if args.handler is None:
        args.handler = "mp"  # the runs share a pool; the config's handler may be another
    config = apply_overrides(parse_config(experiment_data), args)
    check_schedule(config, section)
    experiment = config_to_dict(config)
    space = parse_space(section.explore, experiment)
    seeded = merge_entries([seeded_entries(setting, experiment) for setting in space])
    return PbtSetup(experiment, section, space, seeded)


def existing_state(
    folder: Path, setup: PbtSetup, generations_given: bool
) -> tuple[PbtState | None, PbtSetup]:
    """The state of the PBT in ``folder`` to continue (extended where ``number_generations``
    grew, :mod:`.extend`; None for a new PBT) and the setup it continues with (the folder's
    length where the command gives a smaller one without --generations). A folder of another
    setup is refused."""
    if (folder / STATE_FILE).is_file():
        state = read_state(folder)
        if not generations_given:
            setup = kept_length(state, setup)
        return continued_state(folder, state, setup), setup
    if folder.is_dir() and any(folder.iterdir()):
        raise UserError(f"{folder}: holds files but no PBT ({STATE_FILE}); give another --out")
    return None, setup


def report(loop: PbtLoop) -> list[str]:
    """The end-of-PBT lines."""
    setup, state, folder = loop.setup, loop.state, loop.folder
    scores = state.history[-1]["scores"]
    best = max(scores, key=lambda name: (score_key(scores[name]), -list(scores).index(name)))
    copies = sum(len(entry["copies"]) for entry in state.lineage.values())
    section = setup.section
    return [
        f"pbt: {section.runs} runs x {setup.intervals} intervals of {section.interval} "
        f"generations ended; {copies} {'copy' if copies == 1 else 'copies'} "
        f"({loop.wall_time:.1f} s this session)",
        f"best held-out validation at the end: {scores[best]:.6g} ({best})",
        f"lineage: {folder / LINEAGE_FILE}",
        f"plot: {folder / PLOT_FILE}",
        f"compare: python -m neuro_evolution.compare {folder}",
    ]


def open_runs(args: argparse.Namespace, parallel: int, slots: int) -> int:
    """Runs open at once: ``--parallel-runs``, else every run, at most 4 per worker slot."""
    return parallel if args.parallel_runs is not None else min(parallel, max(2, 4 * slots))


def run_pbt(
    args: argparse.Namespace,
    should_stop: Callable[[], bool],
    say: Callable[[str], None],
    restart: bool = False,
) -> PbtLoop:
    """Check the command's setup, make (or continue) its folder, start the pool and run until
    the end or ``should_stop``; the loop, whose ``finished`` says which. With ``restart`` (the
    command line), portable kernels start the command again (support/kernels.py)."""
    setup = setup_from_arguments(args)
    folder = args.out or Path("pbt") / args.config.stem
    state, setup = existing_state(folder, setup, args.generations is not None)
    state = state or initial_state(setup)
    section = setup.section
    if not args.quiet:
        keys = ", ".join(setting.key for setting in setup.space)
        say(
            f"pbt: {section.runs} runs x {setup.intervals} intervals of {section.interval} "
            f"generations, exploring {keys}"
        )
    evaluation = parse_config(setup.experiment).evaluation
    if evaluation.portable_kernels:
        require_portable(PROGRAM, "evaluation.portable_kernels", restart)
    parallel = args.parallel_runs or section.runs
    checks = StartUpChecks(PROGRAM, open_runs(args, parallel, evaluation.worker_count))
    plans = interval_plans(setup, state, end_of_interval(setup, state))
    checks.check_new_runs(plans, folder / RUNS_DIR)  # the new runs, before anything is made
    made = [path for path in (folder, *folder.parents) if not path.exists()]
    make_writable_directory(
        folder,
        "--out" if args.out else "pbt/ (the default PBT folder, under the working directory)",
        "pass --out with a folder you can write in",
    )
    pool = start_pool(evaluation, parallel, made)
    try:
        state.write(folder)
        if not args.quiet:
            say(f"pbt: {section.runs} runs in {folder}; {pool.describe()}")
        parallel = checks.parallel_runs = open_runs(args, parallel, pool.slots)
        progress = None if args.quiet else (lambda total: Progress(total, show=True))
        loop = PbtLoop(setup, folder, state, pool, parallel, should_stop, say, progress, checks)
        loop.run()
    finally:
        pool.close()
    return loop


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = build_parser().parse_args(argv)
    request = StopRequest(PROGRAM)

    def pbt() -> int:
        try:
            with stop_signals(request), request.graceful(), one_line_warnings(PROGRAM):
                loop = run_pbt(
                    args, request.requested, lambda line: print(line, flush=True), argv is None
                )
        except USER_ERRORS + (KeyboardInterrupt,):
            raise
        except Exception as error:  # a generation failed: every run keeps its checkpoint
            say_generation_failed(PROGRAM, error)
            return EXIT_FAILED
        if not loop.finished:
            print(
                f"stopped after {plural(loop.state.intervals_done, 'interval')}; run the same "
                "command again to continue"
            )
            return request.exit_code()
        for line in report(loop):
            print(line)
        return 0

    return run_cli(pbt, PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
