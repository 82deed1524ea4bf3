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
        return vectorized_state_class()(template, spec)
    return WorkerState(template, spec)


# --- multiprocessing worker processes -------------------------------------------------------
_STATE: ChunkEvaluator | None = None
_INIT_ERROR: BaseException | None = None
_STARTED: Any = None  # a multiprocessing Barrier of all the pool's workers


def init_process(
    template: BrainTemplate, spec: RunnerSpec, vectorize: bool, started: Any = None
) -> None:
    """Pool initializer: build this process's state once for the whole run.

    An error is kept and re-raised by the first task instead of raised here, so it reaches the
    parent as an ordinary exception with its traceback (an initializer that raises only kills
    the worker, and the parent would learn nothing but "a process died").
    """
    global _STATE, _INIT_ERROR, _STARTED
    _STARTED = started
    # Ctrl-C in a terminal reaches the whole process group: only the parent handles it (it
    # finishes the generation and writes a checkpoint), so workers must not die of it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
        _STARTED.wait(timeout)
    return os.getpid()


def evaluate_chunk(
    genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
) -> list[EvaluationResult]:
    """Evaluate one chunk of genomes with this process's state."""
    return _state().evaluate(genomes, seeds, context)
