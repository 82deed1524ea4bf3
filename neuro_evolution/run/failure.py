"""``failure.txt``: why a run's generation failed, in its run directory: the one-line report
(``generation N failed: Type: message``), a blank line, then the traceback.

A run whose generation raised keeps the checkpoint of its last completed generation and this
file. Opening the run again (``train --resume`` or the same sweep command) removes the file, so
it always describes the run's latest session: present means the run's last session failed.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from neuro_evolution.run.checkpoint import CheckpointedRun, checkpointer_of
from neuro_evolution.support.atomic import atomic_write_text
from neuro_evolution.support.errors import first_line

FAILURE_FILE = "failure.txt"


def failure_line(generation: int, error: BaseException) -> str:
    """The one-line report of generation ``generation``'s ``error``."""
    return f"generation {generation} failed: {type(error).__name__}: {first_line(error)}"


def save_last_completed(experiment: CheckpointedRun) -> str | None:
    """Checkpoint the last completed generation of a failed run if it is not on disk yet; None,
    or why it could not (``Type: message``, e.g. a full disk: the last checkpoint on disk stays)."""
    checkpointer = checkpointer_of(experiment)
    try:
        if checkpointer is not None:
            checkpointer.save_completed()
    except Exception as error:
        return f"{type(error).__name__}: {first_line(error)}"
    return None


def record_failure(run_dir: Path, line: str, error: BaseException) -> Path | None:
    """Write ``line`` (the one-line report) and ``error``'s traceback to the run's failure file;
    its path, or None when it could not be written (the caller still reports the error)."""
    path = Path(run_dir) / FAILURE_FILE
    try:
        atomic_write_text(path, f"{line}\n\n" + "".join(traceback.format_exception(error)))
    except OSError:
        return None
    return path


def clear_failure(run_dir: Path) -> None:
    """Remove the run's failure file (the run is opened again)."""
    (Path(run_dir) / FAILURE_FILE).unlink(missing_ok=True)


def read_failure(run_dir: Path) -> str | None:
    """The one-line report of the run's failure file, or None without one."""
    try:
        text = (Path(run_dir) / FAILURE_FILE).read_text()
    except FileNotFoundError:
        return None
    return text.splitlines()[0] if text.strip() else "a generation failed (empty failure.txt)"
