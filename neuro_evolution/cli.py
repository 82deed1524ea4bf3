"""Shared command-line plumbing: one-line errors with exit code 2, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable

from neuro_evolution.errors import USER_ERRORS

EXIT_USAGE = 2


def run_cli(main: Callable[[], int], program: str) -> int:
    """Call ``main``; turn user errors into ``program: error: ...`` on stderr and exit code 2."""
    try:
        return main()
    except USER_ERRORS as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"{program}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr)
        return 130
