"""The pool and the handler base of the handlers that evaluate in this process: sequential,
vectorized and jax.

A request is evaluated whole, with its run's state, when it is submitted: one slot, one chunk.
So a sweep's runs on it take turns, each run's request evaluated exactly as its handler alone
evaluates it, and the results are the same.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import RunnerSpec
from neuro_evolution.evaluation.pools.base import ChunkEvaluator
from neuro_evolution.evaluation.pools.pool_handler import PoolHandler
from neuro_evolution.evaluation.pools.run_pool import RUN, Chunk, RunPool

StateMaker = Callable[[BrainTemplate, RunnerSpec], ChunkEvaluator]


class InProcessPool(RunPool):
    """Evaluates every request in this process when it is submitted, with a state per run made
    by ``make_state`` (a runner and a brain, a vector env and a batch brain, a JAX program);
    ``label`` is its console line."""

    def __init__(self, make_state: StateMaker, label: str) -> None:
        super().__init__(slots=1)
        self._make_state = make_state
        self.label = label
        self._states: dict[str, ChunkEvaluator] = {}

    def state(self, run_id: str) -> ChunkEvaluator:
        """The state of a registered run."""
        return self._states[run_id]

    def _register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        self._states[run_id] = self._make_state(template, spec)

    def _unregister(self, run_id: str) -> None:
        state = self._states.pop(run_id, None)
        if state is not None:
            state.close()

    def _submit_chunk(self, chunk: Chunk) -> None:
        start = time.perf_counter()
        results = self._states[chunk.run_id].evaluate(chunk.genomes, chunk.seeds, chunk.context)
        self._chunk_done(chunk, (results, time.perf_counter() - start))

    def _wait_chunks(self, timeout: float | None) -> None:
        raise RuntimeError("an in-process pool has no chunk in flight")

    def close(self) -> None:
        """Close every run's state (its envs)."""
        for run_id in list(self._states):
            self.unregister(run_id)

    def describe(self) -> str:
        return self.label


class InProcessHandler(PoolHandler[InProcessPool]):
    """A handler whose pool evaluates in this process with the state :meth:`make_state` makes
    for each run."""

    @abstractmethod
    def make_state(self, template: BrainTemplate, spec: RunnerSpec) -> ChunkEvaluator:
        """The state a run evaluates with."""

    @abstractmethod
    def pool_label(self) -> str:
        """The pool's console line."""

    def new_pool(self, runs: int = 1) -> InProcessPool:
        return InProcessPool(self.make_state, self.pool_label())

    @property
    def state(self) -> ChunkEvaluator | None:
        """The run's state while started."""
        if self.pool is None or RUN not in self.pool.runs:
            return None
        return self.pool.state(RUN)
