"""Worker-side helpers of the parallel handlers: per-process state built once, used per chunk.

The multiprocessing handler's pool ``initializer`` is :func:`init_process`; it receives the
template and the :class:`~neuro_evolution.evaluation.episode.RunnerSpec` explicitly (pickled),
so nothing relies on ``fork`` copying the parent's memory. The Dask handler builds its states
with :func:`make_worker_state` inside a worker plugin.
"""

from __future__ import annotations

import os
import signal
from multiprocessing import util
from typing import Any, Protocol

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episode import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.handlers.base import WorkerState
from neuro_evolution.evaluation.handlers.options import option_path


class ChunkEvaluator(Protocol):
    """What a worker keeps: ``WorkerState`` or ``VectorizedWorkerState`` (same API)."""

    def evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]: ...

    def close(self) -> None: ...


def vectorized_state_class() -> type:
    """``VectorizedWorkerState``, imported lazily; a clear error when it is not available."""
    try:
        from neuro_evolution.evaluation.handlers.vectorized import VectorizedWorkerState
    except ImportError as error:
        raise RuntimeError(
            f"{option_path('vectorize')}: VectorizedWorkerState cannot be imported from "
            f"neuro_evolution.evaluation.handlers.vectorized ({error}); set vectorize to false"
        ) from None
    return VectorizedWorkerState


def make_worker_state(
    template: BrainTemplate, spec: RunnerSpec, vectorize: bool | str, precision: str = "float32"
) -> ChunkEvaluator:
    """The long-lived state of one worker: env made once, one brain (or batch brain) reused;
    ``vectorize`` "jax": a JAX program of ``precision`` (see handlers/jax.py)."""
    spec.import_modules()
    if vectorize == "jax":
        from neuro_evolution.evaluation.handlers.jax import JaxWorkerState

        return JaxWorkerState(template, spec, precision)
    if vectorize:
        return vectorized_state_class()(template, spec, announce=False)
    return WorkerState(template, spec)


def check_vectorize(template: BrainTemplate, spec: RunnerSpec) -> None:
    """In the process that starts the workers: fail now if lockstep evaluation is missing, and
    print the one warning of a fallback (the workers themselves stay silent)."""
    vectorized_state_class()
    from neuro_evolution.evaluation.handlers.vectorized import fallback_reason, warn_about_fallback

    reason = fallback_reason(template, spec)
    if reason:
        warn_about_fallback(reason)


# --- multiprocessing worker processes -------------------------------------------------------
_STATE: ChunkEvaluator | None = None
_INIT_ERROR: BaseException | None = None
_STARTED: Any = None  # a multiprocessing Barrier of all the pool's workers
_PROGRESS: Any = None  # shared int64 array: per worker slot (pid, genome index being evaluated)
_SLOT: int | None = None  # this worker's slot in _PROGRESS (its index at the start-up barrier)
NOT_EVALUATING = -1  # a slot's genome index while its worker is idle
UNKNOWN_GENOME = -2  # a vectorized chunk runs all its genomes at once: only the chunk is known


def init_process(
    template: BrainTemplate,
    spec: RunnerSpec,
    vectorize: bool | str,
    started: Any = None,
    progress: Any = None,
) -> None:
    """Pool initializer: build this process's state once for the whole run.

    An error is kept and re-raised by the first task instead of raised here, so it reaches the
    parent as an ordinary exception with its traceback (an initializer that raises only kills
    the worker, and the parent would learn nothing but "a process died").

    ``progress`` (two int64 per worker) is where a worker notes the genome it is evaluating, so
    that the parent can name the genome a dead worker was running.
    """
    global _STATE, _INIT_ERROR, _STARTED, _PROGRESS
    _STARTED = started
    _PROGRESS = progress
    # Ctrl-C in a terminal reaches the whole process group: only the parent handles it (it
    # finishes the generation and writes a checkpoint), so workers must not die of it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A forked worker inherits the parent's SIGTERM handler (train's stop request); the pool
    # ends its workers with SIGTERM, which must end them.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        _STATE = make_worker_state(template, spec, vectorize)
    except Exception as error:  # re-raised by every task of this worker
        _INIT_ERROR = error
        return
    # multiprocessing children leave through os._exit (atexit does not run); Finalize does.
    util.Finalize(None, _STATE.close, exitpriority=10)


def _state() -> ChunkEvaluator:
    if _STATE is None:
        if _INIT_ERROR is not None:
            raise _INIT_ERROR
        raise RuntimeError("this worker process was not set up by init_process")
    return _STATE


def process_ready(timeout: float) -> int:
    """A warm-up task: fails like the initializer did, else returns this worker's pid.

    With a start-up barrier every worker runs exactly one warm-up task (each waits for all the
    others), so the parent learns the pid of every worker of the pool. A worker that cannot set
    up breaks the barrier, so the others fail at once instead of waiting for it.
    """
    try:
        _state()
    except BaseException:
        if _STARTED is not None:
            _STARTED.abort()
        raise
    if _STARTED is not None:
        global _SLOT
        _SLOT = _STARTED.wait(timeout)  # a distinct index 0 .. workers-1
        _note(NOT_EVALUATING)
    return os.getpid()


def _note(genome_index: int) -> None:
    """Note in this worker's progress slot which genome it is evaluating now."""
    if _PROGRESS is not None and _SLOT is not None:
        _PROGRESS[2 * _SLOT] = os.getpid()
        _PROGRESS[2 * _SLOT + 1] = genome_index


def evaluate_chunk(
    genomes: np.ndarray,
    seeds: np.ndarray,
    context: EvaluationContext = TRAINING,
    first_index: int | None = None,
) -> list[EvaluationResult]:
    """Evaluate one chunk of genomes with this process's state.

    With ``first_index`` (the chunk's first genome index in the population) the worker notes
    each genome in its progress slot before evaluating it, one genome at a time (the same
    results: evaluations are independent); a vectorized chunk notes only its first genome.
    """
    state = _state()
    if first_index is None or _PROGRESS is None:
        return state.evaluate(genomes, seeds, context)
    try:
        if not isinstance(state, WorkerState):  # lockstep: the chunk is one evaluation
            _note(UNKNOWN_GENOME - first_index)
            return state.evaluate(genomes, seeds, context)
        results = []
        for offset in range(len(genomes)):
            _note(first_index + offset)
            results += state.evaluate(
                genomes[offset : offset + 1], seeds[offset : offset + 1], context
            )
        return results
    finally:
        _note(NOT_EVALUATING)
