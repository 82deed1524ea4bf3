"""The pool a sweep's runs share: the pool of the handler its ``evaluation`` section names.

Every built-in handler is a :class:`~neuro_evolution.evaluation.pools.pool_handler.PoolHandler`
(its pool with one run), so a sweep runs on any of them: its runs share the pool the handler
makes for many runs (sequential, vectorized, jax: in this process, taking turns; mp: one process
pool; dask: one cluster, one worker plugin per run). A dead worker or a lost scheduler is
recovered by the pool, for a sweep as for a single run.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from neuro_evolution.evaluation.pools import handler_from_config
from neuro_evolution.evaluation.pools.options import EvaluationConfig, option_path
from neuro_evolution.evaluation.pools.pool_handler import PoolHandler
from neuro_evolution.evaluation.pools.run_pool import RunPool
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


# What Dask workers must import for an evaluation section: module -> (the option that needs it,
# the extra that installs it)
JAX_EXTRA = "pip install -e '.[jax]'"


def worker_modules(section: EvaluationConfig) -> dict[str, tuple[str, str]]:
    """The modules the workers of ``section``'s Dask pool need beyond the base install."""
    if section.handler == "dask" and section.vectorize == "jax":
        return {"jax": ("--vectorize jax", JAX_EXTRA)}
    return {}


def importable(name: str) -> bool:
    """Whether ``import name`` can succeed here, judged without importing it (jax takes
    seconds): found on the path, and not blocked (``None`` in ``sys.modules``)."""
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def missing_modules(names: list[str]) -> list[str]:
    """Those of ``names`` that this process cannot import (run on each worker)."""
    return [name for name in names if not importable(name)]


def check_worker_modules(client: Any, modules: dict[str, tuple[str, str]]) -> None:
    """Ask every worker of ``client``'s cluster, before any plugin runs, whether it can import
    ``modules``; one UserError naming the option, the workers and the extra when one cannot."""
    if not modules:
        return
    answers: dict[str, list[str]] = client.run(missing_modules, list(modules))
    lacking = {worker: missing for worker, missing in sorted(answers.items()) if missing}
    if not lacking:
        return
    module = next(iter(lacking.values()))[0]
    option, extra = modules[module]
    workers = ", ".join(lacking)
    raise UserError(
        f"{option}: {len(lacking)} of {len(answers)} Dask workers cannot import {module} "
        f"({workers}); install it on every worker ({extra}), or drop {option}"
    )
