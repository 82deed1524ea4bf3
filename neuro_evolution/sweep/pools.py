"""Evaluation workers shared by the runs of a sweep: one pool or cluster, chunks of every run.

A run registers its template and RunnerSpec when it starts (:meth:`RunPool.register`), then
submits its generations' evaluation requests (:meth:`RunPool.submit`), each split into chunks
that queue up with the chunks of the other runs. :meth:`RunPool.wait` returns the requests whose
chunks have all come back, results in submission order, as soon as they complete. So while one
run waits for the slowest episode of its generation, the workers go on with other runs' chunks.

Results are those of the handler of the same name: the worker code is the same
(:class:`~neuro_evolution.evaluation.handlers.base.WorkerState`, or the vectorized state), and
a result depends only on (template, genome, seed, context), not on chunking or worker.

* ``sequential``: evaluates a request when it is submitted, in this process.
* ``mp``: a process pool; each worker keeps a state per run (see :mod:`.workers`).
* ``dask``: the Dask handler's cluster and worker plugin, one plugin per run; every file is
  written by this (the client's) process.
"""

from __future__ import annotations

import dataclasses
import itertools
import multiprocessing
import queue
import time
import uuid
from abc import ABC, abstractmethod
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episode import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.handlers.base import (
    EvaluationHandler,
    WorkerState,
    check_batch,
    sigint_ignored,
    split_chunks,
)
from neuro_evolution.evaluation.handlers.options import EvaluationConfig, option_path
from neuro_evolution.evaluation.handlers.worker import vectorized_state_class
from neuro_evolution.run.experiment import EvaluationRequest
from neuro_evolution.support.errors import UserError
from neuro_evolution.sweep import workers

POOL_HANDLERS = ("mp", "dask", "sequential")


@dataclasses.dataclass
class _Pending:
    """A submitted request: its chunks' results as they come back."""

    run_id: str
    slices: list[slice]
    chunks: list[list[EvaluationResult] | None]

    @property
    def complete(self) -> bool:
        return all(chunk is not None for chunk in self.chunks)

    def results(self) -> list[EvaluationResult]:
        return [result for chunk in self.chunks for result in chunk or ()]


