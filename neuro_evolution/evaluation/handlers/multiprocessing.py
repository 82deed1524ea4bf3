"""The multiprocessing handler: one persistent process pool for the whole run.

The pool is a :class:`concurrent.futures.ProcessPoolExecutor` on an explicit start method
(``fork``, ``forkserver`` -- the project default -- or ``spawn``), created in :meth:`start` and
never per generation. Its ``initializer`` receives the template and the RunnerSpec as plain
pickled data and builds each worker's :class:`WorkerState` (env made once, one reused brain).

Why an executor rather than ``multiprocessing.Pool``: when a worker dies (SIGKILL, a segfault in
an env, the OOM killer) ``Pool`` silently replaces it and the task it was running is lost, so
``AsyncResult.get()`` waits forever unless the caller polls private worker lists. The executor
notices the death at once (it waits on every worker's sentinel) and fails all pending futures
with ``BrokenProcessPool``. It also does not respawn workers forever when an initializer fails.
BrokenProcessPool names no worker, so each worker reports its pid in a warm-up task (a barrier
makes every worker run exactly one) and the parent keeps those workers' ``Process`` objects
(``multiprocessing.active_children()``) to name a dead one's pid and exit code.

A dead worker is **not retried**: results depend only on genome and seed, so an env that
segfaults would segfault again. :meth:`batch_evaluate` raises a ``RuntimeError`` naming the
dead worker's pid and exit code; the run can be resumed from its last checkpoint.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.errors import ConfigError
from neuro_evolution.evaluation.episode import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.handlers import worker
from neuro_evolution.evaluation.handlers.base import (
    EvaluationHandler,
    check_batch,
    check_parallel_options,
    split_chunks,
)
from neuro_evolution.evaluation.handlers.options import (
    START_METHODS,
    EvaluationConfig,
    option_path,
    register_handler,
)

STARTUP_SECONDS = 120.0  # for every worker to set up (make its env) and check in


@register_handler("mp")
class MultiprocessingHandler(EvaluationHandler):
    """Evaluates chunks of genomes in a persistent pool of ``workers`` processes."""

    def __init__(
        self,
        workers: int = 2,
        start_method: str = "forkserver",
        vectorize: bool = False,
        chunks_per_worker: int = 4,
    ) -> None:
        check_parallel_options(workers, chunks_per_worker)
        if vectorize == "jax":
            raise ConfigError(
                option_path("vectorize"),
                '"jax" is for Dask workers (one per GPU); on one machine use the jax handler',
            )
        if start_method not in multiprocessing.get_all_start_methods():
            available = ", ".join(
                m for m in START_METHODS if m in multiprocessing.get_all_start_methods()
            )
            raise ConfigError(
                option_path("start_method"),
                f"{start_method!r} is not available here; use one of {available}",
            )
        self.workers = workers
        self.start_method = start_method
        self.vectorize = vectorize
        self.chunks_per_worker = chunks_per_worker
        self._executor: ProcessPoolExecutor | None = None
        self._processes: dict[int, Any] = {}  # pid -> multiprocessing.Process of every worker
        self._broken: str | None = None

    @classmethod
    def from_config(cls, section: EvaluationConfig) -> MultiprocessingHandler:
        return cls(
            workers=section.worker_count,
            start_method=section.start_method,
            vectorize=section.vectorize,
        )

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        """Start the pool; every worker builds its state before this returns (errors surface here).

        Calling ``start`` again (a new template or spec) replaces the pool.
        """
        self.close()
        if self.vectorize:
            worker.vectorized_state_class()  # fail here, not in every worker
        self._broken = None
        context = multiprocessing.get_context(self.start_method)
        started = context.Barrier(self.workers)
        self._executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=context,
            initializer=worker.init_process,
            initargs=(template, spec, self.vectorize, started),
        )
        # One warm-up task per worker (they wait for each other) starts every process now,
        # names every worker's pid and re-raises an initializer error before a broken barrier.
        ready = [
            self._executor.submit(worker.process_ready, STARTUP_SECONDS)
            for _ in range(self.workers)
        ]
        wait(ready)
        ready.sort(key=lambda f: isinstance(f.exception(), threading.BrokenBarrierError))
        pids = set(self._collect(ready, "starting up"))
        self._processes = {p.pid: p for p in multiprocessing.active_children() if p.pid in pids}

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """Results in submission order; a dead worker raises ``RuntimeError`` (no retry)."""
        if self._broken is not None:
            raise RuntimeError(self._broken)
        if self._executor is None:
            raise RuntimeError("MultiprocessingHandler.start() was not called")
        genomes, seeds = check_batch(genomes, seeds)
        slices = split_chunks(len(genomes), self.workers * self.chunks_per_worker)
        futures = [
            self._executor.submit(worker.evaluate_chunk, genomes[s], seeds[s], context)
            for s in slices
        ]
        results: list[EvaluationResult] = []
        for chunk in self._collect(futures, "evaluating a generation"):
            results.extend(chunk)
        return results

    def close(self) -> None:
        """Shut the pool down and wait for every worker to exit (no zombies left behind)."""
        self._shutdown()
        self._processes = {}

    def describe(self) -> str:
        """E.g. ``mp: 2 worker processes (forkserver)``."""
        mode = ", vectorized" if self.vectorize else ""
        return f"mp: {self.workers} worker processes ({self.start_method}{mode})"

    @property
    def worker_pids(self) -> list[int]:
        """Pids of the pool's live worker processes."""
        return sorted(pid for pid, p in self._processes.items() if p.exitcode is None)

    # --- internals ---------------------------------------------------------------------------

    def _shutdown(self) -> None:
        """Shut the executor down and join every worker it ever started."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        for process in self._processes.values():
            process.join(timeout=5)

    def _collect(self, futures: list[Future], doing: str) -> list[Any]:
        try:
            return [future.result() for future in futures]
        except BrokenProcessPool:
            self._broken = self._describe_death(doing)
            raise RuntimeError(self._broken) from None
        except BaseException:
            for future in futures:
                future.cancel()
            raise

    def _describe_death(self, doing: str) -> str:
        """Shut the broken pool down, then name the worker(s) that died."""
        self._shutdown()
        # The executor SIGTERMs the surviving workers after a death: those are not the culprit.
        codes = {pid: p.exitcode for pid, p in self._processes.items() if p.exitcode}
        dead = {pid: c for pid, c in codes.items() if c != -signal.SIGTERM} or codes
        if dead:
            who = ", ".join(
                f"pid {pid} (exit code {_exit_text(c)})" for pid, c in sorted(dead.items())
            )
        else:
            who = "a worker (pid unknown)"
        return (
            f"mp worker {who} died while {doing}; the process pool is broken and this generation "
            "failed (not retried). The run can be resumed from its last checkpoint."
        )


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"{code}, killed by {signal.Signals(-code).name}"
        except ValueError:
            return str(code)
    return str(code)
