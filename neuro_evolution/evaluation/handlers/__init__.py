"""Evaluation handlers: sequential, multiprocessing pool, Dask, vectorized lockstep.

All keep the ``batch_evaluate(genomes, seeds)`` signature of
:class:`~neuro_evolution.evaluation.handlers.base.EvaluationHandler` and give identical results.
"""

from __future__ import annotations

import os

from neuro_evolution.evaluation.handlers.base import EvaluationHandler


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def make_handler(
    name: str,
    *,
    workers: int = 0,
    start_method: str = "forkserver",
    scheduler: str | None = None,
    vectorize: bool = False,
) -> EvaluationHandler:
    """The handler called ``name``; ``workers=0`` means one per core."""
    workers = workers or default_workers()
    if name == "sequential":
        from neuro_evolution.evaluation.handlers.sequential import SequentialHandler

        return SequentialHandler()
    if name == "mp":
        from neuro_evolution.evaluation.handlers.multiprocessing import MultiprocessingHandler

        return MultiprocessingHandler(
            workers=workers, start_method=start_method, vectorize=vectorize
        )
    if name == "dask":
        from neuro_evolution.evaluation.handlers.dask import DaskHandler

        return DaskHandler(workers=workers, scheduler=scheduler, vectorize=vectorize)
    if name == "vectorized":
        from neuro_evolution.evaluation.handlers.vectorized import VectorizedHandler

        return VectorizedHandler()
    raise ValueError(f"unknown handler {name!r}: use sequential, mp, dask or vectorized")
