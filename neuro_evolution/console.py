"""One-line messages on the console from library code (a handler's recovery, a fallback).

Lines are written with ``tqdm.write``, so each gets a line of its own above a progress bar
instead of being glued to it. :func:`info` (stdout) says what happened and needs no action (a
worker was replaced, its chunks recomputed); :func:`warning` (stderr) is one ``warning:`` line
the user should read. Errors are the command lines' business (``program: error: ...``).
"""

from __future__ import annotations

import sys
from typing import TextIO


def info(line: str) -> None:
    """Print one line on stdout (above a running progress bar, if any)."""
    _write(line, sys.stdout)


def warning(line: str) -> None:
    """Print ``warning: line`` on stderr: something the user should know, nothing failed."""
    _write(f"warning: {line}", sys.stderr)


def _write(line: str, stream: TextIO) -> None:
    from tqdm import tqdm

    tqdm.write(line, file=stream)
    stream.flush()
