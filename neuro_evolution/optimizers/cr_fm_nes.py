"""CR_FM_NES: the cost-reduced fast-moving natural evolution strategy (O(d) memory).

Nomura & Ono (2022), "Fast Moving Natural Evolution Strategy for High-Dimensional Problems"
(IEEE CEC 2022, arXiv:2201.11422). The search distribution is N(m, sigma^2 D (I + v v^T) D) with
a diagonal D and one vector v (the restricted covariance of VD-CMA, Akimoto et al. 2014), so
time and memory per generation are O(lambda d). Each generation:

- mirrored samples z_k, z_{k + lambda/2} = -z_k; y_k = z_k + (sqrt(1 + |v|^2) - 1) <z_k, vb> vb
  with vb = v / |v|; x_k = m + sigma D y_k.
- w_k: the NES rank weights (best first, summing to 0); p_sigma <- (1 - c_sigma) p_sigma +
  sqrt(c_sigma (2 - c_sigma) mu_eff) sum_k w_k z_k.
- moving (|p_sigma| >= E|N(0, I)|): the distance weights w_k ~ (w_k + 1/lambda)
  exp(alpha_dist |z_k|), normalised to sum 1, minus 1/lambda, and eta_sigma = 1; otherwise the
  rank weights, with eta_sigma = eta_stag while |p_sigma| >= 0.1 E|N(0, I)|, else eta_conv.
- m <- m + eta_m sum_k w_k (x_k - m); p_c <- (1 - c_c) p_c + sqrt(c_c (2 - c_c) mu_eff)
  sum_k w_k (x_k - m) / sigma.
- the natural gradient of (D, v) from the rows y_k and the rank-one row p_c / D (VD-CMA's s and
  t), weighted eta_B w_k and c_1; D is then normalised to det(A)^(1/d) = 1.
- sigma <- sigma exp(eta_sigma / 2 sum_k w_k (|z_k|^2 - d) / d).

Defaults (the paper's, as in the authors' reference code nomuramasahir0/crfmnes): c_sigma,
c_c and c_1^CMA as in CMA-ES, c_1 = c_1^CMA (d - 5) / 6 (zero at d = 5, negative below),
alpha_dist = h^-1(d) min(1, sqrt(lambda / d)) where h^-1(d) solves
(1 + a^2) exp(a^2 / 2) / 0.24 - 10 - d = 0, eta_stag = tanh((0.024 lambda + 0.7 d + 20) /
(d + 12)), eta_conv = 2 tanh((0.025 lambda + 0.75 d + 10) / (d + 4)), eta_B =
tanh((min(0.02 lambda, 3 ln d) + 5) / (0.23 d + 25)); v starts as N(0, I / d), D = I.

Reference implementation: evosax's ``CR_FM_NES``. It deviates from the paper in three places:
it uses the rank weights clipped at 0 (so they sum to 1, not 0) for p_sigma and, while not
moving, for the update (which changes D, v and sigma); it computes mu_eff over the unclipped log
weights (3.09 instead of 3.41 at lambda = 10, and so c_sigma, c_c and c_1); and it caps d at
2,000 when solving for h^-1. This file follows the paper (w_k as they are, mu_eff =
1 / sum_k (w_k + 1/lambda)^2, h^-1 of the true d).
"""

from __future__ import annotations

import dataclasses
from math import exp, floor, log, sqrt, tanh
from typing import Any

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
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

NAME = "CR_FM_NES"


@config_class
class CrFmNesConfig(OptimizerConfig):
    """Options of the ``CR_FM_NES`` optimizer; null picks the default for the genome size."""

    population_size: int | None = option(
        None,
        doc="genomes per generation, even (mirrored pairs; null: 4 + floor(3 ln(genome size)),"
        " rounded up to even)",
        ge=2,
    )
    center_init: float = center_init_option()
    stdev_init: float = option(1.0, doc="initial step size sigma (D = I at the start)", gt=0)
    center_learning_rate: float = option(1.0, doc="eta_m, step size of the center update", gt=0)

    def validate(self, path: str) -> None:
        size = self.population_size
        if size is not None and size % 2:
            raise ConfigError(
                join(path, "population_size"),
                f"must be even (mirrored pairs z, -z), got {size}; use {size + 1} or {size - 1}",
            )

    def population_for(self, genome_size: int) -> int:
        """Samples per generation for genomes of ``genome_size``."""
        if self.population_size is not None:
            return self.population_size
        size = 4 + floor(3 * log(genome_size))
        return size + size % 2


def inverse_h(dimension: int) -> float:
    """The positive root a of (1 + a^2) exp(a^2 / 2) / 0.24 - 10 - d (increasing in a > 0),
    by bisection to machine precision."""
    target = 0.24 * (10.0 + dimension)
    low, high = 0.0, 1.0
    while (1 + high * high) * exp(high * high / 2) < target:
        low, high = high, 2 * high
    while True:
        middle = (low + high) / 2
        if middle in (low, high):
            return middle
        if (1 + middle * middle) * exp(middle * middle / 2) < target:
            low = middle
        else:
            high = middle


