"""Command line: ``python -m neuro_evolution.train CONFIG.json [options]``.

A thin shell over :class:`neuro_evolution.run.experiment.Experiment`. Everything that can be checked
at start-up is checked before a run directory is created: the config, the env id, the brain for
the env's spaces, a dry run of one env step, and the rest of the start-up checks
(:mod:`neuro_evolution.run.start_up`, the same for sweep, pbt and library use).

``--set KEY=VALUE`` (repeatable) sets a dotted key of the config file before it is validated, as
``sweep --set`` does with one value (:mod:`neuro_evolution.config.overrides`); a new
``optimizer.type`` drops the options that type does not take, named in one warning line.

``python -m neuro_evolution.train --resume RUN_DIR [--generations N] [--max-env-steps N]
[--max-evaluations N] [--handler ...]`` continues a run exactly from its latest checkpoint (see
:mod:`neuro_evolution.run.resume`). Resuming a run that already reached its
``number_generations``, ``max_env_steps`` or ``max_evaluations`` prints so and exits 0 without
training.

Stopping: during training, the first SIGINT (Ctrl-C) or SIGTERM lets the current generation
finish, writes a checkpoint and exits with 128 + the signal number (130 for SIGINT, 143 for
SIGTERM); a second one stops the generation at once, and the last completed generation is saved
if its checkpoint was not written yet. Before training (connecting, starting workers) and after
it (shutting down) a signal stops at once with one ``interrupted`` line.

Failure: when a generation fails (a lost Dask scheduler, a worker that keeps dying, an exception
in an env), the last completed generation is checkpointed before exiting with code 3; stderr
gets at most three lines (what failed, what is saved, the exact ``--resume`` command) and the
traceback goes to ``failure.txt`` in the run directory (:mod:`neuro_evolution.run.failure`),
which a resume removes.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
from pathlib import Path

from neuro_evolution.cli import (
    EXIT_FAILED,
    ArgumentParser,
    StopRequest,
    add_override_arguments,
    apply_overrides,
    error_line,
    evaluation_overrides,
    one_line_warnings,
    run_cli,
    stop_signals,
)
from neuro_evolution.config.overrides import read_config_data, single_settings, with_settings
from neuro_evolution.config.tree import ExperimentConfig, load_config, parse_config
from neuro_evolution.evaluation.pools.base import handler_names
from neuro_evolution.evaluation.pools.options import option_path
from neuro_evolution.run.checkpoint import TrainingStopped, checkpointer_of
from neuro_evolution.run.directory import new_run_directory
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.failure import (
    clear_failure,
    failure_line,
    record_failure,
    save_last_completed,
)
from neuro_evolution.run.kernel_checks import stored_portable
from neuro_evolution.run.lock import RunLock
from neuro_evolution.run.resume import KEEP, resume_experiment
from neuro_evolution.run.summary import RunSummary
from neuro_evolution.support.console import plural
from neuro_evolution.support.errors import ConfigError, HandlerStartError
from neuro_evolution.support.kernels import require_portable

PROGRAM = "neuro_evolution.train"


def build_parser() -> argparse.ArgumentParser:
    """The ``train`` argument parser."""
    parser = ArgumentParser(
        PROGRAM,
        description="Evolve brains on a Gymnasium environment from a JSON config.",
    )
    parser.add_argument(
        "config",
        type=Path,
        nargs="?",
        help="experiment config (JSON), e.g. configs/cartpole.json (not with --resume)",
    )
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue the run in RUN_DIR from its latest checkpoint",
    )
    parser.add_argument(
        "--out", type=Path, help="run directory (default: runs/<config>-<timestamp>)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a dotted config key, e.g. optimizer.sigma=0.1 (repeatable; JSON where it "
        "parses, else a string); optimizer.type=X drops the options X does not take",
    )
    add_override_arguments(
        parser,
        handler_names(),
        "evaluation handler (default: the config's evaluation.handler)",
        "override number_generations (with --resume: extend the run to N generations)",
    )
    parser.add_argument(
        "--max-env-steps",
        type=int,
        metavar="N",
        help="override max_env_steps, the training env-step budget (with --resume: train on "
        "to N env steps)",
    )
    parser.add_argument(
        "--max-evaluations",
        type=int,
        metavar="N",
        help="override max_evaluations, the training evaluation budget (genomes scored; with "
        "--resume: train on to N evaluations)",
    )
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exactly one of CONFIG / --resume; --out only for a new run."""
    if (args.config is None) == (args.resume is None):
        parser.error("give exactly one of CONFIG (a new run) or --resume RUN_DIR (continue a run)")
    if args.resume is not None and args.out is not None:
        parser.error("--out cannot be used with --resume: a run continues in its own directory")
    if args.resume is not None and args.set:
        parser.error(
            "--set cannot be used with --resume: a run continues with its own config (only "
            "--generations, --max-env-steps, --max-evaluations and --handler, ... may change)"
        )
    for flag, value in (
        ("--max-env-steps", args.max_env_steps),
        ("--max-evaluations", args.max_evaluations),
    ):
        if value is not None and value < 1:
            parser.error(f"{flag} must be >= 1, got {value}")


