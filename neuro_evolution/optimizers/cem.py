"""CEM: the noisy cross-entropy method of Szita & Lőrincz (2006), "Learning Tetris Using the
Noisy Cross-Entropy Method", Neural Computation 18(12), over a diagonal Gaussian.

Generation t draws n genomes w_i ~ N(mu_t, diag(sigma_t^2)) and keeps the elite set I, the
floor(rho n) genomes of highest fitness (ties: the earlier sample). Then, gene by gene,

    mu_{t+1}      = sum_{i in I} w_i / |I|
    sigma^2_{t+1} = sum_{i in I} (w_i - mu_{t+1})^2 / |I| + Z_{t+1}

with the added noise Z_t: 0 (``noise: none``, the plain CE method), a constant a
(``constant``) or max(a - t / b, 0) (``decreasing``), t counting generations from 0. The paper
has no smoothing of mu or sigma (its alpha = 1) and neither has this. Defaults: the paper's
n = 100, rho = 0.1, mu_0 = 0, sigma_0^2 = 100 and its best schedule Z_t = max(5 - t/10, 0)
(its constant schedule was Z_t = 4).
"""

from __future__ import annotations

from math import floor
from typing import Literal

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import OPTIMIZERS, OptimizerConfig
from neuro_evolution.optimizers.gaussian import GaussianSearch, center_init_option

NAME = "CEM"

NoiseSchedule = Literal["none", "constant", "decreasing"]


@config_class
class CemConfig(OptimizerConfig):
    """Options of the ``CEM`` optimizer (noisy cross-entropy method)."""

    population_size: int = option(100, doc="n: genomes per generation", ge=2)
    elite_fraction: float = option(
        0.1, doc="rho: the best floor(rho n) genomes set the next mean and variance", gt=0, le=1
    )
    center_init: float = center_init_option()
    stdev_init: float = option(10.0, doc="sigma_0: initial stdev of every gene", gt=0)
    noise: NoiseSchedule = option(
        "decreasing",
        doc="Z_t added to the variance: none (0), constant (noise_a) or decreasing"
        " (max(noise_a - t / noise_b, 0), t the generation)",
    )
    noise_a: float = option(5.0, doc="a: the constant noise, or the decreasing one at t = 0", ge=0)
    noise_b: float = option(10.0, doc="b: generations per unit decrease of the noise", gt=0)

    @property
    def elite_count(self) -> int:
        """|I| = floor(rho n)."""
        return floor(self.elite_fraction * self.population_size)

    def validate(self, path: str) -> None:
        if self.elite_count < 1:
            raise ConfigError(
                join(path, "elite_fraction"),
                f"keeps floor({self.elite_fraction} * {self.population_size}) = 0 elites;"
                " raise elite_fraction or population_size",
            )

    def added_noise(self, t: int) -> float:
        """Z_t for generation ``t``."""
        if self.noise == "none":
            return 0.0
        if self.noise == "constant":
            return self.noise_a
        return max(self.noise_a - t / self.noise_b, 0.0)


def cem_update(
    samples: np.ndarray, fitness: np.ndarray, elite_count: int, added_noise: float
) -> tuple[np.ndarray, np.ndarray]:
    """(mu_{t+1}, sigma_{t+1}): mean and (biased) variance of the elite samples, plus Z_{t+1}."""
    elites = samples[np.argsort(-fitness, kind="stable")[:elite_count]]
    mean = elites.mean(axis=0)
    variance = np.mean((elites - mean) ** 2, axis=0) + added_noise
    return mean, np.sqrt(variance)


@OPTIMIZERS.register(NAME, config=CemConfig)
class Cem(GaussianSearch):
    """The noisy CE method over float64 genomes: plain Gaussian samples, elite mean/variance."""

    NAME = NAME

    def __init__(self, config: CemConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, config.population_size)
        self.stdev = np.full(genome_size, config.stdev_init)

    def _sample(self, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal((self.population_size, self.genome_size))

    def _update(self, noise: np.ndarray, fitness: np.ndarray) -> None:
        samples = self.mean + self.stdev * noise
        noise_term = self.config.added_noise(self.generation + 1)  # Z_{t+1}
        self.mean, self.stdev = cem_update(samples, fitness, self.config.elite_count, noise_term)
