"""SNES: separable natural evolution strategies.

Schaul, Glasmachers, Schmidhuber (2011), "High dimensions and heavy tails for natural evolution
strategies" (GECCO); Wierstra, Schaul, Glasmachers, Sun, Peters, Schmidhuber (2014), "Natural
evolution strategies", JMLR 15, Algorithm 6 (SNES) with the default population and learning
rates of their Table 1. Reference implementation: evosax's ``SNES``.

With ``restart_every_generations`` the search starts afresh (center ``center_init``, stdev
``stdev_init``, the generator running on) every that many generations, as CMA-ES's option of
that name does: a periodic restart with the same population (no IPOP growth). The run then
stands behind the new center.
"""

from __future__ import annotations

from math import floor, log, sqrt

import numpy as np

from neuro_evolution.core.schema import config_class, option
from neuro_evolution.optimizers.base import OPTIMIZERS, OptimizerConfig
from neuro_evolution.optimizers.gaussian import GaussianSearch, center_init_option
from neuro_evolution.optimizers.shaping import nes_utilities
from neuro_evolution.optimizers.state_parts import RESTART_COUNTERS

NAME = "SNES"


@config_class
class SnesConfig(OptimizerConfig):
    """Options of the ``SNES`` optimizer; null picks the paper's default for the genome size."""

    population_size: int | None = option(
        None, doc="genomes per generation (null: 4 + floor(3 ln(genome size)))", ge=2
    )
    center_init: float = center_init_option()
    stdev_init: float = option(1.0, doc="initial stdev of every gene", gt=0)
    center_learning_rate: float = option(
        1.0, doc="eta_mu, step size of the center (natural gradient) update", gt=0
    )
    stdev_learning_rate: float | None = option(
        None,
        doc="eta_sigma, step size of the log-stdev update (null: (3 + ln G) / (5 sqrt G))",
        gt=0,
    )
    restart_every_generations: int | None = option(
        None,
        doc="start a fresh search (center_init, stdev_init; the generator runs on) every this"
        " many generations; the run then stands behind the new center. null: never",
        ge=1,
    )

    def population_for(self, genome_size: int) -> int:
        """Samples per generation for genomes of ``genome_size``."""
        if self.population_size is not None:
            return self.population_size
        return 4 + floor(3 * log(genome_size))

    def stdev_rate_for(self, genome_size: int) -> float:
        """eta_sigma for genomes of ``genome_size``."""
        if self.stdev_learning_rate is not None:
            return self.stdev_learning_rate
        return (3 + log(genome_size)) / (5 * sqrt(genome_size))


def snes_update(
    noise: np.ndarray,
    utilities: np.ndarray,
    mean: np.ndarray,
    stdev: np.ndarray,
    eta_mean: float,
    eta_stdev: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(new mean, new stdev) after one SNES step (Wierstra et al. 2014, Algorithm 6).

    grad_mu = sum_k u_k s_k;  grad_sigma = sum_k u_k (s_k^2 - 1);
    mu <- mu + eta_mu sigma grad_mu;  sigma <- sigma exp(eta_sigma / 2 grad_sigma).
    """
    grad_mean = utilities @ noise
    # sum_k u_k (s_k^2 - 1) without a (P, G) temporary (einsum loops in C).
    grad_stdev = np.einsum("k,kj,kj->j", utilities, noise, noise) - utilities.sum()
    return mean + eta_mean * stdev * grad_mean, stdev * np.exp(eta_stdev / 2 * grad_stdev)


@OPTIMIZERS.register(NAME, config=SnesConfig)
class Snes(GaussianSearch):
    """SNES over float64 genomes: plain (not mirrored) samples, rank-based NES utilities."""

    NAME = NAME
    STATE = (*GaussianSearch.STATE, *RESTART_COUNTERS)

    def __init__(self, config: SnesConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, config.population_for(max(genome_size, 1)))
        self.stdev = np.full(genome_size, config.stdev_init)
        self._eta_stdev = config.stdev_rate_for(max(genome_size, 1))
        self.restarts = 0  # fresh starts so far
        self.restart_generation = 0  # the generation count at the last fresh start

    def _sample(self, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal((self.population_size, self.genome_size))

    def _update(self, noise: np.ndarray, fitness: np.ndarray) -> None:
        self.mean, self.stdev = snes_update(
            noise,
            nes_utilities(fitness),
            self.mean,
            self.stdev,
            self.config.center_learning_rate,
            self._eta_stdev,
        )
        every = self.config.restart_every_generations
        if every is not None and self.generation + 1 - self.restart_generation >= every:
            self.mean = np.full(self.genome_size, float(self.config.center_init))
            self.stdev = np.full(self.genome_size, self.config.stdev_init)
            self.restarts += 1
            self.restart_generation = self.generation + 1
