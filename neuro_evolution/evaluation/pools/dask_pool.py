"""The Dask pool: chunks of any registered run as Dask tasks, one worker plugin per run.

Without a scheduler address the pool starts a ``LocalCluster`` of ``workers`` single-threaded
worker processes on 127.0.0.1; with ``scheduler="tcp://HOST:PORT"`` (or the path of a scheduler
file) it connects to a running cluster; a ``tls://`` one takes the client's certificates from
Dask's configuration, checked first by :mod:`~neuro_evolution.evaluation.pools.dask_security`.
A run registers an :class:`~neuro_evolution.evaluation.pools.dask_plugin.EvaluationPlugin`
(template and RunnerSpec, set up by every worker); its chunks go out as tasks (``pure=False``)
and come back as they complete. The Dask handler is this pool with one run; a sweep registers
every open run on it. So the fault rules below hold for a single run and a sweep alike.

A worker that dies mid-generation is handled by Dask: its tasks are rescheduled on the other
workers (a nanny also restarts it) and the chunks complete with identical results, because a
result depends only on genome and seed. Dask gives up with ``KilledWorker`` when the same task
has been on ``distributed.scheduler.allowed-failures`` (default 3) dying workers. If every worker
is gone, the chunks wait until one joins. Each worker lost while it ran our tasks gives one
console line (``dask: worker ... lost; its chunks were recomputed``).

A lost scheduler of an existing cluster (stopped with SIGINT or killed: both look the same to the
client, whose futures are cancelled) is waited for up to ``reconnect_seconds``: when a scheduler
answers at the same address (or scheduler file) again and a worker has joined it, every run's
plugin is registered again and the chunks that had not come back are computed again (identical
results). Otherwise the request fails with one line. See
:mod:`neuro_evolution.evaluation.pools.dask_recovery`.

A silent scheduler (its process paused, its host hung) keeps its connection open, so the client
sees nothing wrong: while chunks are out and none comes back, the pool asks it every
``PING_SECONDS`` for its workers, and one that answers nothing for ``reconnect_seconds`` fails
the request in one line, as a lost one that stays away does.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import time
import uuid
from collections.abc import Callable
from typing import TypeVar

from distributed import Client, Future, LocalCluster

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import RunnerSpec
from neuro_evolution.evaluation.pools import dask_recovery, dask_security
from neuro_evolution.evaluation.pools import worker as worker_side
from neuro_evolution.evaluation.pools.base import sigint_ignored
from neuro_evolution.evaluation.pools.dask_plugin import EvaluationPlugin, evaluate_chunk
from neuro_evolution.evaluation.pools.options import option_path
from neuro_evolution.evaluation.pools.run_pool import Chunk, RunPool
from neuro_evolution.support.console import info, warning
from neuro_evolution.support.errors import HandlerStartError
from neuro_evolution.support.kernels import kernel_set, kernel_text, portable_variables

WORKER_WAIT_SECONDS = 120  # for the first worker of an existing cluster to be there
# At most this long to ask an existing cluster for its thread count before a generation: a
# scheduler killed a moment ago (before the client noticed) would hold the question for the
# comm's 30 s connect retries, a paused one for ever; the last count serves instead.
SLOTS_SECONDS = 5.0
# While chunks are out and none comes back, an existing cluster's scheduler is asked this often
# whether it still answers; one that answers nothing for reconnect_seconds (a paused process, a
# hung host: its connection stays open, so nothing else would tell) fails the generation.
PING_SECONDS = 2.0
T = TypeVar("T")


def check_worker_kernels(client: Client, portable: bool) -> set[str]:
    """Name, in one line, the workers that run other kernels than this process (their chunks
    may differ in the last bits: support/kernels.py); with ``portable``, refuse them. The
    addresses named. A worker that joins later is named by its first chunk
    (:meth:`DaskPool.note_worker_kernels`)."""
    mine = kernel_set()
    theirs = client.run(kernel_set)
    other = {address: kernels for address, kernels in theirs.items() if kernels != mine}
    if not other:
        return set()
    named = ", ".join(f"{address} ({kernel_text(kernels)})" for address, kernels in other.items())
    line = (
        f"{len(other)} of {len(theirs)} Dask workers run other kernels than this process "
        f"({kernel_text(mine)}): {named}"
    )
    if portable:
        variables = " ".join(f'{key}="{value}"' for key, value in portable_variables().items())
        raise HandlerStartError(
            f"{option_path('portable_kernels')}: {line}; start the workers as {variables} dask "
            "worker ADDRESS (docs/cluster.md)"
        )
    warning(f"dask: {line}; results may differ from a run on this machine alone")
    return set(other)


class DaskPool(RunPool):
    """Chunks of many runs as Dask tasks on one cluster (see the module docstring); connects (or
    starts the LocalCluster) when made."""

    def __init__(
        self,
        workers: int = 2,
        scheduler: str | None = None,
        vectorize: bool | str = False,
        *,
        chunks_per_slot: int = 1,
        connect_timeout: float = 30.0,
        reconnect_seconds: float = 30.0,
        precision: str = "float32",
        portable_kernels: bool = False,
    ) -> None:
        self.workers = workers
        self.scheduler = scheduler
        self.precision = precision
        self.portable_kernels = portable_kernels
        self._other_kernels: set[str] = set()  # workers named for their kernels
        self.connect_timeout = connect_timeout  # seconds to reach an existing scheduler
        self.reconnect_seconds = reconnect_seconds  # to wait for a lost scheduler to come back
        self._cluster: LocalCluster | None = None
        self._client: Client | None = None
        self._losses: dask_recovery.WorkerLosses | None = None
        self._plugins: dict[str, tuple[str, EvaluationPlugin]] = {}  # run -> (name, plugin)
        self._futures: dict[Future, Chunk] = {}  # sent, not yet collected
        self._unsent: list[Chunk] = []  # submitted while the scheduler was lost
        self._completed: queue.Queue[Future] = queue.Queue()  # fed by Dask's done callbacks
        self._quiet_when_lost = dask_recovery.LossNoiseFilter(
            lambda: self._client is None or dask_recovery.scheduler_lost(self._client)
        )
        try:
            self._client = self._connect()
            self._other_kernels = check_worker_kernels(self._client, portable_kernels)
        except BaseException:
            self.close()
            raise
        self._losses = dask_recovery.WorkerLosses(self._client)
        self._quiet_when_lost.attach()
        slots = self._cluster_slots(self._client)
        if vectorize:
            worker_side.vectorized_state_class()  # fail here, not on every worker
        super().__init__(slots, vectorize, chunks_per_slot)

    # --- connecting ---------------------------------------------------------------------------
    def _connect(self) -> Client:
        if self.scheduler is None:
            with sigint_ignored():  # nannies and their (re)started workers ignore Ctrl-C
                self._cluster = LocalCluster(
                    n_workers=self.workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0",
                    silence_logs=logging.ERROR,  # a restarted worker gets our one line instead
                )
            return Client(self._cluster, set_as_default=False)
        info(f"dask: connecting to {self.scheduler} (up to {self.connect_timeout:g} s)")
        dask_security.check_scheduler(self.scheduler)  # scheme and TLS files, in one line
        try:
            client = dask_recovery.call_interruptibly(
                lambda: self._new_client(self.connect_timeout), "dask-connect"
            )
        except OSError as error:
            raise HandlerStartError(
                f"{option_path('scheduler')}: cannot reach the Dask scheduler at {self.scheduler} "
                f"({error}); start one with `dask scheduler`, or leave scheduler unset to use a "
                "LocalCluster"
            ) from None
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except TimeoutError:
            client.close()
            raise HandlerStartError(
                f"{option_path('scheduler')}: no Dask worker joined {self.scheduler} within "
                f"{WORKER_WAIT_SECONDS} s; start workers with `dask worker {self.scheduler}`"
            ) from None
        return client

    def _new_client(self, timeout: float) -> Client:
        """A client of the existing cluster (address or scheduler file)."""
        assert self.scheduler is not None
        is_file = "://" not in self.scheduler
        return Client(
            None if is_file else self.scheduler,
            scheduler_file=self.scheduler if is_file else None,
            timeout=timeout,
            set_as_default=False,
        )

    def _cluster_slots(self, client: Client) -> int:
        """Task slots of the cluster: our worker count, or an existing cluster's total threads."""
        if self._cluster is not None:
            return self.workers
        return max(1, int(client.scheduler_info(n_workers=0).get("total_threads", 1)))

    def request_chunks(self) -> int:
        """As :meth:`RunPool.request_chunks`, for the slots the cluster has now (workers of an
        existing cluster come and go; our LocalCluster keeps its worker count)."""
        client = self._client
        existing = self._cluster is None
        if existing and client is not None and not dask_recovery.scheduler_lost(client):
            with contextlib.suppress(OSError):  # lost or silent just now: the last count serves
                self.slots = dask_recovery.call_interruptibly(
                    lambda: self._cluster_slots(client),
                    "dask-slots",
                    time.monotonic() + SLOTS_SECONDS,
                )
        return super().request_chunks()

    # --- runs: one plugin each ----------------------------------------------------------------
    def _register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        plugin = EvaluationPlugin(
            template, spec, self.vectorize, self.precision, kernel_set(), self.portable_kernels
        )
        self._plugins[run_id] = (self._send_plugin(plugin), plugin)

    def _send_plugin(self, plugin: EvaluationPlugin) -> str:
        """Register ``plugin`` under a new name (every worker sets it up); the name."""
        assert self._client is not None
        name = f"neuro_evolution-{uuid.uuid4().hex}"
        try:
            self._client.register_plugin(plugin, name=name)
        except BaseException:
            # The scheduler keeps a registered plugin even when a worker's setup failed; a
            # worker joining later would then fail to start. Remove it before reporting.
            self._remove_plugin(name)
            raise
        return name

    def _unregister(self, run_id: str) -> None:
        name, _ = self._plugins.pop(run_id, (None, None))
        if name is not None:
            self._remove_plugin(name)

    def _remove_plugin(self, name: str) -> None:
        """Remove a plugin from the workers (closing their envs), unless the scheduler is gone:
        waiting for a lost scheduler would only delay the shutdown."""
        client = self._client
        if client is None or client.status != "running":
            return
        # The scheduler may be gone already, or the plugin may never have reached it.
        with contextlib.suppress(OSError, ValueError, TimeoutError):
            client.unregister_worker_plugin(name)

    def plugin_name(self, run_id: str) -> str | None:
        """The name of the run's plugin on the workers (None for an unknown run)."""
        return self._plugins.get(run_id, (None, None))[0]

    # --- chunks -------------------------------------------------------------------------------
    def _submit_chunk(self, chunk: Chunk) -> None:
        client = self._client
        if client is None or dask_recovery.scheduler_lost(client):
            self._unsent.append(chunk)  # the next wait waits for the scheduler
            return
        name = self._plugins[chunk.run_id][0]
        args = (name, chunk.genomes, chunk.seeds, chunk.context)
        try:
            future = client.submit(evaluate_chunk, *args, pure=False)
        except Exception as error:
            if not dask_recovery.scheduler_lost(client, error):
                raise
            self._unsent.append(chunk)
            return
        self._futures[future] = chunk
        future.add_done_callback(self._completed.put)

    def _wait_chunks(self, timeout: float | None) -> None:
        client = self._client
        if self._unsent or client is None or dask_recovery.scheduler_lost(client):
            self._await_scheduler()
            return
        first = self._next_completed(client, timeout)
        if first is None:
            return
        done = [first]
        with contextlib.suppress(queue.Empty):
            while True:
                done.append(self._completed.get_nowait())
        done = [future for future in done if future in self._futures]  # not of a lost client
        try:
            timed = self._gather(client, done)
        except BaseException as error:
            if not dask_recovery.scheduler_lost(client, error):
                raise
            self._await_scheduler()
            return
        if self._losses is not None:  # the lost worker's tasks are still ours, or done now
            for line in self._losses.take(future.key for future in self._futures):
                info(line)
        for future, (results, seconds, other) in zip(done, timed):
            if other is not None:
                self.note_worker_kernels(*other)
            self._chunk_done(self._futures.pop(future), (results, seconds))

    def note_worker_kernels(self, address: str, kernels: dict) -> None:
        """Name, once, a worker whose chunk came back computed with other kernels than this
        process's (one that joined after the connect-time check)."""
        if address in self._other_kernels:
            return
        self._other_kernels.add(address)
        warning(
            f"dask: worker {address} joined with other kernels ({kernel_text(kernels)}) than "
            f"this process ({kernel_text(kernel_set())}); results may differ from a run on "
            "this machine alone"
        )

    def _next_completed(self, client: Client, timeout: float | None) -> Future | None:
        """The next completed future within ``timeout`` (None: none came), asking an existing
        cluster's scheduler every PING_SECONDS meanwhile whether it still answers."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            wait = left
            if self._cluster is None:  # our LocalCluster's scheduler lives in this process
                wait = PING_SECONDS if left is None else min(PING_SECONDS, left)
            try:
                return self._completed.get(timeout=wait)
            except queue.Empty:
                pass
            if deadline is not None and time.monotonic() >= deadline:
                return None
            self._check_answers(client)

    def _gather(self, client: Client, done: list[Future]) -> list:
        """The results of finished futures; from an existing cluster within the silence window
        (a gather asks the scheduler where the results are, and a paused one never says)."""
        if self._cluster is not None:
            return client.gather(done)
        return self._answered(client, lambda: client.gather(done), "dask-gather")

    def _check_answers(self, client: Client) -> None:
        """Return when the scheduler answers a small question (or is lost just now: the next
        wait waits for it); the silence error of :meth:`_answered` when it answers nothing."""
        with contextlib.suppress(OSError):
            self._answered(client, lambda: client.scheduler_info(n_workers=0), "dask-ping")

    def _answered(self, client: Client, call: Callable[[], T], name: str) -> T:
        """``call()`` (a request to the scheduler) when it returns within ``reconnect_seconds``
        (at least SLOTS_SECONDS); else the client is given up quickly and a RuntimeError says
        the scheduler is silent."""
        window = max(self.reconnect_seconds, SLOTS_SECONDS)
        try:
            return dask_recovery.call_interruptibly(call, name, time.monotonic() + window)
        except TimeoutError:
            self._client = self._losses = None
            dask_recovery.WorkerLosses.stop(client)  # a message, not a call: does not wait
            dask_recovery.close_quickly(client)
            raise RuntimeError(
                f"the Dask scheduler at {self.scheduler} answered nothing for {window:g} s "
                f"({option_path('reconnect_seconds')}); is its process paused or its host hung?"
            ) from None

    def _cancel(self, ticket: int) -> None:
        super()._cancel(ticket)
        self._unsent = [chunk for chunk in self._unsent if chunk.ticket != ticket]
        futures = [future for future, chunk in self._futures.items() if chunk.ticket == ticket]
        for future in futures:
            del self._futures[future]
        self._cancel_futures(futures)

    def _cancel_futures(self, futures: list[Future]) -> None:
        client = self._client
        if futures and client is not None and client.status == "running":
            with contextlib.suppress(OSError, TimeoutError):
                client.cancel(futures)

    # --- a lost scheduler ---------------------------------------------------------------------
    def _await_scheduler(self) -> None:
        """Wait up to ``reconnect_seconds`` for the lost scheduler, register every run's plugin
        again and send the chunks that did not come back; a RuntimeError when it does not come
        back (or for a LocalCluster, which cannot)."""
        lost = self._client
        where = self.scheduler or "the LocalCluster"
        if self.scheduler is None or self.reconnect_seconds <= 0:
            raise RuntimeError(f"lost the Dask scheduler of {where} during a generation")
        info(
            f"dask: lost the scheduler at {where}; waiting up to {self.reconnect_seconds:g} s "
            f"({option_path('reconnect_seconds')}) for it to come back"
        )
        self._client = self._losses = None
        if lost is not None:
            dask_recovery.close_quickly(lost)
        try:
            with dask_recovery.distributed_logs_silenced():
                client, left = dask_recovery.reconnect(
                    self._new_client, self.reconnect_seconds, f"the Dask scheduler at {where}"
                )
        except TimeoutError:
            raise RuntimeError(
                f"lost the Dask scheduler at {where}; it did not come back within "
                f"{self.reconnect_seconds:g} s"
            ) from None
        self._client = client
        try:
            client.wait_for_workers(1, timeout=max(left, 1.0))
        except TimeoutError:
            raise RuntimeError(
                f"the Dask scheduler at {where} came back, but no worker joined it within "
                f"{self.reconnect_seconds:g} s"
            ) from None
        self._losses = dask_recovery.WorkerLosses(client)
        for run_id, (_, plugin) in list(self._plugins.items()):
            self._plugins[run_id] = (self._send_plugin(plugin), plugin)
        lost_chunks = sorted([*self._futures.values(), *self._unsent], key=lambda c: c.number)
        self._futures, self._unsent = {}, []
        info(f"dask: reconnected to {where}; recomputing the {len(lost_chunks)} unfinished chunks")
        for chunk in lost_chunks:
            self._submit_chunk(chunk)

    # --- the end ------------------------------------------------------------------------------
    def close(self) -> None:
        """Cancel the chunks out, remove the runs' plugins from an external cluster (closing the
        envs on its workers, which outlive us), close the client and our LocalCluster."""
        self._cancel_futures(list(self._futures))
        self._futures.clear()
        self._unsent.clear()
        if self._cluster is None:
            for name, _ in list(self._plugins.values()):
                self._remove_plugin(name)
        self._plugins.clear()
        client, cluster = self._client, self._cluster
        self._client = self._cluster = self._losses = None
        self._quiet_when_lost.detach()
        if client is not None:
            dask_recovery.WorkerLosses.stop(client)
            if dask_recovery.scheduler_lost(client):
                dask_recovery.close_quickly(client)
            else:
                client.close()
        if cluster is not None:
            cluster.close()

    def describe(self) -> str:
        """Where the cluster is, how many workers it has and the dashboard link."""
        where = "LocalCluster" if self._cluster is not None else f"cluster at {self.scheduler}"
        if self._client is None:
            return f"dask: {where} (not connected)"
        workers = self._client.scheduler_info(n_workers=0).get("n_workers", "?")
        return f"dask: {where}, {workers} workers, dashboard {self._client.dashboard_link}"

    @property
    def client(self) -> Client | None:
        """The Dask client while connected (for diagnostics)."""
        return self._client
