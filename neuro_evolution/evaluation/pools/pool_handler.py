"""Handlers over a :class:`~neuro_evolution.evaluation.pools.run_pool.RunPool`: a single run is a
sweep of one.

* :class:`PoolHandler`: the handler of a single run owns its pool and registers its one run on
  it. Every built-in handler (sequential, mp, dask, vectorized, jax) is one, so every handler's
  pool serves a sweep too (:meth:`PoolHandler.new_pool`), and every fault rule of a pool (a dead
  worker, a lost scheduler) holds for a single run and a sweep alike.
* :class:`PooledRun`: one run of a sweep on the pool the runs share (the pool is not its own).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Generic, TypeVar

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.run_pool import RUN, RunPool

PoolT = TypeVar("PoolT", bound=RunPool)


class PoolHandler(EvaluationHandler, Generic[PoolT]):
    """A handler that is its pool with one run registered.

    The pool is made by :meth:`new_pool` at the first :meth:`start` and kept; a second start
    replaces the run (a new template or spec) on the same pool. :meth:`close` closes the pool.
    """

    def __init__(self) -> None:
        self._pool: PoolT | None = None

    @abstractmethod
    def new_pool(self, runs: int = 1) -> PoolT:
        """A pool of this handler's options for ``runs`` runs open at once (a sweep's runs share
        it; the handler itself asks for one)."""

    @property
    def pool(self) -> PoolT | None:
        """The pool while started."""
        return self._pool

    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        """Register the run on the pool (made now on the first start)."""
        pool = self._pool
        if pool is None:
            pool = self._pool = self.new_pool()
        else:
            pool.unregister(RUN)
        pool.register(RUN, template, spec)

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """The run's request on the pool, results in submission order."""
        if self._pool is None or RUN not in self._pool.runs:
            raise RuntimeError(f"{type(self).__name__}.start() was not called")
        return self._pool.evaluate(RUN, genomes, seeds, context)

    def close(self) -> None:
        """Close the pool (its workers and envs)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


class PooledRun(EvaluationHandler):
    """One run's handler in a sweep: registers the run with the shared pool when it starts,
    leaves it when it closes."""

    def __init__(self, pool: RunPool, run_id: str) -> None:
        self.pool = pool
        self.run_id = run_id

    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        self.pool.register(self.run_id, template, spec)

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        return self.pool.evaluate(self.run_id, genomes, seeds, context)

    def close(self) -> None:
        self.pool.unregister(self.run_id)

    def describe(self) -> str:
        return self.pool.describe()
