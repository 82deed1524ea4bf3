"""The pool a sweep's runs share: the pool of the handler its ``evaluation`` section names.

Every built-in handler is a :class:`~neuro_evolution.evaluation.handlers.pool_handler.PoolHandler`
(its pool with one run), so a sweep runs on any of them: its runs share the pool the handler
makes for many runs (sequential, vectorized, jax: in this process, taking turns; mp: one process
pool; dask: one cluster, one worker plugin per run). A dead worker or a lost scheduler is
recovered by the pool, for a sweep as for a single run.
"""

from __future__ import annotations

from neuro_evolution.evaluation.handlers import handler_from_config
from neuro_evolution.evaluation.handlers.options import EvaluationConfig, option_path
from neuro_evolution.evaluation.handlers.pool import RunPool
from neuro_evolution.evaluation.handlers.pool_handler import PoolHandler
from neuro_evolution.support.errors import UserError


def make_pool(section: EvaluationConfig, parallel_runs: int) -> RunPool:
    """The pool of the handler ``section`` names, for ``parallel_runs`` runs open at once."""
    handler = handler_from_config(section)
    if not isinstance(handler, PoolHandler):
        raise UserError(
            f"{option_path('handler')}: {section.handler!r} cannot be shared by a sweep's runs "
            f"({type(handler).__name__} is no PoolHandler)"
        )
    return handler.new_pool(parallel_runs)
