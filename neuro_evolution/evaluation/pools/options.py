"""The one source of evaluation options: the ``evaluation`` section.

Its ``handler`` is a name of :data:`HANDLERS`, the handlers by name, which live here so that the
section checks the name without importing the handler interface
(:mod:`~neuro_evolution.evaluation.pools.base`, which takes this section); a handler class
makes itself from the validated section (``from_config``).

What a config file alone decides is validated when the section is parsed; what depends on the
machine (is this start method available, does the scheduler file exist) is checked when the
handler is made, and those errors name the field through :func:`option_path` too.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Literal

from neuro_evolution.core.registry import Registry
from neuro_evolution.core.schema import (
    ConfigBase,
    config_class,
    did_you_mean,
    join,
    option,
    parse,
)
from neuro_evolution.support.errors import ConfigError

SECTION = "evaluation"  # the ExperimentConfig field holding EvaluationConfig (a test holds it)
START_METHODS = ("fork", "forkserver", "spawn")
StartMethod = Literal["fork", "forkserver", "spawn"]


def option_path(name: str) -> str:
    """The config path of an ``evaluation`` field, e.g. ``evaluation.scheduler``."""
    if name not in {field.name for field in dataclasses.fields(EvaluationConfig)}:
        raise ValueError(f"EvaluationConfig has no field {name!r}")
    return join(SECTION, name)


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# The handlers by name: sequential, mp, dask, vectorized and jax built in, a user's added with
# ``@register_handler("name")`` on an EvaluationHandler subclass. A built-in handler's module is
# imported only when the handler is asked for (Dask is heavy), yet every name is known at once:
# the config (``evaluation.handler``), the command line (``train --handler``) and
# :func:`~neuro_evolution.evaluation.pools.factory.handler_from_config` read them from here.
HANDLERS: Registry[Any] = Registry(
    "handler",
    {
        "sequential": "neuro_evolution.evaluation.pools.sequential",
        "mp": "neuro_evolution.evaluation.pools.process_pool",
        "dask": "neuro_evolution.evaluation.pools.dask_handler",
        "vectorized": "neuro_evolution.evaluation.lockstep.handler",
        "jax": "neuro_evolution.evaluation.jax.handler",
    },
    what="handler",
    known="handlers",
    builtins_first=True,
)


@config_class
class EvaluationConfig(ConfigBase):
    """Which evaluation handler runs the episodes (the command line can override each field)."""

    handler: str = option(
        "mp",
        doc="sequential, mp (a process pool on all cores), dask, vectorized, jax (one compiled "
        "program per generation, needs the jax extra), or a registered one",
    )
    workers: int = option(0, doc="worker processes for mp/dask (0: one per core)", ge=0)
    start_method: StartMethod = option(
        "forkserver",
        doc="multiprocessing start method for mp: forkserver is safe with threads and does not "
        "rely on fork copying the parent's memory",
    )
    scheduler: str | None = option(
        None,
        doc="existing Dask scheduler: an address (tcp://HOST:PORT) or a scheduler file; "
        "null: start a LocalCluster",
    )
    vectorize: bool | Literal["jax"] = option(
        False,
        doc='mp/dask workers evaluate their chunks vectorized: true (numpy lockstep) or "jax" '
        "(one compiled JAX program per chunk, see docs/jax.md)",
    )
    precision: Literal["float32", "float64"] = option(
        "float32", doc='float type of the JAX path (jax handler, vectorize "jax")'
    )
    max_lanes: int | None = option(
        None,
        doc="vectorized evaluation (the vectorized handler, vectorize true): at most this many "
        "lanes (episode x individual) step at once; a larger batch runs as consecutive waves "
        "with identical results. null: one wave per batch. A wave that cannot fit in memory "
        "is refused",
        ge=1,
    )
    portable_kernels: bool = option(
        False,
        doc="numpy and OpenBLAS run one kernel set that every x86-64 CPU with AVX2 runs (numpy's "
        "dispatch capped at X86_V3, OpenBLAS's Haswell kernels), so the same config and seed "
        "give the same bits on any such machine; the command starts itself again with the two "
        "variables that choose them, and its workers inherit them (docs/architecture.md)",
    )
    reconnect_seconds: float = option(
        30.0,
        doc="dask with a scheduler: how long a generation waits for a lost scheduler to answer "
        "at the same address again (then it is recomputed), or for a silent one (a paused "
        "process) to answer at all (at least 5 s); after that the generation fails and the last "
        "completed one is checkpointed. 0: fail at once when the scheduler is lost",
        ge=0,
    )

    def validate(self, path: str) -> None:
        names = HANDLERS.names()
        if self.handler not in names:
            raise ConfigError(
                join(path, "handler"),
                f"must be one of {', '.join(map(repr, names))}, got {self.handler!r}."
                f"{did_you_mean(self.handler, names)}",
            )

    @property
    def worker_count(self) -> int:
        """``workers``, with 0 resolved to one per core."""
        return self.workers or default_workers()


def evaluation_config(handler: str, **options: Any) -> EvaluationConfig:
    """A validated section from keyword options, e.g. ``evaluation_config("mp", workers=2)``."""
    return parse(EvaluationConfig, {"handler": handler, **options}, SECTION)
