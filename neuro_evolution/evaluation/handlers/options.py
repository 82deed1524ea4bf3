"""The one source of evaluation options: the handler registry and the ``evaluation`` section.

A handler class registers itself by name (``@register_handler("mp")``) and makes itself from the
validated section (``from_config``), so the config, the command line (``train --handler``) and
:func:`handler_from_config` all read the names from here. Built-in handlers are imported only
when one is asked for (Dask is heavy), yet their names are known at once.

What a config file alone decides is validated when the section is parsed; what depends on the
machine (is this start method available, does the scheduler file exist) is checked when the
handler is made, and those errors name the field through :func:`option_path` too.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from neuro_evolution.config.schema import (
    ConfigBase,
    config_class,
    did_you_mean,
    join,
    option,
    parse,
)
from neuro_evolution.support.errors import ConfigError

if TYPE_CHECKING:
    from neuro_evolution.evaluation.handlers.base import EvaluationHandler

SECTION = "evaluation"  # the ExperimentConfig field holding EvaluationConfig (a test holds it)
START_METHODS = ("fork", "forkserver", "spawn")
StartMethod = Literal["fork", "forkserver", "spawn"]

_BUILTIN_MODULES = {
    "sequential": "neuro_evolution.evaluation.handlers.sequential",
    "mp": "neuro_evolution.evaluation.handlers.multiprocessing",
    "dask": "neuro_evolution.evaluation.handlers.dask",
    "vectorized": "neuro_evolution.evaluation.handlers.vectorized",
    "jax": "neuro_evolution.evaluation.handlers.jax",
}
_HANDLERS: dict[str, type[EvaluationHandler]] = {}
HandlerT = TypeVar("HandlerT", bound="type[EvaluationHandler]")


def register_handler(name: str) -> Callable[[HandlerT], HandlerT]:
    """Class decorator registering an evaluation handler under ``name``."""

    def decorate(cls: HandlerT) -> HandlerT:
        known = _HANDLERS.get(name)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise ValueError(f"handler {name!r} is already registered by {known!r}")
        _HANDLERS[name] = cls
        return cls

    return decorate


def handler_names() -> list[str]:
    """Every handler name: the built-in ones and those registered since (in that order)."""
    return list(_BUILTIN_MODULES) + sorted(set(_HANDLERS) - set(_BUILTIN_MODULES))


def registered_name(cls: type) -> str:
    """The name ``cls`` is registered under (its class name when it is not registered)."""
    for name, known in _HANDLERS.items():
        if known is cls:
            return name
    return cls.__name__


def handler_class(name: str) -> type[EvaluationHandler]:
    """The class registered as ``name`` (a built-in one is imported now); KeyError if unknown."""
    if name not in _HANDLERS and name in _BUILTIN_MODULES:
        importlib.import_module(_BUILTIN_MODULES[name])
    if name not in _HANDLERS:
        raise KeyError(
            f"unknown handler {name!r}.{did_you_mean(name, handler_names())} "
            f"Known handlers: {', '.join(handler_names())}"
        )
    return _HANDLERS[name]


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
    reconnect_seconds: float = option(
        30.0,
        doc="dask with a scheduler: how long a generation waits for a lost scheduler to answer "
        "at the same address again (then it is recomputed); after that the generation fails "
        "and the last completed one is checkpointed. 0: fail at once",
        ge=0,
    )

    def validate(self, path: str) -> None:
        names = handler_names()
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


def handler_from_config(section: EvaluationConfig) -> EvaluationHandler:
    """The handler the section names, made from the section's options."""
    return handler_class(section.handler).from_config(section)


def make_handler(handler: str, **options: Any) -> EvaluationHandler:
    """The handler called ``handler`` with ``options`` (fields of ``evaluation``; workers=0:
    one per core), validated like the config section."""
    return handler_from_config(evaluation_config(handler, **options))