def configured(args: argparse.Namespace) -> ExperimentConfig:
    """The config file with each ``--set KEY=VALUE`` applied, validated like the file."""
    if not args.set:
        return load_config(args.config)
    chosen = single_settings(args.set, "train")
    return parse_config(with_settings(read_config_data(args.config), chosen))


def start_workers(experiment: Experiment) -> None:
    """Start the handler; a worker that cannot set itself up becomes one line (exit 2)."""
    try:
        experiment.start()
    except (ConfigError, HandlerStartError):
        raise
    except Exception as error:
        experiment.close()
        handler = experiment.config.evaluation.handler
        raise HandlerStartError(
            f"{option_path('handler')}: the {handler} workers could not be set up: "
            f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        ) from error


def summary_lines(summary: RunSummary) -> list[str]:
    """The end-of-run report: held-out validation first, the training maximum only as such."""
    spent = summary.spent_budget
    budget = ""
    if spent is not None:
        limit = summary.budget if spent == "max_env_steps" else summary.evaluation_budget
        budget = f" (reached {spent} {limit})"
    counted = f"{summary.evaluations} evaluations, " if summary.evaluation_budget else ""
    lines = [
        f"done: {summary.generations} generations, {counted}{summary.env_steps} env steps"
        f"{budget} in {summary.wall_time:.1f} s"
    ]
    lines += summary.handler_statistics.summary_lines()  # e.g. the jax handler's compilations
    validation = summary.validation
    if validation is None:
        lines.append(
            f"no validation (training-seed best {summary.best_fitness:.6g} is an optimistic "
            "draw, not a result; set the validation section)"
        )
    else:
        lines.append(
            f"validation: mean {validation.mean:.6g} ± {validation.std:.3g} (min "
            f"{validation.min:.6g}) over {plural(summary.episodes, 'held-out episode')} "
            "after "
            f"generation {validation.generation}"
        )
    target, solved = summary.target, summary.solved
    if solved is not None:
        lines.append(
            f"solved: validation mean {solved.mean:.6g} >= target {target:g} after generation "
            f"{solved.generation}, {solved.wall_time:.1f} s, {solved.env_steps} env steps"
        )
    elif target is not None:
        lines.append(f"not solved: validation never reached the target {target:g}")
    if summary.metrics:  # e.g. a QD archive: coverage, qd_score, qd_best (training fitness)
        shown = ", ".join(f"{name} {value:.6g}" for name, value in summary.metrics)
        lines.append(f"optimizer: {shown} after generation {summary.generations}")
    return lines


def resume_command(run_dir: Path) -> str:
    """The exact command that continues the run in ``run_dir``."""
    return f"python -m {PROGRAM} --resume {run_dir}"


def save_completed(experiment: Experiment) -> str:
    """Checkpoint the last completed generation if it is not on disk yet; return one line
    saying what is on disk to resume from (and what prevented saving, if anything)."""
    checkpointer = checkpointer_of(experiment)
    why = save_last_completed(experiment)  # a full disk, say: reported with what is on disk
    problem = "" if why is None else f"could not save the last generation ({why}); "
    if checkpointer is None or not checkpointer.entries:
        return f"{PROGRAM}: {problem}nothing to resume: no generation was completed"
    latest = checkpointer.entries[-1]
    return (
        f"{PROGRAM}: {problem}{latest['generation']} generations are saved in "
        f"{checkpointer.run_dir / latest['file']}"
    )


def print_saved(saved: str, run_dir: Path) -> None:
    """What is saved, and the resume command when there is something to resume."""
    print(saved, file=sys.stderr)
    if "nothing to resume" not in saved:
        print(f"resume: {resume_command(run_dir)}", file=sys.stderr, flush=True)


def report_failure(experiment: Experiment, error: Exception, run_dir: Path) -> int:
    """A generation failed: save the last completed one, print <= 3 lines, return exit code 3."""
    saved = save_completed(experiment)
    line = failure_line(len(experiment.log), error)
    details = record_failure(run_dir, line, error)
    error_line(PROGRAM, line + ("" if details is None else f" (traceback in {details})"))
    print_saved(saved, run_dir)
    return EXIT_FAILED


def run_to_end(experiment: Experiment, request: StopRequest, run_dir: Path) -> int:
    """Train until done or stopped by a signal; print the outcome; return the exit code."""
    try:
        with request.graceful():
            summary = experiment.run()
    except TrainingStopped as stopped:
        assert request.signal is not None
        print(f"stopped: {stopped.generation} generations done; checkpoint: {stopped.checkpoint}")
        print(f"resume:  {resume_command(run_dir)}")
        return request.exit_code()
    except KeyboardInterrupt:  # a second signal: the generation stopped at once
        saved = save_completed(experiment)
        print(f"{PROGRAM}: interrupted", file=sys.stderr)
        print_saved(saved, run_dir)
        return request.exit_code()
    except Exception as error:
        return report_failure(experiment, error, run_dir)
    for line in summary_lines(summary):
        print(line)
    print(f"results: {run_dir}")
    print(f"replay:  python -m neuro_evolution.replay {run_dir}")
    return 0


