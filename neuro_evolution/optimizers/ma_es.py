"""MA_ES: the matrix adaptation evolution strategy, CMA-ES without a covariance matrix.

H.-G. Beyer and B. Sendhoff, "Simplify Your Covariance Matrix Adaptation Evolution Strategy",
IEEE Trans. Evolutionary Computation 21(5), 2017, Fig. 3, the (mu/mu_w, lambda)-MA-ES. It learns
the transformation M (C = M M^T) directly, so sampling needs no decomposition of C:

    z_l ~ N(0, I),  d_l = M z_l,  x_l = y + sigma d_l                  (M3)-(M5)
    y <- y + sigma <d>_w                                                 (M8)
    s <- (1 - c_s) s + sqrt(mu_eff c_s (2 - c_s)) <z>_w                  (M9)
    M <- M [I + c_1/2 (s s^T - I) + c_w/2 (<z z^T>_w - I)]               (M10)
    sigma <- sigma exp(c_s/d_sigma (||s|| / E||N(0, I)|| - 1))           (M11)

<.>_w is the weighted sum over the mu best with CMA-ES's weights; c_s, c_1, c_w = c_mu and
d_sigma are CMA-ES's (N. Hansen, arXiv:1604.00772, Table 1), taken from :mod:`cma_common`.
(M10) is computed as (1 - (c_1 + c_w)/2) M + c_1/2 (M s) s^T + c_w/2 sum_i w_i d_i z_i^T with
d_i = M z_i, O(mu n^2) instead of an n^3 product.

Reference implementation: evosax's ``MA_ES``. It pairs the rank-ordered weights with the
samples in population order in <z z^T>_w; this file follows the paper (the mu best samples).

Memory: M is n x n float64, so MA_ES is for genomes up to a few thousand genes (see
:meth:`MaEs.state_bytes`); ``LM_MA_ES`` keeps O(m n).
"""

from __future__ import annotations

from abc import abstractmethod
from math import exp, sqrt
from typing import ClassVar

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import OPTIMIZERS, Evaluations, Optimizer
from neuro_evolution.optimizers.cma_common import CmaConfig, CmaParameters
from neuro_evolution.optimizers.cma_restarts import RestartsConfig
from neuro_evolution.optimizers.declared_state import Array, Entry, Generator, Pending, Value
from neuro_evolution.optimizers.rng import owned_generator
from neuro_evolution.optimizers.state_parts import RESTART_COUNTERS
from neuro_evolution.support.seeds import GENERATOR_PURPOSE

NAME = "MA_ES"
# n x n float64 arrays alive at the peak of the M update: M, the decayed copy and the two
# rank-one / rank-mu products.
PEAK_MATRICES = 4


