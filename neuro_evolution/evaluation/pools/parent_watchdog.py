"""Pool workers end when the process that started the pool dies.

A worker of a ``ProcessPoolExecutor`` waits on its call queue; when the main process is killed
(``kill -9``, the OOM killer, a crash) nothing ever closes that queue, so the workers, the
forkserver (held open by the workers' copy of its "alive" pipe) and the resource tracker would
live on, re-parented to PID 1. So every worker runs a watchdog thread that checks the process
that started it every :data:`POLL_SECONDS` and exits the worker at once when it is gone. With
the workers gone, the forkserver and the resource tracker see their pipes close and end too.

"Gone" is judged by pid and start time (``/proc/PID/stat``), so a zombie parent (killed, not yet
reaped) counts as gone and a new process that reuses the pid does not count as the parent. This
holds for every start method: ``multiprocessing.parent_process()`` is the process that made the
pool even when the forkserver forked the worker.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path

POLL_SECONDS = 0.5
EXIT_CODE = 70  # a worker whose parent died (os._exit: no cleanup is owed to a dead run)


def process_identity(pid: int) -> str | None:
    """A string that changes when ``pid`` stops being the same live process (its start time);
    None when it is not alive (missing, zombie or dead). Without /proc: the pid while it
    answers signal 0."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return None
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return str(pid)
    state, start_time = fields[0], fields[19]
    return None if state in ("Z", "X", "x") else start_time


def _watch(pid: int, identity: str, interval: float) -> None:
    while True:
        time.sleep(interval)
        if process_identity(pid) != identity:
            os._exit(EXIT_CODE)


def exit_when_parent_dies(interval: float = POLL_SECONDS) -> None:
    """Start the watchdog thread in this (pool worker) process; a no-op in the main process."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.pid is None:
        return
    identity = process_identity(parent.pid)
    if identity is None:  # the parent is already gone
        os._exit(EXIT_CODE)
    watchdog = threading.Thread(
        target=_watch, args=(parent.pid, identity, interval), name="parent-watchdog", daemon=True
    )
    watchdog.start()
