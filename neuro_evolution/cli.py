"""Shared command-line plumbing: one error prefix, one-line errors, exit codes, never a traceback.

Exit codes of the command lines: 0 done; 2 bad input (usage, config, files: nothing ran);
:data:`EXIT_FAILED` (3) a generation failed (the completed ones are saved, see ``train``);
128 + N stopped by signal N (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import NoReturn

from neuro_evolution.errors import USER_ERRORS

EXIT_USAGE = 2
EXIT_FAILED = 3


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the package's error prefix: ``neuro_evolution.train: error: ...`` (argparse
    would say ``python -m neuro_evolution.train: error:``); the usage line keeps ``python -m``."""

    def __init__(self, program: str, **kwargs: object) -> None:
        super().__init__(prog=f"python -m {program}", **kwargs)  # type: ignore[arg-type]
        self.program = program

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.program}: error: {message}\n")


def error_line(program: str, message: str) -> None:
    """Print ``program: error: message`` on stderr."""
    print(f"{program}: error: {message}", file=sys.stderr, flush=True)


def first_line(error: BaseException) -> str:
    """The first line of an exception's message, or its type name when it has none."""
    text = str(error)
    return text.splitlines()[0] if text.strip() else type(error).__name__


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
