"""The mp pool, shared by the runs of a sweep, and the mp handler: one run on a pool of its own.

:class:`ProcessPool` is a :class:`concurrent.futures.ProcessPoolExecutor` on an explicit start
method (``fork``, ``forkserver`` -- the project default -- or ``spawn``), started once and never
per generation. Its workers keep one state per run (see :mod:`.worker`); the runs given at
construction are built by the ``initializer`` in every worker before the pool is up, so their
errors surface there. The mp handler is the pool with its one run: a single run is a sweep of
one (:mod:`.pool_handler`).

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
request with a ``RuntimeError`` naming its index and seed (and run, in a sweep). Each recovery
prints one line.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import RunnerSpec
from neuro_evolution.evaluation.pools import worker
from neuro_evolution.evaluation.pools.base import (
    check_parallel_options,
    chunks_per_worker_for,
    register_handler,
    sigint_ignored,
)
from neuro_evolution.evaluation.pools.options import (
    START_METHODS,
    EvaluationConfig,
    option_path,
)
from neuro_evolution.evaluation.pools.pool_handler import PoolHandler
from neuro_evolution.evaluation.pools.run_pool import RUN, Chunk, RunPool
from neuro_evolution.support.console import info
from neuro_evolution.support.errors import ConfigError

STARTUP_SECONDS = 120.0  # for every worker to set up (make its envs) and check in
MAX_DEATHS = 3  # times one genome (or vectorized chunk) may kill its worker before it fails
# A sweep's workers yield the CPU to its main process, which feeds them: on a machine with as
# many workers as cores, the main loop otherwise waits for a core while the workers' queues run dry.
WORKER_NICENESS = 5


class ProcessPool(RunPool):
    """A process pool whose workers keep a state per run; a dead worker is replaced and the
    chunks it took down are computed again (see the module docstring).

    ``runs`` are registered and built in every worker at every start of the pool; the others
    reach a worker with its first chunk of them. A worker keeps up to ``capacity`` run states
    and runs at ``niceness``.
    """

    def __init__(
        self,
        workers_count: int,
        start_method: str,
        capacity: int = 1,
        vectorize: bool | str = False,
        *,
        chunks_per_slot: int = 1,
        runs: dict[str, tuple[BrainTemplate, RunnerSpec]] | None = None,
        niceness: int = 0,
    ) -> None:
        if vectorize:
            worker.vectorized_state_class()  # fail here, not in every worker
        super().__init__(workers_count, vectorize, chunks_per_slot)
        self.start_method = start_method
        self._capacity = capacity
        self._niceness = niceness
        self._setups: dict[str, worker.RunSetup] = {}
        for run_id, (template, spec) in (runs or {}).items():
            self.register(run_id, template, spec)
        self._preload = dict(self._setups)
        self._in_flight: dict[Future, Chunk] = {}
        self._deaths: Counter[tuple[int, int, int]] = Counter()  # (ticket, first, last) -> deaths
        self._executor: ProcessPoolExecutor | None = None
        self._processes: dict[int, Any] = {}  # pid -> multiprocessing.Process of every worker
        self._progress: Any = None  # per worker: (pid, chunk number, genome offset)
        self._broken: str | None = None
        try:
            self._start_pool()
        except BaseException:
            self.close()
            raise

    # --- the RunPool side ---------------------------------------------------------------------
    def _register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        self._setups[run_id] = (template, spec, self.vectorize)

    def _unregister(self, run_id: str) -> None:
        self._setups.pop(run_id, None)

    def _submit_chunk(self, chunk: Chunk, setup: worker.RunSetup | None = None) -> None:
        if self._broken is not None:
            raise RuntimeError(self._broken)
        if self._executor is None:
            raise RuntimeError("the process pool is closed")
        args = (chunk.number, chunk.run_id, setup, chunk.genomes, chunk.seeds, chunk.context)
        try:
            future = self._executor.submit(worker.evaluate_chunk, *args)
        except BrokenProcessPool as error:  # a worker died while idle: the next wait recovers
            future = Future()
            future.set_exception(error)
        self._in_flight[future] = chunk

    def _wait_chunks(self, timeout: float | None) -> None:
        if self._broken is not None:
            raise RuntimeError(self._broken)
        done, _ = wait(list(self._in_flight), timeout=timeout, return_when=FIRST_COMPLETED)
        if any(_broke(future) for future in done):
            self._recover()
            return
        for future in done:
            self._collect(future)

    def _collect(self, future: Future) -> None:
        """Hand a finished chunk's results on; send it again with its run's setup to a worker
        that lacked the run's state."""
        chunk = self._in_flight.pop(future)
        try:
            timed = future.result()
        except worker.RunStateMissing:
            self._submit_chunk(chunk, self._setups[chunk.run_id])
            return
        except BaseException:
            self._cancel(chunk.ticket)
            raise
        self._chunk_done(chunk, timed)

    def _cancel(self, ticket: int) -> None:
        super()._cancel(ticket)
        for future, chunk in list(self._in_flight.items()):
            if chunk.ticket == ticket:
                future.cancel()
                del self._in_flight[future]

    def close(self) -> None:
        """Shut the pool down and wait for every worker to exit (no zombies left behind)."""
        self._shutdown()
        self._in_flight.clear()
        self._processes = {}

    def describe(self) -> str:
        mode = ", vectorized" if self.vectorize else ""
        return f"mp: {self.slots} worker processes shared by the runs ({self.start_method}{mode})"

    @property
    def worker_pids(self) -> list[int]:
        """Pids of the pool's live worker processes."""
        return sorted(pid for pid, p in self._processes.items() if p.exitcode is None)

    @property
    def evaluating_pids(self) -> list[int]:
        """Pids of the live workers evaluating a genome now (as noted in their progress slots)."""
        noted = self._noted_chunks()
        return [pid for pid in self.worker_pids if pid in noted and noted[pid][1] >= 0]

    # --- starting -----------------------------------------------------------------------------
    def _start_pool(self) -> None:
        """A new executor, every worker up (its preloaded runs built) before this returns."""
        context = multiprocessing.get_context(self.start_method)
        started = context.Barrier(self.slots)
        self._progress = context.Array("q", worker.PROGRESS_FIELDS * self.slots, lock=False)
        initargs = (self._preload, self._capacity, self._niceness, started, self._progress)
        with sigint_ignored():  # processes start here, and ignore Ctrl-C from their first moment
            self._executor = ProcessPoolExecutor(
                max_workers=self.slots,
                mp_context=context,
                initializer=worker.init_process,
                initargs=initargs,
            )
            # One warm-up task per worker (they wait for each other) starts every process now,
            # names every worker's pid and re-raises an initializer error before a broken barrier.
            ready = [
                self._executor.submit(worker.process_ready, STARTUP_SECONDS)
                for _ in range(self.slots)
            ]
        wait(ready)
        ready.sort(key=lambda f: isinstance(f.exception(), threading.BrokenBarrierError))
        try:
            pids = {future.result() for future in ready}
        except BrokenProcessPool:
            self._broken = self._describe_death("starting up")
            raise RuntimeError(self._broken) from None
        self._processes = {p.pid: p for p in multiprocessing.active_children() if p.pid in pids}

    # --- recovery from a dead worker ----------------------------------------------------------
    def _recover(self) -> None:
        """Name what each dead worker was evaluating, fail a genome that keeps killing workers,
        else start a new pool: the chunks that came back are kept, the lost ones sent again
        (one console line)."""
        noted = self._noted_chunks()
        self._shutdown()  # every future is done now: with its result, or broken
        self._deaths = Counter({k: n for k, n in self._deaths.items() if k[0] in self._pending})
        lines = [self._blame(pid, code, noted.get(pid)) for pid, code in self._dead_exit_codes()]
        for ticket, pending in self._pending.items():  # bounded even with no culprit
            breaks = sum(n for key, n in self._deaths.items() if key[0] == ticket)
            if breaks >= MAX_DEATHS * len(pending.chunks):
                self._broken = f"mp: the process pool broke {breaks} times in one batch"
                raise RuntimeError(self._broken)
        in_flight, self._in_flight = self._in_flight, {}
        self._start_pool()
        died = "; ".join(lines) or "a worker died (pid unknown)"
        lost = sum(map(_broke, in_flight))
        info(f"mp: {died}; a new pool recomputes the {lost} unfinished chunks")
        for future, chunk in in_flight.items():
            if _broke(future):
                self._submit_chunk(chunk)
            else:
                self._in_flight[future] = chunk
                self._collect(future)

    def _blame(self, pid: int, code: int, noted: tuple[int, int] | None) -> str:
        """Count a death against the genomes the worker was evaluating (against every open
        request when it was idle): the recovery line's part for it, or the error when they
        killed their worker MAX_DEATHS times."""
        chunk, first, last = self._culprit(noted)
        if chunk is None:
            what = "not evaluating a genome"
            for ticket in self._pending:
                self._deaths[(ticket, -1, -1)] += 1
        else:
            what = _genomes_text(chunk, first, last)
            self._deaths[(chunk.ticket, first, last)] += 1
            if self._deaths[(chunk.ticket, first, last)] >= MAX_DEATHS:
                self._broken = (
                    f"mp: {what} killed its worker process {MAX_DEATHS} times (last: pid {pid}, "
                    f"exit code {_exit_text(code)}); evaluating it again would kill the next one"
                )
                raise RuntimeError(self._broken)
        return f"worker pid {pid} died (exit code {_exit_text(code)}) while {what}"

    def _culprit(self, noted: tuple[int, int] | None) -> tuple[Chunk | None, int, int]:
        """(chunk, first, last genome index in its request) a worker was evaluating, from what
        it noted; (None, -1, -1) when it was idle or unknown."""
        if noted is None or noted[1] == worker.NOT_EVALUATING:
            return None, -1, -1
        number, offset = noted
        chunk = next((c for c in self._in_flight.values() if c.number == number), None)
        if chunk is None:
            return None, -1, -1
        if offset == worker.WHOLE_CHUNK:  # a vectorized chunk: the whole chunk is the suspect
            return chunk, chunk.first, chunk.first + len(chunk.genomes) - 1
        return chunk, chunk.first + offset, chunk.first + offset

    def _noted_chunks(self) -> dict[int, tuple[int, int]]:
        """pid -> (chunk number, genome offset) noted in its progress slot."""
        values, step = list(self._progress or ()), worker.PROGRESS_FIELDS
        return {values[i]: (values[i + 1], values[i + 2]) for i in range(0, len(values), step)}

    def _dead_exit_codes(self) -> list[tuple[int, int]]:
        """(pid, exit code) of the workers that died by themselves (after ``_shutdown``)."""
        # The executor SIGTERMs the surviving workers after a death: those are not the culprit.
        codes = {pid: p.exitcode for pid, p in self._processes.items() if p.exitcode}
        dead = {pid: c for pid, c in codes.items() if c != -signal.SIGTERM} or codes
        return sorted(dead.items())

    def _describe_death(self, doing: str) -> str:
        """Shut the broken pool down, then name the worker(s) that died."""
        self._shutdown()
        dead = self._dead_exit_codes()
        if dead:
            who = ", ".join(f"pid {pid} (exit code {_exit_text(c)})" for pid, c in dead)
        else:
            who = "a worker (pid unknown)"
        return f"mp worker {who} died while {doing}"

    def _shutdown(self) -> None:
        """Shut the executor down and join every worker it ever started."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        for process in self._processes.values():
            process.join(timeout=5)


@register_handler("mp")
class MultiprocessingHandler(PoolHandler[ProcessPool]):
    """Evaluates chunks of genomes in a persistent pool of ``workers`` processes: a
    :class:`ProcessPool` with one run."""

    def __init__(
        self,
        workers: int = 2,
        start_method: str = "forkserver",
        vectorize: bool | str = False,
        chunks_per_worker: int | None = None,
    ) -> None:
        super().__init__()
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

    @classmethod
    def from_config(cls, section: EvaluationConfig) -> MultiprocessingHandler:
        return cls(
            workers=section.worker_count,
            start_method=section.start_method,
            vectorize=section.vectorize,
        )

    def new_pool(
        self, runs: int = 1, preload: dict[str, tuple[BrainTemplate, RunnerSpec]] | None = None
    ) -> ProcessPool:
        """A pool for ``runs`` open runs. Shared by a sweep's runs (``runs`` > 1), it cuts one
        chunk per worker (the other runs' chunks fill the workers while a run waits), keeps a
        state per open run and one more, and its workers run at :data:`WORKER_NICENESS`."""
        shared = runs > 1
        return ProcessPool(
            self.workers,
            self.start_method,
            capacity=runs + 1 if shared else 1,
            vectorize=self.vectorize,
            chunks_per_slot=1 if shared else self.chunks_per_worker,
            runs=preload,
            niceness=WORKER_NICENESS if shared else 0,
        )

    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        """Start the pool with the run; every worker builds its state before this returns (errors
        surface here). Calling ``start`` again (a new template or spec) replaces the pool. What
        needs no worker was checked before, by the run (:mod:`neuro_evolution.run.start_up`)."""
        self.close()
        self._pool = self.new_pool(preload={RUN: (template, spec)})

    def describe(self) -> str:
        """E.g. ``mp: 2 worker processes (forkserver)``."""
        mode = ", vectorized" if self.vectorize else ""
        return f"mp: {self.workers} worker processes ({self.start_method}{mode})"

    @property
    def worker_pids(self) -> list[int]:
        """Pids of the pool's live worker processes."""
        return [] if self._pool is None else self._pool.worker_pids


def _broke(future: Future) -> bool:
    """Whether the chunk of ``future`` was lost with a broken pool (or cancelled with it)."""
    return future.cancelled() or isinstance(future.exception(), BrokenProcessPool)


def _genomes_text(chunk: Chunk, first: int, last: int) -> str:
    """E.g. ``evaluating genome 17 (seed 123)``, `` of run NAME`` in a sweep."""
    seed_first = int(chunk.seeds[first - chunk.first])
    seed_last = int(chunk.seeds[last - chunk.first])
    of_run = f" of run {chunk.run_id}" if chunk.run_id else ""
    if first == last:
        return f"evaluating genome {first} (seed {seed_first}){of_run}"
    return f"evaluating genomes {first}..{last} (seeds {seed_first}..{seed_last}){of_run}"


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"{code}, killed by {signal.Signals(-code).name}"
        except ValueError:
            return str(code)
    return str(code)
