"""One-line messages on the console from library code (a handler's recovery, a fallback).

Lines are written with ``tqdm.write``, so each gets a line of its own above a progress bar
instead of being glued to it. :func:`info` (stdout) says what happened and needs no action (a
worker was replaced, its chunks recomputed); :func:`warning` (stderr) is one ``warning:`` line
the user should read. Errors are the command lines' business (``program: error: ...``).
"""

from __future__ import annotations

import sys
import warnings
from typing import TextIO

# Third-party warnings nobody using this package can act on, ignored where they are raised.
KNOWN_NOISE: tuple[tuple[str, type[Warning]], ...] = (
    # Box2D's SWIG bindings, on import (LunarLander, BipedalWalker), Python >= 3.12 and 3.11 -X dev
    (r"builtin type (SwigPyPacked|SwigPyObject|swigvarlink) has no __module__", DeprecationWarning),
)


# MuJoCo warnings nobody using this package can act on: MuJoCo >= 3.3 warns while compiling the
# XML models Gymnasium ships (HalfCheetah's ``settotalmass``), on stdout and in MUJOCO_LOG.TXT,
# once per env made (every worker, every validation).
MUJOCO_NOISE: tuple[str, ...] = ("compiler attribute 'settotalmass' is deprecated",)


def quiet_mujoco() -> None:
    """Route MuJoCo's warnings through here (once per process): the known noise is dropped, any
    other warning is one ``warning:`` line on stderr. Call it before making a MuJoCo env."""
    global _MUJOCO_QUIET
    if _MUJOCO_QUIET:
        return
    try:
        import mujoco
    except ImportError:  # making the env will say what is missing
        return

    def handler(message: str) -> None:
        if not any(noise in message for noise in MUJOCO_NOISE):
            warning(f"MuJoCo: {message}")

    mujoco.set_mju_user_warning(handler)
    _MUJOCO_QUIET = True


_MUJOCO_QUIET = False


def ignore_known_noise() -> None:
    """Add the filters of :data:`KNOWN_NOISE` (again: ``catch_warnings`` blocks reset them)."""
    for message, category in KNOWN_NOISE:
        warnings.filterwarnings("ignore", message=message, category=category)


def plural(count: int, noun: str) -> str:
    """``1 episode``, ``2 episodes``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def score_text(value: float | None) -> str:
    """A validation score as every command prints it: 6 significant digits ("none" without)."""
    return "none" if value is None else f"{value:.6g}"


def info(line: str) -> None:
    """Print one line on stdout (above a running progress bar, if any)."""
    _write(line, sys.stdout)


def warning(line: str, program: str = "neuro_evolution") -> None:
    """Print ``program: warning: line`` on stderr: something to know, nothing failed."""
    _write(f"{program}: warning: {line}", sys.stderr)


def _write(line: str, stream: TextIO) -> None:
    from tqdm import tqdm

    tqdm.write(line, file=stream)
    stream.flush()
