"""Worker-side helpers of the parallel handlers: per-process state built once, used per chunk.

A process of the mp pool (:mod:`.process_pool`, shared by a run or by the runs of a sweep)
keeps one state per run id, least recently used first out beyond its capacity. Its
``initializer`` :func:`init_process` receives the setups (template and
:class:`~neuro_evolution.evaluation.episodes.runner.RunnerSpec`) of the runs to build at once,
explicitly (pickled), so nothing relies on ``fork`` copying the parent's memory; a task of a run
the worker holds no state for raises :class:`RunStateMissing`, and the parent sends the chunk
again with the run's setup. The Dask handler builds its states with :func:`make_worker_state`
inside a worker plugin.
"""

from __future__ import annotations

import os
import signal
import time
from collections import OrderedDict
from multiprocessing import util
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import (
    TRAINING,
    EvaluationContext,
    RunnerSpec,
)
from neuro_evolution.evaluation.pools.base import ChunkEvaluator, WorkerState
from neuro_evolution.evaluation.pools.options import option_path
from neuro_evolution.evaluation.pools.parent_watchdog import exit_when_parent_dies
from neuro_evolution.evaluation.pools.run_pool import TimedResults


def vectorized_state_class() -> type:
    """``VectorizedWorkerState``, imported lazily; a clear error when it is not available."""
    try:
        from neuro_evolution.evaluation.lockstep.handler import VectorizedWorkerState
    except ImportError as error:
        raise RuntimeError(
            f"{option_path('vectorize')}: VectorizedWorkerState cannot be imported from "
            f"neuro_evolution.evaluation.lockstep.handler ({error}); set vectorize to false"
        ) from None
    return VectorizedWorkerState


def make_worker_state(
    template: BrainTemplate, spec: RunnerSpec, vectorize: bool | str, precision: str = "float32"
) -> ChunkEvaluator:
    """The long-lived state of one worker: env made once, one brain (or batch brain) reused;
    ``vectorize`` "jax": a JAX program of ``precision`` (see jax/handler.py)."""
    spec.import_modules()
    if vectorize == "jax":
        from neuro_evolution.evaluation.jax.handler import JaxWorkerState

        return JaxWorkerState(template, spec, precision)
    if vectorize:
        return vectorized_state_class()(template, spec, announce=False)
    return WorkerState(template, spec)


# --- multiprocessing worker processes -------------------------------------------------------
RunSetup = tuple[BrainTemplate, RunnerSpec, bool | str]  # template, spec, vectorize


class RunStateMissing(Exception):
    """This worker holds no state for the run: send the chunk again with its setup."""

    def __init__(self, run_id: str):
        super().__init__(run_id)
        self.run_id = run_id


_STATES: OrderedDict[str, ChunkEvaluator] = OrderedDict()  # run id -> state, least recent first
_CAPACITY = 1
_INIT_ERROR: BaseException | None = None
_STARTED: Any = None  # a multiprocessing Barrier of all the pool's workers
_PROGRESS: Any = None  # shared int64 array: per worker slot (pid, chunk number, genome offset)
_SLOT: int | None = None  # this worker's slot in _PROGRESS (its index at the start-up barrier)
PROGRESS_FIELDS = 3  # int64 per worker slot in the progress array
NOT_EVALUATING = -1  # a slot's genome offset while its worker is idle
WHOLE_CHUNK = -2  # a vectorized chunk runs all its genomes at once: only the chunk is known


