"""A user's optimizer that fails the way a diverging method does: ``DIVERGING_SNES`` is SNES
whose update at generation ``fail_at_generation`` raises :class:`FloatingPointError` (as
CR_FM_NES does when its update leaves the finite numbers), registered from a config's
``imports``; it serves the tests of a sweep whose run fails."""

from __future__ import annotations

import numpy as np

from neuro_evolution import config_class, option, register_optimizer
from neuro_evolution.optimizers.snes import Snes, SnesConfig


@config_class
class DivergingSnesConfig(SnesConfig):
    """SNES's options and the generation whose update raises."""

    fail_at_generation: int = option(2, doc="the generation whose tell raises", ge=0)


@register_optimizer("DIVERGING_SNES", config=DivergingSnesConfig)
class DivergingSnes(Snes):
    """SNES, until the update of generation ``fail_at_generation`` raises."""

    NAME = "DIVERGING_SNES"

    def _update(self, noise: np.ndarray, fitness: np.ndarray) -> None:
        if self.generation == self.config.fail_at_generation:
            raise FloatingPointError(f"DIVERGING_SNES diverged at generation {self.generation}")
        super()._update(noise, fitness)
