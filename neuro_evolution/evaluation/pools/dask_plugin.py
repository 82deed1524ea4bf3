"""What a Dask worker runs: the plugin that keeps a run's evaluation states, and the task that
evaluates one chunk with it.

Template and RunnerSpec travel once per run inside an :class:`EvaluationPlugin`, which every
worker -- also one that joins or restarts later -- sets up with its own env and brain; tasks
carry only a chunk's genomes and seeds.

The plugin also carries the kernel set of the client that registered the run
(:mod:`neuro_evolution.support.kernels`). A chunk computed on a worker with other kernels comes
back with that worker's address and kernels, so a worker that joins after the connect-time check
is named too; in portable mode such a worker refuses the chunk instead.
"""

from __future__ import annotations

import threading
import time
from typing import Any

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
from neuro_evolution.evaluation.pools.options import option_path
from neuro_evolution.support.errors import HandlerStartError
from neuro_evolution.support.kernels import kernel_set, kernel_text, portable_variables

# A chunk's results, the seconds it took, and (address, kernels) of a worker that ran it with
# other kernels than the client (None: the same kernels, or the client did not say).
ChunkAnswer = tuple[list[EvaluationResult], float, "tuple[str, dict[str, Any]] | None"]


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
        kernels: dict[str, Any] | None = None,
        portable: bool = False,
    ) -> None:
        self.template = template
        self.spec = spec
        self.vectorize = vectorize
        self.precision = precision
        self.kernels = kernels  # the client's kernel set
        self.portable = portable  # refuse chunks on a worker with other kernels

    def setup(self, worker: object) -> None:
        self._lock = threading.Lock()
        self._idle = [self._new_state()]
        self._all = list(self._idle)

    def _new_state(self) -> worker_side.ChunkEvaluator:
        return worker_side.make_worker_state(
            self.template, self.spec, self.vectorize, self.precision
        )

    def other_kernels(self) -> dict[str, Any] | None:
        """This worker's kernel set when it differs from the client's (else None); in portable
        mode a HandlerStartError that says how to start the worker instead."""
        mine = kernel_set()
        if self.kernels is None or mine == self.kernels:
            return None
        if self.portable:
            variables = " ".join(f'{key}="{value}"' for key, value in portable_variables().items())
            raise HandlerStartError(
                f"{option_path('portable_kernels')}: Dask worker {get_worker().address} joined "
                f"with other kernels ({kernel_text(mine)}) than this run's "
                f"({kernel_text(self.kernels)}); stop it, or start it as {variables} dask worker "
                "ADDRESS (docs/cluster.md), then resume the run"
            )
        return mine

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
) -> ChunkAnswer:
    """The task: evaluate one chunk with the plugin state of the worker that runs it; the
    results, the seconds that took, and the worker's address and kernels if they differ from
    the client's (in portable mode such a worker raises instead)."""
    start = time.perf_counter()
    plugin = get_worker().plugins.get(plugin_name)
    if not isinstance(plugin, EvaluationPlugin):
        raise RuntimeError(
            f"Dask worker {get_worker().address} has no evaluation plugin {plugin_name!r}; "
            "was the handler closed while a generation ran?"
        )
    other = plugin.other_kernels()
    results = plugin.evaluate(genomes, seeds, context)
    named = None if other is None else (get_worker().address, other)
    return results, time.perf_counter() - start, named
