"""The observers by name: tensorboard and mlflow built in; each is a field of the ``observers``
config section, which turns it on with its options.

A built-in observer's module is imported only when its field is set, so a run without observers
imports neither. ``@register_observer("name", config=NameConfig)`` on an
:class:`~neuro_evolution.observers.base.Observer` subclass registers one.
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
