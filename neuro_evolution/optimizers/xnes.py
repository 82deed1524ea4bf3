"""XNES: exponential natural evolution strategies with a full covariance factor.

Glasmachers, Schaul, Sun, Wierstra, Schmidhuber (2010), "Exponential natural evolution
strategies" (GECCO); Wierstra, Schaul, Glasmachers, Sun, Peters, Schmidhuber (2014), "Natural
evolution strategies", JMLR 15, Algorithm 5, with the defaults of their Table 1. The search
distribution is N(mu, sigma^2 B B^T) with det(B) = 1; each generation draws z_k ~ N(0, I) and asks
x_k = mu + sigma B z_k, then with the NES utilities u_k (best first, summing to 0):

    G_delta = sum_k u_k z_k;   G_M = sum_k u_k (z_k z_k^T - I);
    G_sigma = tr(G_M) / d;     G_B = G_M - G_sigma I;
    mu <- mu + eta_mu sigma B G_delta;
    sigma <- sigma exp(eta_sigma / 2 G_sigma);   B <- B expm(eta_B / 2 G_B).

Defaults: lambda = 4 + floor(3 ln d), eta_mu = 1, eta_sigma = eta_B = 3 (3 + ln d) / (5 d sqrt d).
G_B is symmetric, so its matrix exponential is taken through its eigendecomposition.

Reference implementation: evosax's ``xNES``. It deviates from the paper in its B update, which
multiplies B elementwise by exp(eta_B / 2 G_B) (so B stays diagonal: a separable search); this
file follows the paper (a matrix exponential and a matrix product).

Memory: B is d x d float64, so the state is O(d^2) (:meth:`Xnes.state_bytes`).
"""

from __future__ import annotations

from math import exp, floor, log, sqrt

import numpy as np

from neuro_evolution.core.schema import config_class, option
from neuro_evolution.optimizers.base import (
    OPTIMIZERS,
    Evaluations,
    Optimizer,
    OptimizerConfig,
)
from neuro_evolution.optimizers.declared_state import Array, Generator, Pending, Value
from neuro_evolution.optimizers.gaussian import center_init_option
from neuro_evolution.optimizers.rng import owned_generator
from neuro_evolution.optimizers.shaping import nes_utilities
from neuro_evolution.support.seeds import GENERATOR_PURPOSE

NAME = "XNES"
# d x d float64 arrays alive at the peak of a tell: B, G_M, and inside eigh the copy of G_B,
# LAPACK syevd's 2 d^2 work array and the returned eigenvectors.
PEAK_MATRICES = 6


@config_class
class XnesConfig(OptimizerConfig):
    """Options of the ``XNES`` optimizer; null picks the paper's default for the genome size."""

    population_size: int | None = option(
        None, doc="genomes per generation (null: 4 + floor(3 ln(genome size)))", ge=2
    )
    center_init: float = center_init_option()
    stdev_init: float = option(1.0, doc="initial step size sigma (B starts as the identity)", gt=0)
    center_learning_rate: float = option(
        1.0, doc="eta_mu, step size of the center (natural gradient) update", gt=0
    )
    stdev_learning_rate: float | None = option(
        None,
        doc="eta_sigma, step size of the log-sigma update (null: 3 (3 + ln G) / (5 G sqrt G))",
        gt=0,
    )
    shape_learning_rate: float | None = option(
        None,
        doc="eta_B, step size of the shape matrix B update (null: 3 (3 + ln G) / (5 G sqrt G))",
        gt=0,
    )

    def population_for(self, genome_size: int) -> int:
        """Samples per generation for genomes of ``genome_size``."""
        if self.population_size is not None:
            return self.population_size
        return 4 + floor(3 * log(genome_size))

    def rates_for(self, genome_size: int) -> tuple[float, float]:
        """(eta_sigma, eta_B) for genomes of ``genome_size``."""
        d = genome_size
        default = 3 * (3 + log(d)) / (5 * d * sqrt(d))
        sigma_rate = self.stdev_learning_rate
        shape_rate = self.shape_learning_rate
        return (
            default if sigma_rate is None else sigma_rate,
            default if shape_rate is None else shape_rate,
        )


def symmetric_expm(matrix: np.ndarray) -> np.ndarray:
    """expm(matrix) of a symmetric matrix: Q diag(exp(w)) Q^T from its eigendecomposition."""
    eigenvalues, vectors = np.linalg.eigh(matrix)
    return (vectors * np.exp(eigenvalues)) @ vectors.T


