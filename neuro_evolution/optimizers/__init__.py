"""Optimizers behind one ask/tell interface: the CMA family (CMA_ES, SEP_CMA_ES, MA_ES,
LM_MA_ES), the natural-gradient and search-gradient methods (XNES, SNES, CR_FM_NES, PGPE,
OPENAI_ES, ARS, CEM), the population methods (MU_ES, GA, DE, PSO, COSYNE); quality diversity
(MAP_ELITES, CMA_ME) and NSGA2 register here from their own packages.

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
