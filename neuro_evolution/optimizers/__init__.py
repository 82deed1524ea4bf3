"""Evolution strategies behind one ask/tell interface (DEAP mu+lambda ES and CMA-ES)."""

from neuro_evolution.optimizers.base import (
    OPTIMIZERS,
    Optimizer,
    OptimizerConfig,
    make_optimizer,
)

__all__ = ["OPTIMIZERS", "Optimizer", "OptimizerConfig", "make_optimizer"]
