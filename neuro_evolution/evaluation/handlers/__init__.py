"""Evaluation handlers: sequential, multiprocessing pool, Dask, vectorized lockstep, JAX.

All keep the ``batch_evaluate(genomes, seeds)`` signature of
:class:`~neuro_evolution.evaluation.handlers.base.EvaluationHandler` and give identical results.
Each built-in one is a :class:`~neuro_evolution.evaluation.handlers.pool.RunPool` with one run
(:mod:`.pool_handler`), so a sweep's runs can share any of them.
The handlers by name (``HANDLERS``) and their options: :mod:`.options`; making one from them:
:mod:`.factory`.
"""

from __future__ import annotations

from neuro_evolution.evaluation.handlers.base import (
    EvaluationHandler,
    handler_names,
    register_handler,
)
from neuro_evolution.evaluation.handlers.factory import handler_from_config, make_handler
from neuro_evolution.evaluation.handlers.options import EvaluationConfig, default_workers

__all__ = [
    "EvaluationConfig",
    "EvaluationHandler",
    "default_workers",
    "handler_from_config",
    "handler_names",
    "make_handler",
    "register_handler",
]
