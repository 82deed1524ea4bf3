"""What the Dask handler needs to survive its cluster: an interruptible connect, a wait for a lost
scheduler, and a record of workers lost during a generation (for one console line each).

Kept apart from :mod:`neuro_evolution.evaluation.pools.dask_handler` so that the handler reads as
its strategy (plugin, chunks, gather) and this module as its failure handling.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from distributed import Client
from distributed.comm.core import CommClosedError

T = TypeVar("T")
POLL_SECONDS = 0.1  # how often the main thread wakes while waiting (signals run in between)
RETRY_SECONDS = 0.5  # pause between attempts to reach a lost scheduler
CLOSE_SECONDS = 2.0  # at most this long to close a client whose scheduler is gone


def call_interruptibly(make: Callable[[], T], name: str, deadline: float | None = None) -> T:
    """``make()`` in a daemon thread while this thread waits in short, interruptible steps.

    ``distributed.Client(...)`` blocks in its constructor; interrupted there (Ctrl-C), it leaves a
    half-made client whose ``__del__`` waits up to a minute at exit. In a thread, a signal stops
    the waiting caller at once, and the abandoned attempt dies with the process. With a
    ``deadline`` (``time.monotonic()``), waiting past it is a TimeoutError: a client's own
    timeout does not bound its constructor's time.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = make()
        except BaseException as error:  # handed to the caller
            box["error"] = error

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    while thread.is_alive():
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"{name}: no answer before the deadline")
        thread.join(POLL_SECONDS)
    if "error" in box:
        raise box["error"]
    return box["value"]


@contextlib.contextmanager
def distributed_logs_silenced() -> Iterator[None]:
    """Silence ``distributed``'s loggers inside the block: a lost scheduler makes the client log
    dozens of lines of comm errors and cancelled reconnects that the handler's one line replaces."""
    names = ["distributed"] + [
        name for name in logging.root.manager.loggerDict if name.startswith("distributed.")
    ]
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


NOISY_LOGGERS = (
    "distributed.batched",
    "distributed.client",
    "distributed.utils",
    "distributed.core",
    "distributed.comm",
    "distributed.comm.tcp",
)


class LossNoiseFilter(logging.Filter):
    """Drops ``distributed``'s records about a lost scheduler while ``lost()`` is true: the
    client's own reconnect attempts log errors ("Failed to reconnect to scheduler after 30 s",
    cancelled comms) that the handler's one line replaces."""

    def __init__(self, lost: Callable[[], bool]) -> None:
        super().__init__()
        self.lost = lost

    def filter(self, record: logging.LogRecord) -> bool:
        # A closed comm is logged the moment the socket drops, possibly before the client's
        # status says the scheduler is lost: such records are dropped by their kind as well.
        closed = record.exc_info is not None and isinstance(record.exc_info[1], CommClosedError)
        return not (closed or "Comm Closed" in record.getMessage() or self.lost())

    def attach(self) -> None:
        """Filter the client's noisy loggers from now on."""
        for name in NOISY_LOGGERS:
            logging.getLogger(name).addFilter(self)

    def detach(self) -> None:
        """Stop filtering."""
        for name in NOISY_LOGGERS:
            logging.getLogger(name).removeFilter(self)


def close_quickly(client: Client) -> None:
    """Close a client whose scheduler may be gone, without waiting for it (errors ignored)."""
    with contextlib.suppress(Exception), distributed_logs_silenced():
        client.close(timeout=CLOSE_SECONDS)


def scheduler_lost(client: Client, error: BaseException | None = None) -> bool:
    """Whether ``client`` lost its scheduler: not running, futures cancelled for that, or the
    scheduler's connection closed under a call before the client has noticed (a gather can
    raise CommClosedError while the client's status still says running)."""
    if client.status != "running":
        return True
    if isinstance(error, CommClosedError):
        return True
    return error is not None and "scheduler-connection-lost" in str(error)


def reconnect(
    connect: Callable[[float], Client], seconds: float, describe: str
) -> tuple[Client, float]:
    """A new client from ``connect(timeout)`` within ``seconds``, retrying while the scheduler is
    unreachable: (client, seconds left); TimeoutError naming ``describe`` when it stays away."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{describe} did not come back within {seconds:g} s")
        try:
            timeout = min(left, 10.0)
            client = call_interruptibly(
                lambda: connect(timeout),  # noqa: B023
                "dask-reconnect",
                deadline,
            )
            return client, max(0.0, deadline - time.monotonic())
        except (OSError, TimeoutError):
            time.sleep(min(RETRY_SECONDS, max(0.0, deadline - time.monotonic())))


class WorkerLosses:
    """Workers the scheduler removed while they were processing some of our tasks.

    Subscribes to the scheduler's ``all`` event topic (``remove-worker`` events carry the keys
    the worker was processing); :meth:`take` returns one line per such worker since the last call.
    """

    def __init__(self, client: Client) -> None:
        self._lock = threading.Lock()
        self._events: list[tuple[str, set[str]]] = []
        client.subscribe_topic("all", self._on_event)

    def _on_event(self, event: Any) -> None:
        _, message = event
        if isinstance(message, dict) and message.get("action") == "remove-worker":
            keys = {str(k) for k in message.get("processing-tasks") or ()}
            with self._lock:
                self._events.append((str(message.get("worker", "?")), keys))

    @staticmethod
    def stop(client: Client) -> None:
        """Unsubscribe before ``client`` closes: else the scheduler, publishing that client's own
        ``remove-client`` event to it, logs a CRITICAL traceback about the closed comm."""
        with contextlib.suppress(Exception):
            client.unsubscribe_topic("all")

    def take(self, keys: Iterable[Any]) -> list[str]:
        """One line per worker lost while processing one of ``keys`` (events are consumed)."""
        ours = {str(key) for key in keys}
        with self._lock:
            events, self._events = self._events, []
        return [
            f"dask: worker {worker} lost; its chunks were recomputed"
            for worker, processing in events
            if processing & ours
        ]
