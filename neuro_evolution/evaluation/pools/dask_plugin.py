"""What a Dask worker runs: the plugin that keeps a run's evaluation states, and the task that
evaluates one chunk with it.

Template and RunnerSpec travel once per run inside an :class:`EvaluationPlugin`, which every
worker -- also one that joins or restarts later -- sets up with its own env and brain; tasks
carry only a chunk's genomes and seeds.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.pools import worker as worker_side


class EvaluationPlugin(WorkerPlugin):
    """Carries template + RunnerSpec to every worker and keeps that worker's evaluation states.

    ``setup`` builds one state (env + brain) at once, so a worker that cannot make the env fails
    at registration. A worker with several threads builds one more state per concurrent task:
    a state (its env, its brain) is never shared by two tasks at a time.
    """

    def __init__(
        self,
        template: BrainTemplate,
        spec: RunnerSpec,
        vectorize: bool | str,
        precision: str = "float32",
    ) -> None:
        self.template = template
        self.spec = spec
        self.vectorize = vectorize
        self.precision = precision

    def setup(self, worker: object) -> None:
        self._lock = threading.Lock()
        self._idle = [self._new_state()]
        self._all = list(self._idle)

    def _new_state(self) -> worker_side.ChunkEvaluator:
        return worker_side.make_worker_state(
            self.template, self.spec, self.vectorize, self.precision
        )

    def evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """Evaluate a chunk with an idle state of this worker (a new one if all are busy)."""
        with self._lock:
            state = self._idle.pop() if self._idle else None
        if state is None:
            state = self._new_state()
            with self._lock:
                self._all.append(state)
        try:
            return state.evaluate(genomes, seeds, context)
        finally:
            with self._lock:
                self._idle.append(state)

    def teardown(self, worker: object) -> None:
        for state in getattr(self, "_all", ()):
            state.close()
        self._all = self._idle = []


def evaluate_chunk(
    plugin_name: str,
    genomes: np.ndarray,
    seeds: np.ndarray,
    context: EvaluationContext = TRAINING,
) -> worker_side.TimedResults:
    """The task: evaluate one chunk with the plugin state of the worker that runs it, and the
    seconds that took."""
    start = time.perf_counter()
    plugin = get_worker().plugins.get(plugin_name)
    if not isinstance(plugin, EvaluationPlugin):
        raise RuntimeError(
            f"Dask worker {get_worker().address} has no evaluation plugin {plugin_name!r}; "
            "was the handler closed while a generation ran?"
        )
    return plugin.evaluate(genomes, seeds, context), time.perf_counter() - start
