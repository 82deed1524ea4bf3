"""Evolution strategies behind one ask/tell interface (MU_ES, CMA_ES, PGPE, OPENAI_ES, SNES)."""

from neuro_evolution.optimizers.base import (
    OPTIMIZERS,
    Optimizer,
    OptimizerConfig,
    make_optimizer,
)

__all__ = ["OPTIMIZERS", "Optimizer", "OptimizerConfig", "make_optimizer"]
