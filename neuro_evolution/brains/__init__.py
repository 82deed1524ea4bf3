"""Brain types. Importing this package registers the built-in ones (CTRNN, FFNN, LSTM)."""

from neuro_evolution.brains import base, ctrnn, ffnn, lstm  # noqa: F401
from neuro_evolution.brains.base import *  # noqa: F403 (the public names of base.py)

__all__ = base.__all__
