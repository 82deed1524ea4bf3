"""The observers by name: tensorboard and mlflow built in; an entry ``{"type": NAME, ...}`` of
the ``observers`` config list turns one on with its options.

A built-in observer's module is imported only when an entry names it, so a run without
observers imports neither. ``@register_observer("name", config=NameConfig)`` on an
:class:`~neuro_evolution.observers.base.Observer` subclass registers one; ``NameConfig``
subclasses :class:`~neuro_evolution.observers.options.ObserverConfig`.
"""

from __future__ import annotations

from neuro_evolution.core.registry import Registry
from neuro_evolution.observers.base import Observer

OBSERVERS: Registry[Observer] = Registry(
    "observer",
    {
        "tensorboard": "neuro_evolution.observers.tensorboard",
        "mlflow": "neuro_evolution.observers.mlflow",
    },
    what="observer",
    known="observers",
    builtins_first=True,
)
register_observer = OBSERVERS.register
