"""One writer per run directory: an exclusive ``fcntl.flock`` on ``DIR/.lock``.

Every process that writes into a run or sweep directory (``train``, ``train --resume``, a sweep's
runs, a library :class:`~neuro_evolution.run.experiment.Experiment`) holds its lock while it
writes. A second process is refused in one line naming the holder (pid and host, as the holder
wrote them into the lock file). The kernel drops a ``flock`` when its process dies, so the lock
file of a killed process (``kill -9``, a lost machine) is taken over by the next one, which says
so on stderr. A clean release removes the file while still holding the lock; an acquirer that
finds its locked file unlinked or replaced tries again, so two processes never both hold it.
Within one process the lock is counted, not exclusive: an experiment resumed in the process that
wrote the run (a notebook, a test) shares its lock, which goes when the last holder releases it.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from neuro_evolution.support.console import warning
from neuro_evolution.support.errors import UserError

LOCK_FILE = ".lock"
_HELD: dict[Path, list[int]] = {}  # resolved directory -> [descriptor, holders in this process]


class RunLockedError(UserError):
    """Another live process holds the run directory's lock."""


def holder_text(details: dict[str, Any]) -> str:
    """``pid 123 on host h, since 2026-01-01 12:00:00`` from a lock file's contents."""
    since = details.get("since")
    when = time.strftime(" since %Y-%m-%d %H:%M:%S", time.localtime(since)) if since else ""
    return f"pid {details.get('pid', '?')} on host {details.get('host', '?')}{when}"


def read_holder(descriptor: int) -> dict[str, Any]:
    """What the lock file says about its holder ({} when empty or unreadable)."""
    try:
        os.lseek(descriptor, 0, os.SEEK_SET)
        text = os.read(descriptor, 4096).decode()
        data = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class RunLock:
    """One holder's share of this process's lock of a directory; :meth:`release` gives it up
    (and the process's exit, whatever its cause)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / LOCK_FILE
        self._key: Path | None = directory.resolve()

    @classmethod
    def acquire(cls, directory: str | Path, program: str = "neuro_evolution") -> RunLock:
        """Lock ``directory`` (created if missing) for this process, or refuse in one line."""
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            key = directory.resolve()
            if key in _HELD:
                _HELD[key][1] += 1
            else:
                _HELD[key] = [lock_descriptor(directory, program), 1]
        except OSError as error:  # a read-only folder, no permission
            raise UserError(
                f"{directory}: cannot create its lock file {LOCK_FILE} ({error.strerror}); "
                "make the folder writable or choose another"
            ) from None
        return cls(directory)

    @property
    def held(self) -> bool:
        return self._key is not None

    def release(self) -> None:
        """Give up this share; the last one removes the lock file, then unlocks (idempotent)."""
        key, self._key = self._key, None
        if key is None or key not in _HELD:
            return
        entry = _HELD[key]
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _HELD[key]
        try:
            if same_file(entry[0], key / LOCK_FILE):
                (key / LOCK_FILE).unlink(missing_ok=True)
        finally:
            os.close(entry[0])  # closing the last descriptor drops the flock


def lock_descriptor(directory: Path, program: str) -> int:
    """An open descriptor of ``directory``'s lock file holding its exclusive flock."""
    path = directory / LOCK_FILE
    while True:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = read_holder(descriptor)
            os.close(descriptor)
            raise RunLockedError(
                f"{directory}: in use by another process ({holder_text(holder)}); wait for it "
                "to end or stop it, then run again"
            ) from None
        if not same_file(descriptor, path):  # released (unlinked) while we waited
            os.close(descriptor)
            continue
        stale = read_holder(descriptor)
        if stale:  # its process died holding the lock: the kernel dropped the flock
            warning(
                f"{directory}: taking over the lock of a process that ended without releasing "
                f"it ({holder_text(stale)})",
                program,
            )
        write_holder(descriptor)
        return descriptor


def same_file(descriptor: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``descriptor``."""
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (on_disk.st_dev, on_disk.st_ino) == (opened.st_dev, opened.st_ino)


def write_holder(descriptor: int) -> None:
    """Write this process's pid, host and start time into the lock file."""
    text = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()})
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, text.encode(), 0)