class MatrixAdaptation(Optimizer):
    """Sampling, mean and s-path update shared by MA_ES and LM_MA_ES; a subclass owns the
    transformation (d = M z), its update and the step-size rule.

    State between generations: mean, sigma, the path s, the transformation, the generation
    count, the Generator and, between ``ask`` and ``tell``, the asked z and d = M z.
    """

    # The transformation's state entries (M, or LM-MA-ES's directions).
    TRANSFORMATION: ClassVar[tuple[Entry, ...]]
    config: CmaConfig
    REDRAWS = True

    def __init__(self, config: CmaConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.params = CmaParameters.for_genome(config, genome_size)
        self.population_size = self.params.population_size
        self.restarts = 0  # fresh starts so far (restart_every_generations)
        self.restart_generation = 0  # the generation count at the last fresh start
        self._random = owned_generator(seed, GENERATOR_PURPOSE)
        self._z: np.ndarray | None = None  # z_l of the pending ask, (lambda, n)
        self._d: np.ndarray | None = None  # d_l = M z_l of the pending ask
        self._fresh_distribution()

    # --- the transformation --------------------------------------------------------------------
    @property
    @abstractmethod
    def path_rate(self) -> float:
        """c_s, the learning rate of the path s."""

    @abstractmethod
    def _transform(self, z: np.ndarray) -> np.ndarray:
        """d = M z for rows z ~ N(0, I)."""

    @abstractmethod
    def _adapt(self, best: np.ndarray) -> None:
        """Update the transformation from the asked rows ``best`` (best first) and the new s."""

    @abstractmethod
    def _step_factor(self) -> float:
        """sigma's factor this generation, from the new s."""

    @abstractmethod
    def _fresh_transformation(self) -> None:
        """M = I (the start, and after a restart)."""

    # --- ask / tell ----------------------------------------------------------------------------
    def _ask(self) -> np.ndarray:
        """lambda samples y + sigma M z_l (M3-M5), drawn once per generation."""
        if self._z is None:
            self._z = self._random.standard_normal((self.population_size, self.genome_size))
            self._d = self._transform(self._z)
            return self.resampled(self.mean + self.sigma * self._d)
        assert self._d is not None
        return self.mean + self.sigma * self._d

    def _asked_count(self) -> int:
        return 0 if self._z is None else len(self._z)

    def _redraw(self, rows: np.ndarray) -> np.ndarray:
        """New z and d = M z for ``rows``."""
        assert self._z is not None and self._d is not None
        z = self._random.standard_normal((len(rows), self.genome_size))
        self._z[rows] = z
        self._d[rows] = self._transform(z)
        return self.mean + self.sigma * self._d

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Move mean, s, the transformation and sigma towards the mu best (hall of fame unused)."""
        assert self._z is not None and self._d is not None
        p = self.params
        best = np.argsort(-fitness, kind="stable")[: p.mu]  # higher fitness first, ties by index
        self.mean += self.sigma * (p.weights @ self._d[best])  # (M8)
        c_s = self.path_rate
        self.s *= 1 - c_s  # (M9)
        self.s += sqrt(p.mueff * c_s * (2 - c_s)) * (p.weights @ self._z[best])
        self._adapt(best)  # (M10)
        self.sigma *= self._step_factor()  # (M11)
        self._z = self._d = None
        every = self.config.restart_every_generations
        since = self.generation + 1 - self.restart_generation
        if every is not None and since >= every:
            self._fresh_distribution()
            self.restarts += 1
            self.restart_generation = self.generation + 1

    def _fresh_distribution(self) -> None:
        """The initial mean and sigma, an empty path s and M = I."""
        n = self.genome_size
        self.mean = np.full(n, self.config.center_init or 0.0, dtype=np.float64)
        self.sigma = float(self.config.sigma)
        self.s = np.zeros(n)  # the evolution path of (M9)
        self._fresh_transformation()

    def center(self) -> np.ndarray:
        """The distribution's mean y."""
        return self.mean.copy()

    # --- state ---------------------------------------------------------------------------------
    def state_entries(self) -> tuple[Entry, ...]:
        """Mean, sigma, s, the transformation, the pending z and d, and the Generator."""
        return (
            *RESTART_COUNTERS,
            Array("mean", ("genome_size",)),
            Value("sigma"),
            Array("s", ("genome_size",)),
            *self.TRANSFORMATION,
            Pending((("_z", "asked_z"), ("_d", "asked_d"))),
            Generator("_random"),
        )

    @classmethod
    def _sample_bytes(cls, config: CmaConfig, genome_size: int) -> int:
        """Bytes of the O(lambda n) arrays of one generation: z, d and their temporary, the
        asked genomes and their temporary, the caller's copy (lambda x n each), and O(n)
        vectors."""
        lam = config.lambda_for(genome_size)
        return 8 * genome_size * (6 * lam + 8)


NO_RESTART_SCHEDULE = (
    "must be null: no IPOP/BIPOP schedule here (CMA_ES and SEP_CMA_ES have one); "
    "restart_every_generations gives periodic fresh starts"
)


def refuse_restart_schedule(config: CmaConfig, path: str, name: str) -> None:
    """MA-ES and LM-MA-ES run no IPOP/BIPOP schedule: a ``restarts`` section is refused in one
    line rather than accepted and ignored."""
    if config.restarts is not None:
        raise ConfigError(
            join(path, "restarts"),
            f"{name} has no IPOP/BIPOP restarts (CMA_ES and SEP_CMA_ES have): remove the "
            "section, use restart_every_generations for periodic fresh starts, or use CMA_ES",
        )


@config_class
class MaEsConfig(CmaConfig):
    """Options of the ``MA_ES`` optimizer (full transformation M; O(genome size^2) memory)."""

    restarts: RestartsConfig | None = option(None, doc=NO_RESTART_SCHEDULE)

    def validate(self, path: str) -> None:
        CmaConfig.validate(self, path)  # (zero-argument super fails with slots)
        refuse_restart_schedule(self, path, NAME)


@OPTIMIZERS.register(NAME, config=MaEsConfig)
class MaEs(MatrixAdaptation):
    """(mu/mu_w, lambda)-MA-ES; every ``ask`` returns ``population_size`` genomes."""

    NAME = NAME
    TRANSFORMATION = (Array("M", ("genome_size", "genome_size")),)
    M: np.ndarray  # the transformation (set by _fresh_transformation)

    @classmethod
    def state_bytes(cls, config: MaEsConfig, genome_size: int) -> int:
        """Peak bytes: ``PEAK_MATRICES`` n x n float64 arrays plus one generation's samples."""
        return PEAK_MATRICES * 8 * genome_size**2 + cls._sample_bytes(config, genome_size)

    @property
    def path_rate(self) -> float:
        return self.params.cs

    def _transform(self, z: np.ndarray) -> np.ndarray:
        return z @ self.M.T  # (M4): d = M z, one row per sample

    def _adapt(self, best: np.ndarray) -> None:
        assert self._z is not None and self._d is not None
        p = self.params
        # (M10) with M z_i = d_i: M <- (1 - (c1 + cw)/2) M + c1/2 (M s) s^T
        #   + cw/2 sum_i w_i d_i z_i^T (the weights sum to 1).
        rank_one = np.outer(self.M @ self.s, (p.c1 / 2) * self.s)
        rank_mu = (self._d[best].T * ((p.cmu / 2) * p.weights)) @ self._z[best]
        self.M *= 1 - (p.c1 + p.cmu) / 2
        self.M += rank_one
        self.M += rank_mu

    def _step_factor(self) -> float:
        p = self.params
        return exp(p.cs / p.damps * (float(np.linalg.norm(self.s)) / p.chi_n - 1))  # (M11)

    def _fresh_transformation(self) -> None:
        self.M = np.eye(self.genome_size)
