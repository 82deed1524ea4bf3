"""Evaluation handlers: sequential, multiprocessing pool, Dask, vectorized lockstep, JAX.

All keep the ``batch_evaluate(genomes, seeds)`` signature of
:class:`~neuro_evolution.evaluation.pools.base.EvaluationHandler` and give identical results.
Each built-in one is a :class:`~neuro_evolution.evaluation.pools.run_pool.RunPool` with one run
(:mod:`.pool_handler`), so a sweep's runs can share any of them. This room holds the in-process,
process (:mod:`.process_pool`) and Dask (:mod:`.dask_handler`) pools; the lockstep and JAX
handlers live in their rooms (:mod:`neuro_evolution.evaluation.lockstep.handler`,
:mod:`neuro_evolution.evaluation.jax.handler`).
The handlers by name (``HANDLERS``) and their options: :mod:`.options`; making one from them:
:mod:`.factory`.
"""

from __future__ import annotations

from neuro_evolution.evaluation.pools.base import (
    EvaluationHandler,
    handler_names,
    register_handler,
)
from neuro_evolution.evaluation.pools.factory import handler_from_config, make_handler
from neuro_evolution.evaluation.pools.options import EvaluationConfig, default_workers

__all__ = [
    "EvaluationConfig",
    "EvaluationHandler",
    "default_workers",
    "handler_from_config",
    "handler_names",
    "make_handler",
    "register_handler",
]
