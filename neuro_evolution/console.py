"""One-line notices on the console from library code (a handler's recovery, a fallback).

A notice is written with ``tqdm.write`` to stderr, so it gets a line of its own above a progress
bar instead of being glued to it. The command lines use the same format for their warnings.
"""

from __future__ import annotations

import sys


def notice(line: str) -> None:
    """Print one line on stderr (above a running progress bar, if any)."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stderr)
    sys.stderr.flush()


def warning(line: str) -> None:
    """Print ``warning: line`` on stderr: something the user should know, nothing failed."""
    notice(f"warning: {line}")
