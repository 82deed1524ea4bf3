"""Brain types. Importing this package registers the built-in ones (CTRNN, FFNN, LSTM)."""

from neuro_evolution.brains import ctrnn, ffnn, lstm  # noqa: F401
from neuro_evolution.brains.base import (
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    brain_types,
    get_brain_type,
    make_template,
    register_brain,
)

__all__ = [
    "BatchBrain",
    "Brain",
    "BrainConfig",
    "BrainTemplate",
    "brain_types",
    "get_brain_type",
    "make_template",
    "register_brain",
]
