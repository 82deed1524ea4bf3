"""Command line: ``python -m neuro_evolution.train CONFIG.json [options]``.

A thin shell over :class:`neuro_evolution.experiment.Experiment`. Everything that can be checked
at start-up is checked before a run directory is created: the config, the env id, the brain for
the env's spaces, and a dry run of one env step.

``python -m neuro_evolution.train --resume RUN_DIR [--generations N] [--handler ...]`` continues
a run exactly from its latest checkpoint (see :mod:`neuro_evolution.resume`). Resuming a run
that already reached its ``number_generations`` prints so and exits 0 without training.

Stopping: during training, the first SIGINT (Ctrl-C) or SIGTERM lets the current generation
finish, writes a checkpoint and exits with 128 + the signal number (130 for SIGINT, 143 for
SIGTERM); a second one stops the generation at once, and the last completed generation is saved
if its checkpoint was not written yet. Before training (connecting, starting workers) and after
it (shutting down) a signal stops at once with one ``interrupted`` line.

Failure: when a generation fails (a lost Dask scheduler, a worker that keeps dying, an exception
in an env), the last completed generation is checkpointed before exiting with code 3; stderr
gets at most three lines (what failed, what is saved, the exact ``--resume`` command) and the
traceback goes to ``failure.txt`` in the run directory.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import signal
import sys
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from neuro_evolution.atomic import atomic_write_text
from neuro_evolution.checkpoint import TrainingStopped, checkpointer_of, install_checkpoints
from neuro_evolution.cli import EXIT_FAILED, ArgumentParser, error_line, first_line, run_cli
from neuro_evolution.config import ExperimentConfig, load_config
from neuro_evolution.console import ignore_known_noise, plural
from neuro_evolution.errors import ConfigError, HandlerStartError, UserError
from neuro_evolution.evaluation.handlers.options import START_METHODS, handler_names, option_path
from neuro_evolution.experiment import Experiment
from neuro_evolution.results import new_run_directory
from neuro_evolution.resume import resume_experiment
from neuro_evolution.signals import signals_handled_by

PROGRAM = "neuro_evolution.train"
FAILURE_FILE = "failure.txt"  # the traceback of a failed generation, in the run directory


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
    add_override_arguments(
        parser,
        handler_names(),
        "evaluation handler (default: the config's evaluation.handler)",
        "override number_generations (with --resume: extend the run to N generations)",
    )
    return parser


def add_override_arguments(
    parser: argparse.ArgumentParser,
    handlers: list[str],
    handler_help: str,
    generations_help: str,
    jax: bool = True,
) -> None:
    """The options that override the config's evaluation section and number_generations, and
    --quiet (train and sweep share them)."""
    parser.add_argument("--handler", choices=handlers, help=handler_help)
    parser.add_argument(
        "--workers", type=int, help="worker processes for mp/dask (0: one per core)"
    )
    parser.add_argument("--start-method", choices=START_METHODS, help="start method for mp")
    parser.add_argument(
        "--scheduler",
        help="existing Dask scheduler: tcp://HOST:PORT or a scheduler file (default: LocalCluster)",
    )
    if jax:
        parser.add_argument(
            "--vectorize",
            nargs="?",
            const=True,
            default=None,
            choices=["jax"],
            help="mp/dask workers evaluate vectorized (numpy lockstep); --vectorize jax: Dask "
            "workers run one compiled JAX program per chunk",
        )
    else:
        parser.add_argument(
            "--vectorize", action="store_true", default=None, help="workers evaluate vectorized"
        )
    parser.add_argument("--generations", type=int, help=generations_help)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def evaluation_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The evaluation fields given on the command line (checked)."""
    changes = {
        "handler": args.handler,
        "workers": args.workers,
        "start_method": args.start_method,
        "scheduler": args.scheduler,
        "vectorize": args.vectorize,
    }
    if args.workers is not None and args.workers < 0:
        raise UserError(f"--workers must be >= 0, got {args.workers}")
    if args.generations is not None and args.generations < 1:
        raise UserError(f"--generations must be >= 1, got {args.generations}")
    return {key: value for key, value in changes.items() if value is not None}


def apply_overrides(config: ExperimentConfig, args: argparse.Namespace) -> ExperimentConfig:
    """The config with command-line overrides applied (validated like the file)."""
    changes = evaluation_overrides(args)
    evaluation = dataclasses.replace(config.evaluation, **changes)
    config = dataclasses.replace(config, evaluation=evaluation)
    if args.generations is not None:
        config = dataclasses.replace(config, number_generations=args.generations)
    return config


class StopRequest:
    """Signal handler for SIGINT and SIGTERM, installed for the whole command.

    While generations run (inside :meth:`graceful`), the first signal asks for a stop at the next
    generation boundary and the second stops at once (KeyboardInterrupt). Outside (connecting,
    starting workers, shutting down) every signal stops at once: there is nothing to finish.
    """

    def __init__(self) -> None:
        self.signal: int | None = None
        self._graceful = False

    def __call__(self, signum: int, frame: Any) -> None:
        if self.signal is not None or not self._graceful:
            self.signal = self.signal or signum
            raise KeyboardInterrupt
        self.signal = signum
        notice = (
            f"{PROGRAM}: {signal.Signals(signum).name}: finishing this generation and writing a "
            "checkpoint (send it again to stop at once)"
        )
        from tqdm import tqdm

        tqdm.write(notice, file=sys.stderr)  # on its own line, also above a progress bar

    def requested(self) -> bool:
        """Whether a stop was asked for."""
        return self.signal is not None

    def exit_code(self) -> int:
        """128 + the signal that stopped the command (130 when unknown)."""
        return 128 + (self.signal or signal.SIGINT)

    @contextmanager
    def graceful(self) -> Iterator[None]:
        """Inside the block the first signal only asks for a stop at a generation boundary."""
        self._graceful = True
        try:
            yield
        finally:
            self._graceful = False