@dataclasses.dataclass(frozen=True)
class CrFmNesParameters:
    """The strategy parameters for one genome size and population (fixed for the run)."""

    population_size: int
    mu_eff: float
    c_sigma: float
    c_c: float
    c_1: float
    chi_n: float  # E|N(0, I)|
    alpha_dist: float
    eta_stag: float
    eta_conv: float
    eta_b: float

    @classmethod
    def for_genome(cls, population_size: int, d: int) -> CrFmNesParameters:
        lam = population_size
        positive = nes_utilities(-np.arange(lam, dtype=np.float64)) + 1.0 / lam  # w_k + 1/lambda
        mu_eff = 1.0 / float(positive @ positive)
        c1_cma = 2.0 / ((d + 1.3) ** 2 + mu_eff)
        return cls(
            population_size=lam,
            mu_eff=mu_eff,
            c_sigma=(mu_eff + 2.0) / (d + mu_eff + 5.0),
            c_c=(4.0 + mu_eff / d) / (d + 4.0 + 2.0 * mu_eff / d),
            c_1=c1_cma * (d - 5) / 6,
            chi_n=sqrt(d) * (1.0 - 1.0 / (4.0 * d) + 1.0 / (21.0 * d * d)),
            alpha_dist=inverse_h(d) * min(1.0, sqrt(lam / d)),
            eta_stag=tanh((0.024 * lam + 0.7 * d + 20.0) / (d + 12.0)),
            eta_conv=2.0 * tanh((0.025 * lam + 0.75 * d + 10.0) / (d + 4.0)),
            eta_b=tanh((min(0.02 * lam, 3.0 * log(d)) + 5.0) / (0.23 * d + 25.0)),
        )


def scaled_steps(z: np.ndarray, v: np.ndarray) -> np.ndarray:
    """y = (I + (sqrt(1 + |v|^2) - 1) vb vb^T) z for rows z, vb = v / |v|."""
    norm2 = float(v @ v)
    v_bar = v / sqrt(norm2)
    return z + ((sqrt(1.0 + norm2) - 1.0) * (z @ v_bar))[:, None] * v_bar


