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

A dead worker is **recovered**: the broken pool is replaced by a new one (same start method and
set-up) and the chunks that had not finished are computed again. Results are a pure function of
(genome, seeds, evaluation context), so they are identical. Each worker notes in shared memory
which genome it is evaluating, so the parent knows what a dead worker was running; a genome whose
evaluation killed its worker :data:`MAX_DEATHS` times (an env that segfaults on it) fails the
generation with a ``RuntimeError`` naming its index and seed. Each recovery prints one line.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor, wait
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
from neuro_evolution.evaluation.handlers import worker
from neuro_evolution.evaluation.handlers.base import (
    EvaluationHandler,
    check_batch,
    check_parallel_options,
    chunks_per_worker_for,
    split_chunks,
)
from neuro_evolution.evaluation.handlers.options import (
    START_METHODS,
    EvaluationConfig,
    option_path,
    register_handler,
)
from neuro_evolution.support.console import info
from neuro_evolution.support.errors import ConfigError

STARTUP_SECONDS = 120.0  # for every worker to set up (make its env) and check in
MAX_DEATHS = 3  # times one genome (or vectorized chunk) may kill its worker before it fails


@register_handler("mp")
class MultiprocessingHandler(EvaluationHandler):
    """Evaluates chunks of genomes in a persistent pool of ``workers`` processes."""

    def __init__(
        self,
        workers: int = 2,
        start_method: str = "forkserver",
        vectorize: bool | str = False,
        chunks_per_worker: int | None = None,
    ) -> None:
        if chunks_per_worker is None:
            chunks_per_worker = chunks_per_worker_for(vectorize)
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
        self._setup: tuple[BrainTemplate, RunnerSpec] | None = None
        self._progress: Any = None  # per worker: (pid, genome being evaluated), shared memory

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
            worker.check_vectorize(template, spec)  # fail or warn here, not in every worker
        self._setup = (template, spec)
        self._start_pool()

    def _start_pool(self) -> None:
        """A new pool for the set-up of :meth:`start`, every worker up before this returns."""
        assert self._setup is not None
        self._broken = None
        context = multiprocessing.get_context(self.start_method)
        started = context.Barrier(self.workers)
        self._progress = context.Array("q", 2 * self.workers, lock=False)
        self._executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=context,
            initializer=worker.init_process,
            initargs=(*self._setup, self.vectorize, started, self._progress),
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
        children = multiprocessing.active_children()
        self._processes = {p.pid: p for p in children if p.pid is not None and p.pid in pids}

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """Results in submission order; the chunks of a dead worker are computed again on a new
        pool (see the module docstring), a genome that keeps killing workers fails."""
        if self._broken is not None:
            raise RuntimeError(self._broken)
        if self._executor is None:
            raise RuntimeError("MultiprocessingHandler.start() was not called")
        genomes, seeds = check_batch(genomes, seeds)
        slices = split_chunks(len(genomes), self.workers * self.chunks_per_worker)
        chunks: dict[int, list[EvaluationResult]] = {}
        deaths: Counter[tuple[int, int]] = Counter()  # (first, last) genome index -> deaths
        while len(chunks) < len(slices):
            futures: dict[int, Future] = {}
            try:
                for index, part in enumerate(slices):
                    if index not in chunks:
                        futures[index] = self._executor.submit(
                            worker.evaluate_chunk, genomes[part], seeds[part], context, part.start
                        )
                for index, future in futures.items():
                    chunks[index] = future.result()
            except BrokenProcessPool:
                for index, future in futures.items():
                    if future.done() and not future.cancelled() and future.exception() is None:
                        chunks[index] = future.result()
                self._recover(deaths, seeds, slices, len(slices) - len(chunks))
            except BaseException:
                for future in futures.values():
                    future.cancel()
                raise
        return [result for index in range(len(slices)) for result in chunks[index]]

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

    # --- recovery from a dead worker ----------------------------------------------------------
    def _recover(
        self,
        deaths: Counter[tuple[int, int]],
        seeds: np.ndarray,
        slices: list[slice],
        unfinished: int,
    ) -> None:
        """Name what each dead worker was evaluating, fail a genome that keeps killing workers,
        else start a new pool (one console line)."""
        noted = self._noted_genomes()
        self._shutdown()
        dead = self._dead_exit_codes()
        lines = []
        for pid, code in sorted(dead.items()):
            first, last = _culprit(noted.get(pid, worker.NOT_EVALUATING), slices)
            what = _genomes_text(first, last, seeds)
            deaths[(first, last)] += 1
            if first >= 0 and deaths[(first, last)] >= MAX_DEATHS:
                self._broken = (
                    f"mp: {what} killed its worker process {MAX_DEATHS} times (last: pid {pid}, "
                    f"exit code {_exit_text(code)}); evaluating it again would kill the next one"
                )
                raise RuntimeError(self._broken)
            lines.append(f"worker pid {pid} died (exit code {_exit_text(code)}) while {what}")
        if sum(deaths.values()) >= MAX_DEATHS * len(slices):  # bounded even with no culprit
            self._broken = f"mp: the process pool broke {sum(deaths.values())} times in one batch"
            raise RuntimeError(self._broken)
        self._start_pool()
        died = "; ".join(lines) or "a worker died (pid unknown)"
        info(f"mp: {died}; a new pool recomputes the {unfinished} unfinished chunks")

    def _noted_genomes(self) -> dict[int, int]:
        """pid -> the genome index noted in its progress slot (see ``worker.evaluate_chunk``)."""
        if self._progress is None:
            return {}
        values = list(self._progress)
        return {values[i]: values[i + 1] for i in range(0, len(values), 2) if values[i]}

    def _dead_exit_codes(self) -> dict[int, int]:
        """pid -> exit code of the workers that died by themselves (after ``_shutdown``)."""
        # The executor SIGTERMs the surviving workers after a death: those are not the culprit.
        codes = {pid: p.exitcode for pid, p in self._processes.items() if p.exitcode}
        return {pid: c for pid, c in codes.items() if c != -signal.SIGTERM} or codes

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
        dead = self._dead_exit_codes()
        if dead:
            who = ", ".join(
                f"pid {pid} (exit code {_exit_text(c)})" for pid, c in sorted(dead.items())
            )
        else:
            who = "a worker (pid unknown)"
        return f"mp worker {who} died while {doing}"


def _culprit(noted: int, slices: list[slice]) -> tuple[int, int]:
    """(first, last) genome index a worker was evaluating from its noted value; (-1, -1) when
    it was idle or unknown."""
    if noted >= 0:
        return noted, noted
    if noted <= worker.UNKNOWN_GENOME:  # a vectorized chunk: the whole chunk is the suspect
        first = worker.UNKNOWN_GENOME - noted
        for part in slices:
            if part.start == first:
                return first, part.stop - 1
    return -1, -1


def _genomes_text(first: int, last: int, seeds: np.ndarray) -> str:
    """E.g. ``evaluating genome 17 (seed 123)``."""
    if first < 0:
        return "not evaluating a genome"
    if first == last:
        return f"evaluating genome {first} (seed {int(seeds[first])})"
    return f"evaluating genomes {first}..{last} (seeds {int(seeds[first])}..{int(seeds[last])})"


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"{code}, killed by {signal.Signals(-code).name}"
        except ValueError:
            return str(code)
    return str(code)
