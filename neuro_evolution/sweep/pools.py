"""The pools a sweep's runs share: mp, dask or sequential (see :class:`RunPool`).

* ``sequential``: evaluates a request when it is submitted, in this process.
* ``mp``: the mp handler's :class:`~neuro_evolution.evaluation.handlers.multiprocessing.ProcessPool`
  (a worker keeps a state per run; a dead worker is replaced and its chunks computed again).
* ``dask``: the Dask handler's cluster and worker plugin, one plugin per run; every file is
  written by this (the client's) process.
"""

from __future__ import annotations

import multiprocessing
import queue
import time
import uuid
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episode import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.handlers.base import EvaluationHandler, WorkerState
from neuro_evolution.evaluation.handlers.multiprocessing import ProcessPool
from neuro_evolution.evaluation.handlers.options import EvaluationConfig, option_path
from neuro_evolution.evaluation.handlers.pool import Chunk, RunPool
from neuro_evolution.evaluation.handlers.worker import TimedResults, vectorized_state_class
from neuro_evolution.support.errors import UserError

POOL_HANDLERS = ("mp", "dask", "sequential")
# Workers yield the CPU to the sweep's main process, which feeds them: on a machine with as many
# workers as cores, the main loop otherwise waits for a core while the workers' queues run dry.
WORKER_NICENESS = 5


class SequentialPool(RunPool):
    """Evaluates every request in this process when it is submitted."""

    def __init__(self, vectorize: bool | str = False) -> None:
        super().__init__(slots=1, vectorize=vectorize)
        self._states: dict[str, Any] = {}

    def _register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        if self.vectorize:
            self._states[run_id] = vectorized_state_class()(template, spec)
        else:
            self._states[run_id] = WorkerState(template, spec)

    def _unregister(self, run_id: str) -> None:
        state = self._states.pop(run_id, None)
        if state is not None:
            state.close()

    def _submit_chunk(self, chunk: Chunk) -> None:
        start = time.perf_counter()
        results = self._states[chunk.run_id].evaluate(chunk.genomes, chunk.seeds, chunk.context)
        self._chunk_done(chunk, (results, time.perf_counter() - start))

    def _wait_chunks(self, timeout: float | None) -> None:
        raise RuntimeError("a sequential pool has no chunk in flight")

    def close(self) -> None:
        for run_id in list(self._states):
            self.unregister(run_id)


class DaskPool(RunPool):
    """The Dask handler's cluster, one worker plugin per run, chunks as Dask tasks."""

    def __init__(self, section: EvaluationConfig) -> None:
        from neuro_evolution.evaluation.handlers.dask import DaskHandler

        self._handler = DaskHandler.from_config(section)
        self._client = self._handler.connect()
        super().__init__(slots=self._handler.slots(), vectorize=section.vectorize)
        self._plugins: dict[str, str] = {}
        self._futures: dict[Any, Chunk] = {}
        self._completed: queue.Queue = queue.Queue()  # futures done, fed by Dask's callbacks

    def _register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        from neuro_evolution.evaluation.handlers.dask import EvaluationPlugin

        name = f"neuro_evolution-sweep-{uuid.uuid4().hex}"
        self._client.register_plugin(EvaluationPlugin(template, spec, self.vectorize), name=name)
        self._plugins[run_id] = name

    def _unregister(self, run_id: str) -> None:
        name = self._plugins.pop(run_id, None)
        if name is not None and self._client.status == "running":
            self._client.unregister_worker_plugin(name)

    def _submit_chunk(self, chunk: Chunk) -> None:
        future = self._client.submit(
            evaluate_dask_chunk,
            self._plugins[chunk.run_id],
            chunk.genomes,
            chunk.seeds,
            chunk.context,
            pure=False,
        )
        self._futures[future] = chunk
        future.add_done_callback(self._completed.put)

    def _wait_chunks(self, timeout: float | None) -> None:
        try:
            done = [self._completed.get(timeout=timeout)]
        except queue.Empty:
            return
        while not self._completed.empty():
            done.append(self._completed.get_nowait())
        done = [future for future in done if future in self._futures]
        for future, timed in zip(done, self._client.gather(done)):
            self._chunk_done(self._futures.pop(future), timed)

    def close(self) -> None:
        if self._futures:
            self._client.cancel(list(self._futures))
            self._futures.clear()
        for run_id in list(self._plugins):
            self.unregister(run_id)
        self._handler.close()

    def describe(self) -> str:
        return self._handler.describe().replace("dask: ", "dask (shared by the runs): ", 1)


class PooledRun(EvaluationHandler):
    """One run's handler in a sweep: registers the run with the shared pool when it starts."""

    def __init__(self, pool: RunPool, run_id: str) -> None:
        self.pool = pool
        self.run_id = run_id

    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        self.pool.register(self.run_id, template, spec)

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        return self.pool.evaluate(self.run_id, genomes, seeds, context)

    def close(self) -> None:
        self.pool.unregister(self.run_id)

    def describe(self) -> str:
        return self.pool.describe()


def make_pool(section: EvaluationConfig, parallel_runs: int) -> RunPool:
    """The pool for a sweep's ``evaluation`` section (mp, dask or sequential)."""
    if section.handler not in POOL_HANDLERS:
        raise UserError(
            f"{option_path('handler')}: a sweep shares one {', '.join(POOL_HANDLERS)} pool among "
            f"its runs, not {section.handler!r} (for lockstep evaluation use --vectorize)"
        )
    if section.handler == "sequential":
        return SequentialPool(section.vectorize)
    if section.handler == "mp":
        if section.start_method not in multiprocessing.get_all_start_methods():
            raise UserError(
                f"{option_path('start_method')}: {section.start_method!r} is not available here"
            )
        return ProcessPool(
            section.worker_count,
            section.start_method,
            capacity=parallel_runs + 1,
            vectorize=section.vectorize,
            niceness=WORKER_NICENESS,
        )
    return DaskPool(section)


def evaluate_dask_chunk(
    plugin_name: str, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext
) -> TimedResults:
    """The Dask task: the Dask handler's chunk evaluation with the run's plugin, timed."""
    from neuro_evolution.evaluation.handlers import dask as dask_handler  # only Dask workers

    start = time.perf_counter()
    results = dask_handler.evaluate_chunk(plugin_name, genomes, seeds, context)
    return results, time.perf_counter() - start
