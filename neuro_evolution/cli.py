"""Shared command-line plumbing of train and sweep: one error prefix, one-line errors, exit codes,
never a traceback; the options that override a config's evaluation section; the SIGINT/SIGTERM
handling that stops at a generation boundary; warnings as one line each.

Exit codes of the command lines: 0 done; 2 bad input (usage, config, files: nothing ran);
:data:`EXIT_FAILED` (3) a generation failed (the completed ones are saved, see ``train``);
128 + N stopped by signal N (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

from neuro_evolution.evaluation.pools.options import START_METHODS
from neuro_evolution.support.console import ignore_known_noise
from neuro_evolution.support.errors import USER_ERRORS, UserError, first_line
from neuro_evolution.support.signals import signals_handled_by

if TYPE_CHECKING:
    from neuro_evolution.config.tree import ExperimentConfig

EXIT_USAGE = 2
EXIT_FAILED = 3


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the package's error prefix: ``neuro_evolution.train: error: ...`` (argparse
    would say ``python -m neuro_evolution.train: error:``); the usage line keeps ``python -m``."""

    def __init__(self, program: str, **kwargs: Any) -> None:
        super().__init__(prog=f"python -m {program}", **kwargs)
        self.program = program

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.program}: error: {message}\n")


def error_line(program: str, message: str) -> None:
    """Print ``program: error: message`` on stderr."""
    print(f"{program}: error: {message}", file=sys.stderr, flush=True)


def run_cli(
    main: Callable[[], int], program: str, interrupted_code: Callable[[], int] = lambda: 130
) -> int:
    """Call ``main``; turn user errors into ``program: error: ...`` on stderr and exit code 2;
    an interruption (KeyboardInterrupt) into one ``program: interrupted`` line."""
    try:
        return main()
    except USER_ERRORS as error:
        error_line(program, first_line(error))
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr, flush=True)
        return interrupted_code()


def add_override_arguments(
    parser: argparse.ArgumentParser,
    handlers: list[str],
    handler_help: str,
    generations_help: str,
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
    parser.add_argument(
        "--vectorize",
        nargs="?",
        const=True,
        default=None,
        choices=["jax"],
        help="mp/dask workers evaluate vectorized (numpy lockstep); --vectorize jax: Dask "
        "workers run one compiled JAX program per chunk",
    )
    parser.add_argument(
        "--portable-kernels",
        action="store_true",
        default=None,
        help="run numpy's and OpenBLAS's portable kernels, the same bits on every x86-64 CPU "
        "with AVX2 (evaluation.portable_kernels)",
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
        "portable_kernels": getattr(args, "portable_kernels", None),
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

    def __init__(self, program: str) -> None:
        self.program = program
        self.signal: int | None = None
        self._graceful = False

    def __call__(self, signum: int, frame: Any) -> None:
        if self.signal is not None or not self._graceful:
            self.signal = self.signal or signum
            raise KeyboardInterrupt
        self.signal = signum
        notice = (
            f"{self.program}: {signal.Signals(signum).name}: finishing this generation and "
            "writing a checkpoint (send it again to stop at once)"
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
def one_line_warnings(program: str) -> Iterator[None]:
    """Print each distinct warning raised inside the block once, as one ``program: warning:
    ...`` line, in the order first raised. A block that fails with a one-line error (a user
    error) prints no warnings: that error is the line that matters, and it stands alone."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        ignore_known_noise()
        failed = False
        try:
            yield
        except USER_ERRORS:
            failed = True
            raise
        finally:
            lines = dict.fromkeys(str(w.message).splitlines()[0] for w in caught if w.message)
            for message in () if failed else lines:
                print(f"{program}: warning: {message}", file=sys.stderr, flush=True)
