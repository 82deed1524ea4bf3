"""Atomic file writes: write a temporary file in the same directory, fsync, then ``os.replace``.

A crash at any moment leaves either the old file or the new one, never a half-written file.
The temporary file is created with mode 0o666 filtered by the process umask (as ``open()``
does), not ``tempfile.mkstemp``'s 0o600: the replaced file keeps the temporary file's mode, and
a colleague on a shared file system must be able to read a run's results under umask 022.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.support.errors import DamagedFileError, FolderNotWritableError


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (and durably: the data is fsynced first)."""
    path = Path(path)
    handle, temporary = _create_temporary(path)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _create_temporary(path: Path) -> tuple[int, Path]:
    """A new, exclusively created ``.NAME.RANDOM.tmp`` next to ``path``: (fd, its path).

    The kernel applies the umask (and a directory's default ACL) to mode 0o666 at creation, so
    no umask has to be read (reading it means setting it, which races with other threads).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:  # a name collision: draw another
            continue
        except OSError as error:  # a read-only folder, no permission, a missing folder
            raise FolderNotWritableError(
                f"{path.parent}: cannot write {path.name} there ({error.strerror}); make the "
                "folder writable, or write to another folder"
            ) from None


def atomic_write_text(path: str | Path, text: str) -> None:
    """Replace a text file atomically."""
    atomic_write_bytes(path, text.encode())


def atomic_write_json(path: str | Path, data: Any) -> None:
    """Replace a JSON file atomically (indented, keys in insertion order)."""
    atomic_write_text(path, json.dumps(data, indent=2) + "\n")


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    """The bytes of an ``.npz`` of ``arrays``: the same arrays always give the same bytes.

    ``np.savez`` stamps every zip entry with the current time; here every entry gets a fixed
    timestamp, so identical runs write byte-identical files.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for key, value in arrays.items():
            array = np.asarray(value)
            if array.dtype.hasobject:
                raise TypeError(f"{key}: object arrays cannot be saved without pickle")
            entry = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with archive.open(entry, "w", force_zip64=True) as file:
                np.lib.format.write_array(file, array, allow_pickle=False)
    return buffer.getvalue()


def atomic_savez(path: str | Path, arrays: dict[str, Any]) -> None:
    """Write an ``.npz`` atomically; values must be arrays or scalars/strings (no objects)."""
    atomic_write_bytes(path, npz_bytes(arrays))


def load_npz(path: str | Path | io.BytesIO) -> dict[str, np.ndarray]:
    """Read an ``.npz`` without pickle (a run directory from elsewhere cannot run code); a
    damaged one (truncated, not a zip of arrays, a pickled array) is a one-line
    DamagedFileError naming the file. A missing file stays a FileNotFoundError."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as error:
        where = path if isinstance(path, str | Path) else "the .npz data"
        detail = str(error).splitlines()[0] if str(error) else ""
        raise DamagedFileError(
            f"{where}: damaged, cannot be read ({type(error).__name__}: {detail}); restore it "
            "from a copy, or write it again"
        ) from None