def natural_gradient_dv(rows: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, t): per row y of ``rows`` the natural gradient components of D and v of the
    restricted covariance D (I + v v^T) D (Akimoto et al. 2014's VD-CMA, as CR-FM-NES uses it)."""
    norm2 = float(v @ v)
    norm4 = norm2 * norm2
    v_bar = v / sqrt(norm2)
    v_bar2 = v_bar * v_bar
    gamma = 1.0 + norm2
    along = rows @ v_bar  # <y, vb> per row
    alpha = min(1.0, sqrt(norm4 + (2 * gamma - sqrt(gamma)) / float(v_bar2.max())) / (2 + norm2))
    t = rows * along[:, None] - 0.5 * v_bar * (along * along + gamma)[:, None]
    b = -(1 - alpha * alpha) * norm4 / gamma + 2 * alpha * alpha
    inv_h = 1.0 / (2.0 - (b + 2 * alpha * alpha) * v_bar2)
    s = rows * rows - (norm2 / gamma) * (rows * v_bar) * along[:, None] - 1.0
    s -= (alpha / gamma) * ((2 + norm2) * (t * v_bar) - norm2 * np.outer(t @ v_bar, v_bar2))
    inv_h_v_bar2 = inv_h * v_bar2
    s = s * inv_h - (b / (1 + b * float(v_bar2 @ inv_h_v_bar2))) * np.outer(
        s @ inv_h_v_bar2, inv_h_v_bar2
    )
    t -= alpha * ((2 + norm2) * (s * v_bar) - np.outer(s @ v_bar2, v_bar))
    return s, t


@OPTIMIZERS.register(NAME, config=CrFmNesConfig)
class CrFmNes(Optimizer):
    """CR-FM-NES over float64 genomes: mirrored samples (rows k and k + lambda/2), rank and
    distance weights, the restricted covariance D (I + v v^T) D.

    State between generations: m, sigma, D, v, the two evolution paths, the generation count,
    the generator and, between ``ask`` and ``tell``, the asked rows z_k.
    """

    config: CrFmNesConfig
    NAME = NAME
    STATE = (
        Array("mean", ("genome_size",), key="center"),
        Value("sigma"),
        Array("D", ("genome_size",)),
        Array("v", ("genome_size",)),
        Array("p_sigma", ("genome_size",)),
        Array("p_c", ("genome_size",)),
        Pending((("_noise", "asked_noise"),)),
        Generator("_rng"),
    )

    def __init__(self, config: CrFmNesConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        d = genome_size
        self.params = CrFmNesParameters.for_genome(config.population_for(d), d)
        self.population_size = self.params.population_size
        self._rng = owned_generator(seed, GENERATOR_PURPOSE)
        self.mean = np.full(d, float(config.center_init))
        self.sigma = float(config.stdev_init)
        self.D = np.ones(d)
        self.v = self._rng.standard_normal(d) / sqrt(d)
        self.p_sigma = np.zeros(d)
        self.p_c = np.zeros(d)
        self._noise: np.ndarray | None = None

    @classmethod
    def state_bytes(cls, config: CrFmNesConfig, genome_size: int) -> int:
        """Peak bytes: eight (lambda + 1, d) arrays of a tell (z, y, the extended rows, s, t and
        their temporaries), the caller's copy of the asked genomes and 12 vectors of d."""
        rows = config.population_for(genome_size) + 1
        return 8 * genome_size * (9 * rows + 12)

    REDRAWS = True

    def _steps(self) -> np.ndarray:
        assert self._noise is not None
        return scaled_steps(self._noise, self.v)

    def _genomes(self) -> np.ndarray:
        return self.mean + self.sigma * self.D * self._steps()  # x_k = m + sigma D y_k

    def _mirrored(self, count: int) -> np.ndarray:
        half = self._rng.standard_normal((count, self.genome_size))
        return np.concatenate([half, -half])

    def _ask(self) -> np.ndarray:
        """``population_size`` genomes m + sigma D y_k, mirrored, drawn once per generation."""
        if self._noise is None:
            self._noise = self._mirrored(self.population_size // 2)
            return self.resampled(self._genomes())
        return self._genomes()

    def _asked_count(self) -> int:
        return 0 if self._noise is None else len(self._noise)

    def _redraw(self, rows: np.ndarray) -> np.ndarray:
        """A redrawn row takes its mirrored partner along: the pair (z, -z) is one sample."""
        assert self._noise is not None
        half = self.population_size // 2
        pairs = np.unique(rows % half)
        drawn = self._rng.standard_normal((len(pairs), self.genome_size))
        self._noise[pairs] = drawn
        self._noise[pairs + half] = -drawn
        return self._genomes()

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Update m, sigma, D and v from the fitness of the last ask (hall of fame unused);
        FloatingPointError, the state unchanged, when the update is not finite."""
        with np.errstate(all="ignore"):
            try:
                update = self._update(fitness)
            except (ZeroDivisionError, OverflowError):
                update = None
        if update is None or not all(np.all(np.isfinite(part)) for part in update):
            raise FloatingPointError(self._divergence())
        self.mean, self.sigma, self.D, self.v, self.p_sigma, self.p_c = update
        self._noise = None

    def _divergence(self) -> str:
        """The error of an update that left the finite numbers: where and what to change."""
        return (
            f"{NAME} diverged at generation {self.generation}: the update of D, v and sigma is "
            f"not finite (|v| = {np.linalg.norm(self.v):.3g}, sigma = {self.sigma:.3g}); the "
            f"paper's rates for D and v grow with the population ({self.population_size} for "
            f"{self.genome_size} genes here): set a smaller optimizer.population_size or "
            "optimizer.stdev_init"
        )

    def _update(self, fitness: np.ndarray) -> tuple[Any, ...]:
        """(m, sigma, D, v, p_sigma, p_c) after one generation's update (module docstring)."""
        assert self._noise is not None
        p, z, d = self.params, self._noise, self.genome_size
        lam = p.population_size
        ranked = nes_utilities(fitness)  # w_k, best first by fitness, summing to 0
        p_sigma = (1 - p.c_sigma) * self.p_sigma + sqrt(p.c_sigma * (2 - p.c_sigma) * p.mu_eff) * (
            ranked @ z
        )
        p_sigma_norm = float(np.linalg.norm(p_sigma))
        if p_sigma_norm >= p.chi_n:  # moving: distance weights, eta_sigma = eta_move = 1
            raw = (ranked + 1.0 / lam) * np.exp(p.alpha_dist * np.linalg.norm(z, axis=1))
            weights, eta_sigma = raw / raw.sum() - 1.0 / lam, 1.0
        else:
            weights = ranked
            eta_sigma = p.eta_stag if p_sigma_norm >= 0.1 * p.chi_n else p.eta_conv
        y = self._steps()
        step = self.sigma * self.D * (weights @ y)  # sum_k w_k (x_k - m)
        p_c = (1 - p.c_c) * self.p_c + sqrt(p.c_c * (2 - p.c_c) * p.mu_eff) * (step / self.sigma)
        mean = self.mean + self.config.center_learning_rate * step
        s, t = natural_gradient_dv(np.vstack([y, p_c / self.D]), self.v)
        extended = np.append(p.eta_b * weights, p.c_1)
        v = self.v + (extended @ t) / sqrt(float(self.v @ self.v))
        D = self.D + (extended @ s) * self.D
        # det(A)^(1/d) with A = D sqrt(I + v v^T): normalise it to 1
        D = D / exp(np.log(D).sum() / d + log(1.0 + float(v @ v)) / (2 * d))
        grad_sigma = float(weights @ (np.einsum("kj,kj->k", z, z) - d)) / d
        sigma = self.sigma * exp(eta_sigma / 2 * grad_sigma)
        return mean, sigma, D, v, p_sigma, p_c

    def center(self) -> np.ndarray:
        """The distribution's mean m."""
        return self.mean.copy()