@contextmanager
def stop_signals(request: StopRequest) -> Iterator[None]:
    """Route SIGINT and SIGTERM to ``request`` inside the block (main thread only)."""
    with signals_handled_by(request, [signal.SIGINT, signal.SIGTERM]):
        yield


@contextmanager
def one_line_warnings(program: str = PROGRAM) -> Iterator[None]:
    """Print every warning raised inside the block as one ``program: warning: ...`` line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        ignore_known_noise()
        try:
            yield
        finally:
            for warning in caught:
                message = str(warning.message).splitlines()[0]
                print(f"{program}: warning: {message}", file=sys.stderr, flush=True)


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exactly one of CONFIG / --resume; --out only for a new run."""
    if (args.config is None) == (args.resume is None):
        parser.error("give exactly one of CONFIG (a new run) or --resume RUN_DIR (continue a run)")
    if args.resume is not None and args.out is not None:
        parser.error("--out cannot be used with --resume: a run continues in its own directory")


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


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The end-of-run report: held-out validation first, the training maximum only as such."""
    lines = [
        f"done: {summary['generations']} generations, {summary['env_steps']} env steps in "
        f"{summary['wall_time']:.1f} s"
    ]
    handler = summary.get("handler_statistics") or {}
    if "compilations" in handler:
        seconds, steps = handler["evaluation_seconds"], handler["env_steps"]
        rate = f" = {steps / seconds:.4g} env steps/s" if seconds > 0 else ""
        lines.append(
            f"jax: {handler['compilations']} compilations in {handler['compile_seconds']:.1f} s; "
            f"evaluation without them: {steps} env steps (validation included) in "
            f"{seconds:.1f} s{rate} (this session)"
        )
    validation = summary.get("validation")
    if validation is None:
        lines.append(
            f"no validation (training-seed best {summary['best_fitness']:.6g} is an optimistic "
            "draw, not a result; set the validation section)"
        )
    else:
        lines.append(
            f"validation: mean {validation['mean']:.6g} ± {validation['std']:.3g} (min "
            f"{validation['min']:.6g}) over {plural(summary['episodes'], 'held-out episode')} "
            "after "
            f"generation {validation['generation']}"
        )
    target, solved = summary.get("target"), summary.get("solved")
    if solved is not None:
        lines.append(
            f"solved: validation mean {solved['mean']:.6g} >= target {target:g} after generation "
            f"{solved['generation']}, {solved['wall_time']:.1f} s, {solved['env_steps']} env steps"
        )
    elif target is not None:
        lines.append(f"not solved: validation never reached the target {target:g}")
    return lines


def resume_command(run_dir: Path) -> str:
    """The exact command that continues the run in ``run_dir``."""
    return f"python -m {PROGRAM} --resume {run_dir}"


def save_completed(experiment: Experiment) -> str:
    """Checkpoint the last completed generation if it is not on disk yet; return one line
    saying what is on disk to resume from (and what prevented saving, if anything)."""
    checkpointer = checkpointer_of(experiment)
    problem = ""
    if checkpointer is not None:
        try:
            checkpointer.save_completed()
        except Exception as error:  # e.g. a full disk: report it, and what is on disk already
            problem = f"could not save the last generation ({type(error).__name__}: "
            problem += f"{first_line(error)}); "
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
    details = run_dir / FAILURE_FILE
    try:
        atomic_write_text(details, "".join(traceback.format_exception(error)))
        where = f" (traceback in {details})"
    except OSError:
        where = ""
    error_line(
        PROGRAM,
        f"generation {len(experiment.log)} failed: {type(error).__name__}: "
        f"{first_line(error)}{where}",
    )
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


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    request = StopRequest()

    def train() -> int:
        config = apply_overrides(load_config(args.config), args)
        experiment = Experiment(config, quiet=args.quiet)  # validates, builds, dry-runs
        run_dir = None
        try:
            start_workers(experiment)  # before anything is written: a failure leaves nothing
            run_dir = new_run_directory(args.config, args.out)
            experiment.attach_run_directory(run_dir)
            install_checkpoints(experiment, should_stop=request.requested)
        except BaseException:
            experiment.close()
            if run_dir is not None:
                shutil.rmtree(run_dir, ignore_errors=True)
            raise
        if not args.quiet:
            print(f"run directory: {run_dir}")
            print(f"evaluation: {experiment.handler.describe()}", flush=True)
        return run_to_end(experiment, request, run_dir)

    def resume() -> int:
        run_dir: Path = args.resume
        with one_line_warnings():
            experiment = resume_experiment(
                run_dir,
                number_generations=args.generations,
                evaluation=evaluation_overrides(args),
                quiet=args.quiet,
                should_stop=request.requested,
            )
        total = experiment.config.number_generations
        if experiment.done:
            experiment.close()
            print(
                f"{run_dir}: the run already finished its {total} generations; pass "
                f"--generations N (N > {total}) to extend it"
            )
            return 0
        start_workers(experiment)
        if not args.quiet:
            print(f"resuming {run_dir} at generation {experiment.generation} of {total}")
            print(f"evaluation: {experiment.handler.describe()}", flush=True)
        return run_to_end(experiment, request, run_dir)

    with stop_signals(request):
        return run_cli(resume if args.resume is not None else train, PROGRAM, request.exit_code)


if __name__ == "__main__":
    sys.exit(main())
