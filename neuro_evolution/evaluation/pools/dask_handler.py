"""The Dask handler: evaluate chunks of genomes on a LocalCluster or an existing Dask cluster.

The handler is a :class:`~neuro_evolution.evaluation.pools.dask_pool.DaskPool` with one run
registered, the pool a sweep's runs share: one Dask path for both. Without a scheduler address
it starts a ``LocalCluster`` of ``workers`` single-threaded worker processes on 127.0.0.1; with
``scheduler="tcp://HOST:PORT"`` (or the path of a scheduler file) it connects to a running
cluster. Template and RunnerSpec travel once per run inside a worker plugin
(:mod:`~neuro_evolution.evaluation.pools.dask_plugin`); tasks carry only genome chunks and
seeds.

A worker that dies mid-generation is handled by Dask (its tasks rerun elsewhere, one console
line); a lost scheduler of an existing cluster is waited for up to ``reconnect_seconds``, then
the chunks that did not come back are computed again (identical results), else the generation
fails with one line. The rules in full: :mod:`~neuro_evolution.evaluation.pools.dask_pool`.
"""

from __future__ import annotations

import os

from distributed import Client

from neuro_evolution.evaluation.pools.base import (
    check_parallel_options,
    chunks_per_worker_for,
    register_handler,
)
from neuro_evolution.evaluation.pools.dask_pool import DaskPool
from neuro_evolution.evaluation.pools.options import EvaluationConfig, option_path
from neuro_evolution.evaluation.pools.pool_handler import PoolHandler
from neuro_evolution.evaluation.pools.run_pool import RUN
from neuro_evolution.support.errors import ConfigError


@register_handler("dask")
class DaskHandler(PoolHandler[DaskPool]):
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
        portable_kernels: bool = False,
    ) -> None:
        super().__init__()
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
        self.portable_kernels = portable_kernels  # workers with other kernels are refused
        self.chunks_per_worker = chunks_per_worker
        self.connect_timeout = connect_timeout  # seconds to reach an existing scheduler
        self.reconnect_seconds = reconnect_seconds  # to wait for a lost scheduler to come back

    @classmethod
    def from_config(cls, section: EvaluationConfig) -> DaskHandler:
        return cls(
            workers=section.worker_count,
            scheduler=section.scheduler,
            vectorize=section.vectorize,
            reconnect_seconds=section.reconnect_seconds,
            precision=section.precision,
            portable_kernels=section.portable_kernels,
        )

    def new_pool(self, runs: int = 1) -> DaskPool:
        """The pool, connected (or its LocalCluster started); shared by a sweep's runs (``runs``
        > 1), it cuts one chunk per slot, as the other runs' chunks fill the slots."""
        return DaskPool(
            self.workers,
            self.scheduler,
            self.vectorize,
            chunks_per_slot=self.chunks_per_worker if runs == 1 else 1,
            connect_timeout=self.connect_timeout,
            reconnect_seconds=self.reconnect_seconds,
            precision=self.precision,
            portable_kernels=self.portable_kernels,
        )

    def describe(self) -> str:
        """Where the cluster is, how many workers it has and the dashboard link."""
        if self.pool is None:
            where = "LocalCluster" if self.scheduler is None else f"cluster at {self.scheduler}"
            size = f" of {self.workers} workers" if self.scheduler is None else ""
            return f"dask: {where}{size} (starts with the first generation)"
        return self.pool.describe()

    @property
    def client(self) -> Client | None:
        """The Dask client while started (for diagnostics)."""
        return None if self.pool is None else self.pool.client

    @property
    def plugin_name(self) -> str | None:
        """The name of the run's plugin on the workers while started."""
        return None if self.pool is None else self.pool.plugin_name(RUN)
