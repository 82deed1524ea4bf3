"""The Dask handler: evaluate chunks of genomes on a LocalCluster or an existing Dask cluster.

Without a scheduler address the handler starts a ``LocalCluster`` of ``workers`` single-threaded
worker processes on 127.0.0.1; with ``scheduler="tcp://HOST:PORT"`` (or the path of a scheduler
file) it connects to a running cluster; a ``tls://`` one takes the client's certificates from
Dask's configuration, checked first by :mod:`~neuro_evolution.evaluation.handlers.dask_security`.
Template and RunnerSpec travel once per run inside an :class:`EvaluationPlugin`, which every
worker -- also one that joins or restarts later -- sets up
with its own env and brain; tasks carry only genome chunks and seeds.

A worker that dies mid-generation is handled by Dask: its tasks are rescheduled on the other
workers (a LocalCluster's nanny also restarts it) and the generation completes with identical
results, because a result depends only on genome and seed. Dask gives up with ``KilledWorker``
when the same task has been on ``distributed.scheduler.allowed-failures`` (default 3) dying
workers. If every worker is gone, ``batch_evaluate`` waits until one joins. Each worker lost
while it ran our tasks gives one console line (``dask: worker ... lost; its chunks were
recomputed``).

A lost scheduler of an existing cluster (stopped with SIGINT or killed: both look the same to the
client, whose futures are cancelled) is waited for up to ``reconnect_seconds``: when a scheduler
answers at the same address (or scheduler file) again and a worker has joined it, the plugin is
registered again and the whole generation is recomputed (identical results). Otherwise the
generation fails with one line. See :mod:`neuro_evolution.evaluation.handlers.dask_recovery`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import uuid

import numpy as np
from distributed import Client, LocalCluster, get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episode import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.handlers import dask_recovery, dask_security
from neuro_evolution.evaluation.handlers import worker as worker_side
from neuro_evolution.evaluation.handlers.base import (
    EvaluationHandler,
    check_batch,
    check_parallel_options,
    chunks_per_worker_for,
    register_handler,
    sigint_ignored,
    split_chunks,
)
from neuro_evolution.evaluation.handlers.options import (
    EvaluationConfig,
    option_path,
)
from neuro_evolution.support.console import info
from neuro_evolution.support.errors import ConfigError, HandlerStartError

WORKER_WAIT_SECONDS = 120  # for the first worker of an existing cluster to be there


class EvaluationPlugin(WorkerPlugin):
    """Carries template + RunnerSpec to every worker and keeps that worker's evaluation states.

    ``setup`` builds one state (env + brain) at once, so a worker that cannot make the env fails
    at registration. A worker with several threads builds one more state per concurrent task:
    a state (its env, its brain) is never shared by two tasks at a time.
    """

    def __init__(
        self,
        template: BrainTemplate,
        spec: RunnerSpec,
        vectorize: bool | str,
        precision: str = "float32",
    ) -> None:
        self.template = template
        self.spec = spec
        self.vectorize = vectorize
        self.precision = precision

    def setup(self, worker: object) -> None:
        self._lock = threading.Lock()
        self._idle = [self._new_state()]
        self._all = list(self._idle)

    def _new_state(self) -> worker_side.ChunkEvaluator:
        return worker_side.make_worker_state(
            self.template, self.spec, self.vectorize, self.precision
        )

    def evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """Evaluate a chunk with an idle state of this worker (a new one if all are busy)."""
        with self._lock:
            state = self._idle.pop() if self._idle else None
        if state is None:
            state = self._new_state()
            with self._lock:
                self._all.append(state)
        try:
            return state.evaluate(genomes, seeds, context)
        finally:
            with self._lock:
                self._idle.append(state)

    def teardown(self, worker: object) -> None:
        for state in getattr(self, "_all", ()):
            state.close()
        self._all = self._idle = []


def evaluate_chunk(
    plugin_name: str,
    genomes: np.ndarray,
    seeds: np.ndarray,
    context: EvaluationContext = TRAINING,
) -> list:
    """The task: evaluate one chunk with the plugin state of the worker that runs it."""
    plugin = get_worker().plugins.get(plugin_name)
    if not isinstance(plugin, EvaluationPlugin):
        raise RuntimeError(
            f"Dask worker {get_worker().address} has no evaluation plugin {plugin_name!r}; "
            "was the handler closed while a generation ran?"
        )
    return plugin.evaluate(genomes, seeds, context)


@register_handler("dask")
class DaskHandler(EvaluationHandler):
    """Evaluates chunks of genomes as Dask tasks (``pure=False``), results in submission order."""

    def __init__(
        self,
        workers: int = 2,
        scheduler: str | None = None,
        vectorize: bool | str = False,
        chunks_per_worker: int | None = None,
        connect_timeout: float = 30.0,
        reconnect_seconds: float = 30.0,
        precision: str = "float32",
    ) -> None:
        if chunks_per_worker is None:
            chunks_per_worker = chunks_per_worker_for(vectorize)
        check_parallel_options(workers, chunks_per_worker)
        if scheduler is not None and "://" not in scheduler and not os.path.isfile(scheduler):
            raise ConfigError(
                option_path("scheduler"),
                f"{scheduler!r} is neither an address like tcp://HOST:8786 nor an existing "
                "scheduler file",
            )
        self.workers = workers
        self.scheduler = scheduler
        self.vectorize = vectorize
        self.precision = precision
        self.chunks_per_worker = chunks_per_worker
        self.connect_timeout = connect_timeout  # seconds to reach an existing scheduler
        self.reconnect_seconds = reconnect_seconds  # to wait for a lost scheduler to come back
        self._cluster: LocalCluster | None = None
        self._client: Client | None = None
        self._plugin_name: str | None = None
        self._plugin: EvaluationPlugin | None = None
        self._losses: dask_recovery.WorkerLosses | None = None
        self._quiet_when_lost = dask_recovery.LossNoiseFilter(
            lambda: self._client is None or dask_recovery.scheduler_lost(self._client)
        )

    @classmethod
    def from_config(cls, section: EvaluationConfig) -> DaskHandler:
        return cls(
            workers=section.worker_count,
            scheduler=section.scheduler,
            vectorize=section.vectorize,
            reconnect_seconds=section.reconnect_seconds,
            precision=section.precision,
        )

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        """Connect (or start a LocalCluster) once, then register this run's plugin on all workers.

        Calling ``start`` again keeps the cluster and replaces the plugin (new template/spec).
        """
        if self.vectorize == "jax":  # fail here, not on every worker
            worker_side.make_worker_state(template, spec, "jax", self.precision).close()
        elif self.vectorize:
            worker_side.check_vectorize(template, spec)  # fail or warn here, not on every worker
        if self._client is None:
            self._client = self._connect()
            self._losses = dask_recovery.WorkerLosses(self._client)
            self._quiet_when_lost.attach()
        self._unregister_plugin()
        self._plugin = EvaluationPlugin(template, spec, self.vectorize)
        self._register_plugin()

    def _register_plugin(self) -> None:
        """Register the run's plugin under a new name (every worker sets it up)."""
        assert self._client is not None and self._plugin is not None
        self._plugin_name = f"neuro_evolution-{uuid.uuid4().hex}"
        try:
            self._client.register_plugin(self._plugin, name=self._plugin_name)
        except BaseException:
            # The scheduler keeps a registered plugin even when a worker's setup failed; a
            # worker joining later would then fail to start. Remove it before reporting.
            self._unregister_plugin()
            raise

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

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """Results in submission order; tasks of a dead worker are rerun elsewhere by Dask; a
        lost scheduler is waited for (``reconnect_seconds``), then the batch is recomputed."""
        if self._client is None or self._plugin_name is None:
            raise RuntimeError("DaskHandler.start() was not called")
        genomes, seeds = check_batch(genomes, seeds)
        while True:
            client = self._client
            if dask_recovery.scheduler_lost(client):
                self._await_scheduler()
                continue
            try:
                return self._evaluate_once(client, genomes, seeds, context)
            except BaseException as error:
                if not dask_recovery.scheduler_lost(client, error):
                    raise
                self._await_scheduler()

    def _evaluate_once(
        self, client: Client, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext
    ) -> list[EvaluationResult]:
        slices = split_chunks(len(genomes), self._slots() * self.chunks_per_worker)
        futures = client.map(
            evaluate_chunk,
            [self._plugin_name] * len(slices),
            [genomes[s] for s in slices],
            [seeds[s] for s in slices],
            [context] * len(slices),
            pure=False,
        )
        try:
            chunks = client.gather(futures)
        except BaseException:
            if client.status == "running":
                client.cancel(futures)
            raise
        if self._losses is not None:
            for line in self._losses.take(future.key for future in futures):
                info(line)
        return [result for chunk in chunks for result in chunk]

    def _await_scheduler(self) -> None:
        """Wait up to ``reconnect_seconds`` for the lost scheduler, then set up again; a
        RuntimeError when it does not come back (or for a LocalCluster, which cannot)."""
        lost = self._client
        where = self.scheduler or "the LocalCluster"
        if self.scheduler is None or self.reconnect_seconds <= 0:
            raise RuntimeError(f"lost the Dask scheduler of {where} during a generation")
        info(
            f"dask: lost the scheduler at {where}; waiting up to {self.reconnect_seconds:g} s "
            f"({option_path('reconnect_seconds')}) for it to come back"
        )
        self._client = self._plugin_name = self._losses = None
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
        self._register_plugin()
        info(f"dask: reconnected to {where}; recomputing this batch")

    def _slots(self) -> int:
        """Task slots of the cluster: our worker count, or an existing cluster's total threads."""
        if self._cluster is not None:
            return self.workers
        assert self._client is not None  # called once connected
        return max(1, int(self._client.scheduler_info(n_workers=0).get("total_threads", 1)))

    def close(self) -> None:
        """Remove this run's plugin (closing worker envs), close the client and our cluster."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = self._losses = None
        self._quiet_when_lost.detach()
        if client is not None:
            if cluster is None:  # an external cluster outlives us: free the envs on its workers
                self._unregister_plugin(client)
            dask_recovery.WorkerLosses.stop(client)
            if dask_recovery.scheduler_lost(client):
                dask_recovery.close_quickly(client)
            else:
                client.close()
        self._plugin_name = None
        if cluster is not None:
            cluster.close()

    def _unregister_plugin(self, client: Client | None = None) -> None:
        client = client or self._client
        name, self._plugin_name = self._plugin_name, None
        if client is None or name is None or client.status != "running":
            return  # waiting for a lost scheduler would only delay the shutdown
        # The scheduler may be gone already, or the plugin may never have reached it.
        with contextlib.suppress(OSError, ValueError, TimeoutError):
            client.unregister_worker_plugin(name)

    def describe(self) -> str:
        """Where the cluster is, how many workers it has and the dashboard link."""
        where = "LocalCluster" if self._cluster is not None else f"cluster at {self.scheduler}"
        if self._client is None:
            size = f" of {self.workers} workers" if self.scheduler is None else ""
            return f"dask: {where}{size} (starts with the first generation)"
        workers = self._client.scheduler_info(n_workers=0).get("n_workers", "?")
        return f"dask: {where}, {workers} workers, dashboard {self._client.dashboard_link}"

    @property
    def client(self) -> Client | None:
        """The Dask client while started (for diagnostics)."""
        return self._client

    def connect(self) -> Client:
        """The client, connecting (or starting the LocalCluster) on first use, without a plugin:
        a sweep shares it among its runs, each registering a plugin of its own."""
        if self._client is None:
            self._client = self._connect()
        return self._client

    def slots(self) -> int:
        """Task slots of the connected cluster (see :meth:`connect`)."""
        return self._slots()