class RunPool(ABC):
    """Workers shared by many runs; requests of any run, completions as they arrive.

    How many chunks a request goes out in: :meth:`request_chunks`.
    """

    def __init__(self, slots: int, vectorize: bool | str = False) -> None:
        if vectorize:
            vectorized_state_class()  # fail here, not in every worker
        self.slots = slots
        self.vectorize = vectorize
        self.busy_seconds = 0.0  # summed over workers, measured inside them
        self._runs: set[str] = set()  # registered, not yet unregistered
        self._tickets = itertools.count()
        self._pending: dict[int, _Pending] = {}
        self._done: dict[int, list[EvaluationResult]] = {}

    def register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        """Make the run known to every worker (before its first request)."""
        self._register(run_id, template, spec)
        self._runs.add(run_id)

    def unregister(self, run_id: str) -> None:
        """Forget the run (its workers' states may go)."""
        self._runs.discard(run_id)
        self._unregister(run_id)

    def request_chunks(self) -> int:
        """Chunks of one request. Per-individual loops: one per slot, as the other runs' chunks
        fill the slots while a run waits (8 CartPole runs, 2 workers: busy 88% with 1 chunk per
        slot, 79% with 2, 74% with 4, for the same wall time). Lockstep: a chunk takes as long as
        its longest episode however many lanes it has, so each request stays whole while enough
        runs are open to fill the slots, and is split only to fill them (the last runs)."""
        if self.vectorize:
            return max(1, -(-self.slots // max(1, len(self._runs))))
        return self.slots

    @abstractmethod
    def _register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        """The pool's own registration of a run."""

    @abstractmethod
    def _unregister(self, run_id: str) -> None:
        """The pool's own forgetting of a run."""

    @abstractmethod
    def _submit_chunk(
        self, ticket: int, index: int, run_id: str, genomes: np.ndarray, seeds: np.ndarray,
        context: EvaluationContext,
    ) -> None:  # fmt: skip
        """Start evaluating one chunk; its results reach :meth:`_chunk_done` later."""

    @abstractmethod
    def _wait_chunks(self, timeout: float | None) -> None:
        """Block until at least one chunk came back (or ``timeout``) and record it."""

    @abstractmethod
    def close(self) -> None:
        """Stop the workers."""

    def describe(self) -> str:
        return f"{type(self).__name__}: {self.slots} slots"

    def submit(self, run_id: str, request: EvaluationRequest) -> int:
        """Queue ``request`` of ``run_id`` in chunks; returns its ticket for :meth:`wait`."""
        genomes, seeds = check_batch(request.genomes, request.seeds)
        ticket = next(self._tickets)
        slices = split_chunks(len(genomes), self.request_chunks())
        self._pending[ticket] = _Pending(run_id, slices, [None] * len(slices))
        if not slices:
            self._finish(ticket)
        for index, part in enumerate(slices):
            self._submit_chunk(ticket, index, run_id, genomes[part], seeds[part], request.context)
        return ticket

    def _chunk_done(self, ticket: int, index: int, timed: workers.TimedResults) -> None:
        results, seconds = timed
        self.busy_seconds += seconds
        pending = self._pending[ticket]
        pending.chunks[index] = results
        if pending.complete:
            self._finish(ticket)

    def _finish(self, ticket: int) -> None:
        self._done[ticket] = self._pending.pop(ticket).results()

    def wait(self, timeout: float | None = None) -> list[tuple[int, list[EvaluationResult]]]:
        """(ticket, results) of every request completed since the last call; waits up to
        ``timeout`` seconds for the first one when none is complete yet."""
        if not self._done and self._pending:
            self._wait_chunks(timeout)
        done, self._done = self._done, {}
        return sorted(done.items())

    def evaluate(self, run_id: str, request: EvaluationRequest) -> list[EvaluationResult]:
        """Submit ``request`` and wait for it (other requests' results stay for :meth:`wait`)."""
        ticket = self.submit(run_id, request)
        while ticket not in self._done:
            self._wait_chunks(None)
        return self._done.pop(ticket)


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

    def _submit_chunk(self, ticket, index, run_id, genomes, seeds, context) -> None:
        start = time.perf_counter()
        results = self._states[run_id].evaluate(genomes, seeds, context)
        self._chunk_done(ticket, index, (results, time.perf_counter() - start))

    def _wait_chunks(self, timeout: float | None) -> None:
        raise RuntimeError("a sequential pool has no chunk in flight")

    def close(self) -> None:
        for run_id in list(self._states):
            self.unregister(run_id)


class ProcessPool(RunPool):
    """A process pool whose workers keep one state per run (see :mod:`.workers`)."""

    def __init__(
        self, workers_count: int, start_method: str, capacity: int, vectorize: bool | str = False
    ) -> None:
        super().__init__(slots=workers_count, vectorize=vectorize)
        self._setups: dict[str, workers.RunSetup] = {}
        self._futures: dict[Future, tuple[int, int, str, np.ndarray, np.ndarray, Any]] = {}
        with sigint_ignored():
            self._executor = ProcessPoolExecutor(
                max_workers=workers_count,
                mp_context=multiprocessing.get_context(start_method),
                initializer=workers.init_sweep_process,
                initargs=(capacity,),
            )
            # start every process now (forkserver/spawn take a moment), not at the first chunk
            for future in [self._executor.submit(workers.warm_up) for _ in range(workers_count)]:
                future.result()
        self.start_method = start_method

    def _register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        self._setups[run_id] = (template, spec, self.vectorize)

    def _unregister(self, run_id: str) -> None:
        self._setups.pop(run_id, None)

    def _submit_chunk(self, ticket, index, run_id, genomes, seeds, context, setup=None) -> None:
        future = self._executor.submit(
            workers.evaluate_run_chunk, run_id, setup, genomes, seeds, context
        )
        self._futures[future] = (ticket, index, run_id, genomes, seeds, context)

    def _wait_chunks(self, timeout: float | None) -> None:
        done, _ = wait_futures(list(self._futures), timeout=timeout, return_when=FIRST_COMPLETED)
        for future in done:
            ticket, index, run_id, genomes, seeds, context = self._futures.pop(future)
            try:
                timed = future.result()
            except workers.RunStateMissing:
                setup = self._setups[run_id]
                self._submit_chunk(ticket, index, run_id, genomes, seeds, context, setup=setup)
                continue
            except BrokenProcessPool:
                raise RuntimeError(
                    "an mp worker of the sweep died; the pool is broken. Every run keeps its "
                    "last checkpoint: run the same sweep command again to continue"
                ) from None
            self._chunk_done(ticket, index, timed)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._futures.clear()

    def describe(self) -> str:
        mode = ", vectorized" if self.vectorize else ""
        return f"mp: {self.slots} worker processes shared by the runs ({self.start_method}{mode})"


class DaskPool(RunPool):
    """The Dask handler's cluster, one worker plugin per run, chunks as Dask tasks."""

    def __init__(self, section: EvaluationConfig) -> None:
        from neuro_evolution.evaluation.handlers.dask import DaskHandler

        self._handler = DaskHandler.from_config(section)
        self._client = self._handler.connect()
        super().__init__(slots=self._handler.slots(), vectorize=section.vectorize)
        self._plugins: dict[str, str] = {}
        self._futures: dict[Any, tuple[int, int]] = {}
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

    def _submit_chunk(self, ticket, index, run_id, genomes, seeds, context) -> None:
        future = self._client.submit(
            workers.evaluate_dask_chunk,
            self._plugins[run_id],
            genomes,
            seeds,
            context,
            pure=False,
        )
        self._futures[future] = (ticket, index)
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
            ticket, index = self._futures.pop(future)
            self._chunk_done(ticket, index, timed)

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
        return self.pool.evaluate(self.run_id, EvaluationRequest(genomes, seeds, context))

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
            section.worker_count, section.start_method, parallel_runs + 1, section.vectorize
        )
    return DaskPool(section)
