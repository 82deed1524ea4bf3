"""Worker side of a sweep's shared pool: one evaluation state per run, and busy time measured.

A process of the sweep's pool serves chunks of many runs. It keeps one state (the run's
template, a runner with its env, a brain) per run id, least recently used first out once it
holds ``capacity`` of them. A task carries only the run id; a worker that has no state for it
raises :class:`RunStateMissing`, and the parent sends that chunk again with the run's setup
(template, RunnerSpec), which the worker then keeps. Every task returns the seconds it spent, so
the parent can add up how busy the workers really were.
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
from neuro_evolution.evaluation.episode import EvaluationContext, EvaluationResult, RunnerSpec
from neuro_evolution.evaluation.handlers.worker import ChunkEvaluator, make_worker_state

RunSetup = tuple[BrainTemplate, RunnerSpec, bool | str]  # template, spec, vectorize
TimedResults = tuple[list[EvaluationResult], float]


class RunStateMissing(Exception):
    """This worker holds no state for the run: send the chunk again with its setup."""

    def __init__(self, run_id: str):
        super().__init__(run_id)
        self.run_id = run_id


_STATES: OrderedDict[str, ChunkEvaluator] = OrderedDict()
_CAPACITY = 8
# Workers yield the CPU to the sweep's main process, which feeds them: on a machine with as many
# workers as cores, the main loop otherwise waits for a core while the workers' queues run dry.
WORKER_NICENESS = 5


def init_sweep_process(capacity: int) -> None:
    """Pool initializer: remember how many run states to keep; leave Ctrl-C to the parent."""
    global _CAPACITY
    _CAPACITY = max(1, capacity)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(WORKER_NICENESS)
    util.Finalize(None, close_states, exitpriority=10)


def close_states() -> None:
    """Close every run state's env (at worker exit)."""
    while _STATES:
        _STATES.popitem(last=False)[1].close()


def run_state(run_id: str, setup: RunSetup | None) -> ChunkEvaluator:
    """This worker's state of ``run_id``, made from ``setup`` when it has none yet."""
    state = _STATES.get(run_id)
    if state is not None:
        _STATES.move_to_end(run_id)
        return state
    if setup is None:
        raise RunStateMissing(run_id)
    template, spec, vectorize = setup
    state = make_worker_state(template, spec, vectorize)
    _STATES[run_id] = state
    while len(_STATES) > _CAPACITY:
        _STATES.popitem(last=False)[1].close()
    return state


def evaluate_run_chunk(
    run_id: str,
    setup: RunSetup | None,
    genomes: np.ndarray,
    seeds: np.ndarray,
    context: EvaluationContext,
) -> TimedResults:
    """The mp task: evaluate one chunk of ``run_id`` and the seconds it took."""
    start = time.perf_counter()
    results = run_state(run_id, setup).evaluate(genomes, seeds, context)
    return results, time.perf_counter() - start


def evaluate_dask_chunk(
    plugin_name: str, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext
) -> TimedResults:
    """The Dask task: the Dask handler's chunk evaluation with the run's plugin, timed."""
    from neuro_evolution.evaluation.handlers import dask as dask_handler  # only Dask workers

    start = time.perf_counter()
    results = dask_handler.evaluate_chunk(plugin_name, genomes, seeds, context)
    return results, time.perf_counter() - start


def warm_up(_: Any = None) -> int:
    """A no-op task that makes a pool start its processes."""
    return 0