def xnes_update(
    noise: np.ndarray,
    utilities: np.ndarray,
    mean: np.ndarray,
    sigma: float,
    shape: np.ndarray,
    rates: tuple[float, float, float],
) -> tuple[np.ndarray, float, np.ndarray]:
    """(mu, sigma, B) after one xNES step (Wierstra et al. 2014, Algorithm 5) from the asked
    rows z_k (``noise``) and their utilities; ``rates`` is (eta_mu, eta_sigma, eta_B)."""
    eta_mean, eta_sigma, eta_shape = rates
    d = mean.shape[0]
    grad_delta = utilities @ noise  # G_delta = sum_k u_k z_k
    grad_m = (noise.T * utilities) @ noise  # sum_k u_k z_k z_k^T
    grad_m[np.diag_indices(d)] -= utilities.sum()  # G_M = sum_k u_k (z_k z_k^T - I)
    grad_sigma = float(np.trace(grad_m)) / d  # G_sigma = tr(G_M) / d
    grad_m[np.diag_indices(d)] -= grad_sigma  # G_B = G_M - G_sigma I (in place)
    new_mean = mean + eta_mean * sigma * (shape @ grad_delta)
    new_sigma = sigma * exp(eta_sigma / 2 * grad_sigma)
    new_shape = shape @ symmetric_expm(eta_shape / 2 * grad_m)
    return new_mean, new_sigma, new_shape


@OPTIMIZERS.register(NAME, config=XnesConfig)
class Xnes(Optimizer):
    """xNES over float64 genomes: plain (not mirrored) samples, rank-based NES utilities.

    State between generations: mu, sigma, B, the generation count, the generator and, between
    ``ask`` and ``tell``, the asked rows z_k.
    """

    config: XnesConfig
    NAME = NAME
    STATE = (
        Array("mean", ("genome_size",), key="center"),
        Value("sigma"),
        Array("shape", ("genome_size", "genome_size")),
        Pending((("_noise", "asked_noise"),)),
        Generator("_rng"),
    )

    def __init__(self, config: XnesConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.population_size = config.population_for(genome_size)
        eta_sigma, eta_shape = config.rates_for(genome_size)
        self._rates = (config.center_learning_rate, eta_sigma, eta_shape)
        self.mean = np.full(genome_size, float(config.center_init))
        self.sigma = float(config.stdev_init)
        self.shape = np.eye(genome_size)  # B, det(B) = 1
        self._rng = owned_generator(seed, GENERATOR_PURPOSE)
        self._noise: np.ndarray | None = None

    @classmethod
    def state_bytes(cls, config: XnesConfig, genome_size: int) -> int:
        """Peak bytes: ``PEAK_MATRICES`` d x d float64 arrays, four (P, d) arrays (z, B z, the
        asked genomes and the caller's copy) and a few vectors of d."""
        population = config.population_for(genome_size)
        return 8 * (PEAK_MATRICES * genome_size**2 + 4 * population * genome_size + 8 * genome_size)

    REDRAWS = True

    def _genomes(self) -> np.ndarray:
        assert self._noise is not None
        return self.mean + self.sigma * (self._noise @ self.shape.T)  # x_k = mu + sigma B z_k

    def _ask(self) -> np.ndarray:
        """``population_size`` genomes mu + sigma B z_k (z drawn once per generation)."""
        if self._noise is None:
            self._noise = self._rng.standard_normal((self.population_size, self.genome_size))
            return self.resampled(self._genomes())
        return self._genomes()

    def _asked_count(self) -> int:
        return 0 if self._noise is None else len(self._noise)

    def _redraw(self, rows: np.ndarray) -> np.ndarray:
        """New rows z_k for ``rows``."""
        assert self._noise is not None
        self._noise[rows] = self._rng.standard_normal((len(rows), self.genome_size))
        return self._genomes()

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Update mu, sigma and B from the fitness of the last ask (hall of fame unused)."""
        assert self._noise is not None
        self.mean, self.sigma, self.shape = xnes_update(
            self._noise, nes_utilities(fitness), self.mean, self.sigma, self.shape, self._rates
        )
        self._noise = None

    def center(self) -> np.ndarray:
        """The distribution's mean mu."""
        return self.mean.copy()
