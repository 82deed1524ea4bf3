"""ARS: Augmented Random Search, Mania, Guy & Recht (2018), "Simple random search of static
linear policies is competitive for reinforcement learning" (NeurIPS), Algorithm 1, V1-t.

Each generation draws N directions delta_k ~ N(0, I) and evaluates the mirrored pair
theta + nu delta_k (r+_k) and theta - nu delta_k (r-_k), rows 2k and 2k+1 of the ask. The b
directions with the largest max(r+_k, r-_k) are kept (Algorithm 1, line 6) and

    theta <- theta + alpha / (b sigma_R) sum_{k <= b} (r+_(k) - r-_(k)) delta_(k)    (line 7)

with sigma_R the standard deviation of the 2b returns used. When those 2b returns are all
equal every difference is 0 and the step is zero. V2's state normalization (line 2's
Sigma and mu) is the run's ``observation_normalization`` section, which normalizes
observations for any optimizer; ARS itself is V1-t's update, so V2-t is ARS with
``observation_normalization`` set.

Reference: evosax's ``ARS`` deviates from the paper: it steps the mean with an optax optimizer
(Adam by default) along the estimated gradient instead of the plain step of line 7, and keeps
a fixed half of the directions (elite ratio 0.5) instead of b. This follows the paper.
Defaults: the paper's HalfCheetah-v1 hyperparameters (N = 32, b = 4, alpha = 0.02,
nu = 0.03); the paper tunes them per task.
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import OPTIMIZERS, OptimizerConfig
from neuro_evolution.optimizers.gaussian import (
    MirroredSearch,
    center_init_option,
    check_even_population,
)

NAME = "ARS"


@config_class
class ArsConfig(OptimizerConfig):
    """Options of the ``ARS`` optimizer (Mania et al. 2018, Algorithm 1)."""

    population_size: int = option(
        64, doc="genomes per generation: 2N for N mirrored directions (even)", ge=2
    )
    top_b: int = option(
        4, doc="b: directions kept, the best by max(r+, r-); at most population_size / 2", ge=1
    )
    step_size: float = option(0.02, doc="alpha: step size of the center update", gt=0)
    noise: float = option(0.03, doc="nu: stdev of the exploration noise (every gene)", gt=0)
    center_init: float = center_init_option()

    def validate(self, path: str) -> None:
        check_even_population(self.population_size, path)
        directions = self.population_size // 2
        if self.top_b > directions:
            raise ConfigError(
                join(path, "top_b"),
                f"must be <= population_size / 2 = {directions} (the directions drawn),"
                f" got {self.top_b}; lower top_b or raise population_size",
            )


def ars_step(
    directions: np.ndarray, plus: np.ndarray, minus: np.ndarray, top_b: int, step_size: float
) -> np.ndarray:
    """The change of the center (Algorithm 1, lines 6-7) for directions delta_k (N, G) and their
    returns r+_k, r-_k: the b best by max(r+, r-) (ties: the lower k), scaled by alpha / (b
    sigma_R)."""
    best = np.argsort(-np.maximum(plus, minus), kind="stable")[:top_b]  # line 6
    used = np.concatenate([plus[best], minus[best]])
    sigma_r = float(np.std(used))
    if sigma_r == 0.0:  # all 2b returns equal: every difference r+ - r- is 0
        return np.zeros(directions.shape[1])
    return step_size / (top_b * sigma_r) * ((plus[best] - minus[best]) @ directions[best])


@OPTIMIZERS.register(NAME, config=ArsConfig)
class Ars(MirroredSearch):
    """ARS V1-t over float64 genomes; ``ask`` returns the pairs theta +- nu delta_k (rows 2k,
    2k+1)."""

    NAME = NAME

    def __init__(self, config: ArsConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, config.population_size)
        self.stdev = np.full(genome_size, config.noise)

    def _update(self, noise: np.ndarray, fitness: np.ndarray) -> None:
        step = ars_step(
            noise[0::2], fitness[0::2], fitness[1::2], self.config.top_b, self.config.step_size
        )
        self.mean = self.mean + step
