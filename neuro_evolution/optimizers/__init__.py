"""Evolution strategies behind one ask/tell interface (MU_ES, CMA_ES, PGPE, OPENAI_ES, SNES).

The interface and the optimizers by name (``OPTIMIZERS``) are :mod:`.base`, and making one from
a config section :mod:`.factory`.
"""

from neuro_evolution.optimizers.base import (
    OPTIMIZERS,
    Optimizer,
    OptimizerConfig,
    register_optimizer,
)
from neuro_evolution.optimizers.factory import make_optimizer

__all__ = ["OPTIMIZERS", "Optimizer", "OptimizerConfig", "make_optimizer", "register_optimizer"]