def init_process(
    setups: dict[str, RunSetup],
    capacity: int,
    niceness: int,
    started: Any,
    progress: Any,
) -> None:
    """Pool initializer: build the states of ``setups`` now; keep up to ``capacity`` run states.

    An error is kept and re-raised by every task instead of raised here, so it reaches the parent
    as an ordinary exception with its traceback (an initializer that raises only kills the
    worker, and the parent would learn nothing but "a process died").

    ``progress`` (:data:`PROGRESS_FIELDS` int64 per worker) is where a worker notes the genome
    it is evaluating, so that the parent can name the genome a dead worker was running.
    """
    global _CAPACITY, _INIT_ERROR, _STARTED, _PROGRESS
    _CAPACITY = max(1, capacity, len(setups))
    _STARTED = started
    _PROGRESS = progress
    # Ctrl-C in a terminal reaches the whole process group: only the parent handles it (it
    # finishes the generation and writes a checkpoint), so workers must not die of it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A forked worker inherits the parent's SIGTERM handler (train's stop request); the pool
    # ends its workers with SIGTERM, which must end them.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    exit_when_parent_dies()  # no orphans when the main process is killed
    if niceness:
        os.nice(niceness)
    # multiprocessing children leave through os._exit (atexit does not run); Finalize does.
    util.Finalize(None, close_states, exitpriority=10)
    try:
        for run_id, setup in setups.items():
            run_state(run_id, setup)
    except Exception as error:  # re-raised by every task of this worker
        _INIT_ERROR = error


def close_states() -> None:
    """Close every run state's env (at worker exit)."""
    while _STATES:
        _STATES.popitem(last=False)[1].close()


def run_state(run_id: str, setup: RunSetup | None) -> ChunkEvaluator:
    """This worker's state of ``run_id``, made from ``setup`` when it has none yet; the least
    recently used state goes when more than the capacity are kept."""
    if _INIT_ERROR is not None:
        raise _INIT_ERROR
    state = _STATES.get(run_id)
    if state is not None:
        _STATES.move_to_end(run_id)
        return state
    if setup is None:
        raise RunStateMissing(run_id)
    state = make_worker_state(*setup)
    _STATES[run_id] = state
    while len(_STATES) > _CAPACITY:
        _STATES.popitem(last=False)[1].close()
    return state


def process_ready(timeout: float) -> int:
    """A warm-up task: fails like the initializer did, else returns this worker's pid.

    With a start-up barrier every worker runs exactly one warm-up task (each waits for all the
    others), so the parent learns the pid of every worker of the pool. A worker that cannot set
    up breaks the barrier, so the others fail at once instead of waiting for it.
    """
    global _SLOT
    if _INIT_ERROR is not None:
        _STARTED.abort()
        raise _INIT_ERROR
    _SLOT = _STARTED.wait(timeout)  # a distinct index 0 .. workers-1
    _note(0, NOT_EVALUATING)
    return os.getpid()


def _note(chunk_number: int, genome_offset: int) -> None:
    """Note in this worker's progress slot which genome of which chunk it is evaluating now."""
    if _SLOT is not None:
        base = PROGRESS_FIELDS * _SLOT
        _PROGRESS[base : base + PROGRESS_FIELDS] = [os.getpid(), chunk_number, genome_offset]


def evaluate_chunk(
    chunk_number: int,
    run_id: str,
    setup: RunSetup | None,
    genomes: np.ndarray,
    seeds: np.ndarray,
    context: EvaluationContext = TRAINING,
) -> TimedResults:
    """The mp task: evaluate one chunk of ``run_id`` with this worker's state of it, and the
    seconds that took (:class:`RunStateMissing` when the worker has none and ``setup`` is None).

    The worker notes each genome in its progress slot before evaluating it, one genome at a time
    (the same results: evaluations are independent); a vectorized chunk notes only the chunk.
    """
    start = time.perf_counter()
    state = run_state(run_id, setup)
    try:
        if not isinstance(state, WorkerState):  # lockstep: the chunk is one evaluation
            _note(chunk_number, WHOLE_CHUNK)
            results = state.evaluate(genomes, seeds, context)
        else:
            results = []
            for offset in range(len(genomes)):
                _note(chunk_number, offset)
                results += state.evaluate(
                    genomes[offset : offset + 1], seeds[offset : offset + 1], context
                )
    finally:
        _note(chunk_number, NOT_EVALUATING)
    return results, time.perf_counter() - start
