"""The Dask handler: evaluate chunks of genomes on a LocalCluster or an existing Dask cluster.

Without a scheduler address the handler starts a ``LocalCluster`` of ``workers`` single-threaded
worker processes on 127.0.0.1; with ``scheduler="tcp://HOST:PORT"`` (or the path of a scheduler
file) it connects to a running cluster. Template and RunnerSpec travel once per run inside an
:class:`EvaluationPlugin`, which every worker -- also one that joins or restarts later -- sets up
with its own env and brain; tasks carry only genome chunks and seeds.

A worker that dies mid-generation is handled by Dask: its tasks are rescheduled on the other
workers (a LocalCluster's nanny also restarts it) and the generation completes with identical
results, because a result depends only on genome and seed. Dask gives up with ``KilledWorker``
when the same task has been on ``distributed.scheduler.allowed-failures`` (default 3) dying
workers. If every worker is gone, ``batch_evaluate`` waits until one joins.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid

import numpy as np
from distributed import Client, LocalCluster, get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.errors import ConfigError, HandlerStartError
from neuro_evolution.evaluation.episode import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.handlers import worker as worker_side
from neuro_evolution.evaluation.handlers.base import (
    EvaluationHandler,
    check_batch,
    check_parallel_options,
    sigint_ignored,
    split_chunks,
)
from neuro_evolution.evaluation.handlers.options import (
    EvaluationConfig,
    option_path,
    register_handler,
)

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
        chunks_per_worker: int = 4,
        connect_timeout: float = 30.0,
        precision: str = "float32",
    ) -> None:
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
        self._cluster: LocalCluster | None = None
        self._client: Client | None = None
        self._plugin_name: str | None = None

    @classmethod
    def from_config(cls, section: EvaluationConfig) -> DaskHandler:
        return cls(
            workers=section.worker_count,
            scheduler=section.scheduler,
            vectorize=section.vectorize,
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
            worker_side.vectorized_state_class()  # fail here, not on every worker
        if self._client is None:
            self._client = self._connect()
        self._unregister_plugin()
        self._plugin_name = f"neuro_evolution-{uuid.uuid4().hex}"
        plugin = EvaluationPlugin(template, spec, self.vectorize, self.precision)
        try:
            self._client.register_plugin(plugin, name=self._plugin_name)
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
                )
            return Client(self._cluster, set_as_default=False)
        is_file = "://" not in self.scheduler
        try:
            client = Client(
                None if is_file else self.scheduler,
                scheduler_file=self.scheduler if is_file else None,
                timeout=self.connect_timeout,
                set_as_default=False,
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

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """Results in submission order; tasks of a dead worker are rerun elsewhere by Dask."""
        client, name = self._client, self._plugin_name
        if client is None or name is None:
            raise RuntimeError("DaskHandler.start() was not called")
        genomes, seeds = check_batch(genomes, seeds)
        slices = split_chunks(len(genomes), self._slots() * self.chunks_per_worker)
        futures = client.map(
            evaluate_chunk,
            [name] * len(slices),
            [genomes[s] for s in slices],
            [seeds[s] for s in slices],
            [context] * len(slices),
            pure=False,
        )
        try:
            chunks = client.gather(futures)
        except BaseException as error:
            if client.status != "running":
                raise RuntimeError(
                    f"lost the connection to the Dask scheduler ({client.status}) during a "
                    "generation; this generation failed. Restart the cluster and resume the run "
                    "from its last checkpoint."
                ) from error
            client.cancel(futures)
            raise
        return [result for chunk in chunks for result in chunk]

    def _slots(self) -> int:
        """Task slots of the cluster: our worker count, or an existing cluster's total threads."""
        if self._cluster is not None:
            return self.workers
        return max(1, int(self._client.scheduler_info(n_workers=0).get("total_threads", 1)))

    def close(self) -> None:
        """Remove this run's plugin (closing worker envs), close the client and our cluster."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            if cluster is None:  # an external cluster outlives us: free the envs on its workers
                self._unregister_plugin(client)
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
