"""LM_MA_ES: the limited-memory matrix adaptation evolution strategy, O(m n) time and memory.

I. Loshchilov, T. Glasmachers and H.-G. Beyer, "Large Scale Black-box Optimization by
Limited-Memory Matrix Adaptation", IEEE Trans. Evolutionary Computation 23(2), 2019,
Algorithm 1. MA-ES's n x n transformation is replaced by m direction vectors m_1..m_m, each an
evolution path of <z>_w with its own rate, applied one after the other to every sample:

    z_l ~ N(0, I);  d_l = z_l;  for j = 1..min(t, m):
        d_l <- (1 - c_d,j) d_l + c_d,j m_j (m_j^T d_l)                   (lines 5-8)
    y <- y + sigma <d>_w                                                 (line 10)
    p <- (1 - c_sigma) p + sqrt(mu_w c_sigma (2 - c_sigma)) <z>_w        (line 11)
    m_i <- (1 - c_c,i) m_i + sqrt(mu_w c_c,i (2 - c_c,i)) <z>_w          (lines 12-13)
    sigma <- sigma exp(c_sigma/2 (||p||^2 / n - 1))                      (line 14)

with t the generations told since the start, lambda = m = 4 + floor(3 ln n), mu = lambda // 2
and CMA-ES's weights (:mod:`cma_common`), c_sigma = 2 lambda / n, c_d,i = 1 / (1.5^(i-1) n)
and c_c,i = lambda / (4^(i-1) n). The paper is written for large n: for n < 2 lambda its
c_sigma (for n < lambda its c_c,1) exceeds 1, which flips the path's sign every generation, and
past 2 the square root is undefined. Here every rate is capped at 1, which changes only genomes
of fewer than 26 genes at the default lambda.

Reference implementation: evosax's ``LM_MA_ES``. It controls sigma with CMA-ES's cumulative
step-size adaptation (c_sigma = (mu_w + 2)/(n + mu_w + 5), ||p|| / E||N(0, I)||) instead of
line 14, and pairs the rank-ordered weights with the samples in population order in <z>_w of
lines 12-13; this file follows the paper in both.
"""

from __future__ import annotations

from math import exp, log

import numpy as np

from neuro_evolution.core.schema import config_class, option
from neuro_evolution.optimizers.base import OPTIMIZERS
from neuro_evolution.optimizers.cma_common import CmaConfig
from neuro_evolution.optimizers.cma_restarts import RestartsConfig
from neuro_evolution.optimizers.declared_state import Array
from neuro_evolution.optimizers.ma_es import (
    NO_RESTART_SCHEDULE,
    MatrixAdaptation,
    refuse_restart_schedule,
)

NAME = "LM_MA_ES"


@config_class
class LmMaEsConfig(CmaConfig):
    """Options of the ``LM_MA_ES`` optimizer (m direction vectors; O(m genome size) memory)."""

    directions: int | None = option(
        None,
        doc="direction vectors m of the transformation (null: 4 + floor(3 ln(genome size)))",
        ge=1,
    )

    restarts: RestartsConfig | None = option(None, doc=NO_RESTART_SCHEDULE)

    def validate(self, path: str) -> None:
        CmaConfig.validate(self, path)  # (zero-argument super fails with slots)
        refuse_restart_schedule(self, path, NAME)

    def directions_for(self, genome_size: int) -> int:
        """m for genomes of ``genome_size`` (Algorithm 1's default when null)."""
        if self.directions is not None:
            return self.directions
        return 4 + int(3 * log(genome_size))


def transform(z: np.ndarray, directions: np.ndarray, rates: np.ndarray, count: int) -> np.ndarray:
    """d for rows z: the first ``count`` direction vectors applied in order (lines 6-8)."""
    d = z.copy()
    for vector, rate in zip(directions[:count], rates[:count]):
        projection = d @ vector  # m_j^T d_l for every row l
        d *= 1 - rate
        d += np.outer(rate * projection, vector)
    return d


@OPTIMIZERS.register(NAME, config=LmMaEsConfig)
class LmMaEs(MatrixAdaptation):
    """LM-MA-ES; every ``ask`` returns ``population_size`` genomes."""

    NAME = NAME
    TRANSFORMATION = (Array("directions", ("count", "genome_size")),)
    config: LmMaEsConfig
    directions: np.ndarray  # (m, n) the vectors m_i (set by _fresh_transformation)

    def __init__(self, config: LmMaEsConfig, genome_size: int, seed: int):
        n = genome_size
        lam = config.lambda_for(max(n, 1))
        m = config.directions_for(max(n, 1))
        powers = np.arange(m, dtype=np.float64)
        self.count = m
        self.direction_rates = 1 / (1.5**powers * n)  # c_d,i (line 1)
        self.path_rates = np.minimum(lam / (4.0**powers * n), 1.0)  # c_c,i, capped (line 1)
        self.sigma_rate = min(2 * lam / n, 1.0)  # c_sigma, capped (line 1)
        super().__init__(config, genome_size, seed)

    @classmethod
    def state_bytes(cls, config: LmMaEsConfig, genome_size: int) -> int:
        """The m x n directions, their rates and one generation's samples (O((m + lambda) n))."""
        m = config.directions_for(max(genome_size, 1))
        return 8 * genome_size * m + 16 * m + cls._sample_bytes(config, genome_size)

    @property
    def path_rate(self) -> float:
        return self.sigma_rate

    def _transform(self, z: np.ndarray) -> np.ndarray:
        since = self.generation - self.restart_generation  # t of this search
        return transform(z, self.directions, self.direction_rates, min(since, self.count))

    def _adapt(self, best: np.ndarray) -> None:
        assert self._z is not None
        p, c = self.params, self.path_rates
        z_w = p.weights @ self._z[best]
        self.directions *= (1 - c)[:, None]  # lines 12-13
        self.directions += np.sqrt(p.mueff * c * (2 - c))[:, None] * z_w

    def _step_factor(self) -> float:
        squared = float(self.s @ self.s)
        return exp(self.sigma_rate / 2 * (squared / self.genome_size - 1))  # line 14

    def _fresh_transformation(self) -> None:
        self.directions = np.zeros((self.count, self.genome_size))
