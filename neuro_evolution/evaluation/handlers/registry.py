"""The evaluation handlers by name: sequential, mp, dask, vectorized and jax built in, a user's
added with register_handler.

A built-in handler's module is imported only when the handler is asked for (Dask is heavy), yet
every name is known at once: the config (``evaluation.handler``), the command line
(``train --handler``) and :func:`~neuro_evolution.evaluation.handlers.factory.handler_from_config`
read them from here. ``@register_handler("name")`` on an
:class:`~neuro_evolution.evaluation.handlers.base.EvaluationHandler` subclass adds one.

This module sits below the handler interface (whose ``from_config`` takes the ``evaluation``
section, which checks its handler name here), so it names the handler classes only as ``type``.
"""

from __future__ import annotations

from typing import Any

from neuro_evolution.config.registry import Registry

HANDLERS: Registry[Any] = Registry(
    "handler",
    {
        "sequential": "neuro_evolution.evaluation.handlers.sequential",
        "mp": "neuro_evolution.evaluation.handlers.multiprocessing",
        "dask": "neuro_evolution.evaluation.handlers.dask",
        "vectorized": "neuro_evolution.evaluation.handlers.vectorized",
        "jax": "neuro_evolution.evaluation.handlers.jax",
    },
    what="handler",
    known="handlers",
    builtins_first=True,
)
register_handler = HANDLERS.register
handler_names = HANDLERS.names


def handler_class(name: str) -> type:
    """The class registered as ``name`` (a built-in one is imported now); KeyError if unknown."""
    return HANDLERS.get(name)[1]


def registered_name(cls: type) -> str:
    """The name ``cls`` is registered under (its class name when it is not registered)."""
    return HANDLERS.impl_name(cls) or cls.__name__
