"""The brain types by name: CTRNN, FFNN, LSTM, conv and composed built in, a user's added with
register_brain.

A built-in type's module is imported when its name is first looked up, so listing the types
imports none of them. ``@register_brain("Name", config=NameConfig)`` on a template class adds a
type (see ``docs/writing-a-brain.md``).
"""

from __future__ import annotations

from typing import Any

from neuro_evolution.config.registry import Registry

BRAINS: Registry[Any] = Registry(
    "brain",
    {
        "CTRNN": "neuro_evolution.brains.ctrnn",
        "FFNN": "neuro_evolution.brains.ffnn",
        "LSTM": "neuro_evolution.brains.lstm",
        "composed": "neuro_evolution.brains.composed",
        "conv": "neuro_evolution.brains.conv",
    },
    what="brain type",
    known="types",
)
register_brain = BRAINS.register
brain_types = BRAINS.names
get_brain_type = BRAINS.get
brain_type_name = BRAINS.name_of
parse_brain_config = BRAINS.parse_config

__all__ = [
    "BRAINS",
    "brain_type_name",
    "brain_types",
    "get_brain_type",
    "parse_brain_config",
    "register_brain",
]
