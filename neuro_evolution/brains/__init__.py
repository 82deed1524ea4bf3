"""Brain types: the interface and the types by name (:mod:`.base`).

The built-in types (CTRNN, FFNN, LSTM, conv, composed) are imported when their name is first
looked up.
"""

from neuro_evolution.brains.base import (
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    JaxBrain,
    brain_types,
    get_brain_type,
    make_template,
    parse_brain_config,
    register_brain,
)

__all__ = [
    "BatchBrain",
    "Brain",
    "BrainConfig",
    "BrainTemplate",
    "JaxBrain",
    "brain_types",
    "get_brain_type",
    "make_template",
    "parse_brain_config",
    "register_brain",
]