def finished_line(experiment: Experiment, run_dir: Path) -> str:
    """Why a resumed run has nothing left to do, and the option that continues it."""
    generation, total, solved = (
        experiment.generation,
        experiment.config.number_generations,
        experiment.solved,
    )
    steps, evaluations = experiment.env_steps_total, experiment.evaluations_total
    spent = experiment.spent_budget(steps, evaluations)
    if generation < total and spent is not None:
        config = experiment.config
        if spent == "max_env_steps":
            count, limit = f"{steps} training env steps", config.max_env_steps
            flag, above = "--max-env-steps", steps
        else:
            count, limit = f"{evaluations} training evaluations", config.max_evaluations
            flag, above = "--max-evaluations", evaluations
        return (
            f"{run_dir}: the run stopped after generation {generation} because its "
            f"{count} reached {spent} {limit}; pass {flag} N (N > {above}) to train on"
        )
    if generation < total and solved is not None and solved.validation_mean is not None:
        target = experiment.config.validation.target if experiment.config.validation else None
        return (
            f"{run_dir}: the run stopped after generation {generation} because its validation "
            f"mean {solved.validation_mean:.6g} reached the target {target:g} (generation "
            f"{solved.generation + 1}); pass --generations N (N > {generation}) to train on "
            "past the target"
        )
    return (
        f"{run_dir}: the run already finished its {total} generations; pass "
        f"--generations N (N > {total}) to extend it"
    )


def resume_kernels(args: argparse.Namespace, restart: bool) -> None:
    """Run the portable kernels where ``--portable-kernels`` or the resumed run's config asks
    for them (support/kernels.py)."""
    if args.portable_kernels:
        require_portable(PROGRAM, "--portable-kernels", restart)
    elif stored_portable(args.resume):
        require_portable(PROGRAM, f"{args.resume}: evaluation.portable_kernels", restart)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    request = StopRequest(PROGRAM)

    def train() -> int:
        with one_line_warnings(PROGRAM):  # an old option name, the keys a --set dropped
            config = apply_overrides(configured(args), args)
            if config.evaluation.portable_kernels:
                require_portable(PROGRAM, "evaluation.portable_kernels", restart=argv is None)
        if args.max_env_steps is not None:
            config = dataclasses.replace(config, max_env_steps=args.max_env_steps)
        if args.max_evaluations is not None:
            config = dataclasses.replace(config, max_evaluations=args.max_evaluations)
        experiment = Experiment(config, quiet=args.quiet)  # validates, builds, dry-runs
        run_dir = lock = None
        try:
            experiment.check(PROGRAM)  # the start-up checks: warnings, then refusals
            start_workers(experiment)  # before anything is written: a failure leaves nothing
            made = new_run_directory(args.config, args.out)
            lock = RunLock.acquire(made, PROGRAM)  # held to the end, past the experiment's
            run_dir = made  # ours from here on: removed if the start fails
            experiment.attach_run_directory(run_dir, should_stop=request.requested)
        except BaseException:
            experiment.close()
            if run_dir is not None:
                shutil.rmtree(run_dir, ignore_errors=True)
            if lock is not None:
                lock.release()
            raise
        try:
            if not args.quiet:
                print(f"run directory: {run_dir}")
                print(f"evaluation: {experiment.handler.describe()}", flush=True)
            return run_to_end(experiment, request, run_dir)
        finally:
            lock.release()

    def resume() -> int:
        run_dir: Path = args.resume
        with one_line_warnings(PROGRAM):
            resume_kernels(args, restart=argv is None)
            experiment = resume_experiment(  # holds the run's lock, or refuses in one line
                run_dir,
                number_generations=args.generations,
                evaluation=evaluation_overrides(args),
                quiet=args.quiet,
                should_stop=request.requested,
                max_env_steps=KEEP if args.max_env_steps is None else args.max_env_steps,
                max_evaluations=KEEP if args.max_evaluations is None else args.max_evaluations,
            )
        lock = RunLock.acquire(run_dir, PROGRAM)  # a second share: held past experiment.close
        try:
            return continue_resumed(experiment, run_dir)
        finally:
            lock.release()

    def continue_resumed(experiment: Experiment, run_dir: Path) -> int:
        total = experiment.config.number_generations
        if args.generations is not None and args.generations > experiment.generation:
            experiment.train_past_target = True  # asked for more: a solved run trains on
        if experiment.done:
            experiment.close()
            print(finished_line(experiment, run_dir))
            return 0
        try:
            experiment.check(PROGRAM)  # with the restored state (e.g. a restart's population)
        except BaseException:
            experiment.close()
            raise
        start_workers(experiment)
        if not args.quiet:
            print(f"resuming {run_dir} at generation {experiment.generation} of {total}")
            print(f"evaluation: {experiment.handler.describe()}", flush=True)
        clear_failure(run_dir)  # a failure of this session is written anew
        return run_to_end(experiment, request, run_dir)

    with stop_signals(request):
        return run_cli(resume if args.resume is not None else train, PROGRAM, request.exit_code)


if __name__ == "__main__":
    sys.exit(main())
