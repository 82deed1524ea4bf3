"""Signal handlers swapped in for the length of a block, and put back after it."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

Handler = Callable[[int, Any], Any] | int | signal.Handlers


@contextmanager
def signals_handled_by(handler: Handler, signums: Iterable[int]) -> Iterator[None]:
    """Route ``signums`` to ``handler`` inside the block, then restore the previous handlers.

    Python sets signal handlers only in the main thread; elsewhere the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum in signums}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
