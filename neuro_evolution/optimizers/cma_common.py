"""What CMA_ES and SEP_CMA_ES share: config, strategy parameters, sampling, mean and step size.

Both follow N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772 (2016);
"Eq. (n)" and "Table 1" below are that paper's. Hansen's ``purecma.py`` (shipped with pycma) is
the reference implementation the defaults are checked against. Recombination weights are the
non-negative ones (no active CMA), as in the DEAP strategy ``CMA_ES`` used before.

A subclass holds the covariance model: the full matrix C = B D^2 B^T (``CMA_ES``) or its
diagonal (``SEP_CMA_ES``, Ros & Hansen 2008). It provides the three operations that depend on
it: y = sqrt(C) z (Eq. 39), C^(-1/2) y (Eq. 43) and the covariance update (Eq. 47).
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from collections.abc import Mapping
from math import exp, log, sqrt
from typing import Any, ClassVar, Literal

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import (
    Evaluations,
    Optimizer,
    OptimizerConfig,
    OptimizerState,
)
from neuro_evolution.optimizers.rng import (
    generator_load_state,
    generator_to_state,
    owned_generator,
    state_array,
    state_scalar,
)
from neuro_evolution.support.seeds import GENERATOR_PURPOSE

WeightsKind = Literal["superlinear", "linear", "equal"]


@config_class
class CmaConfig(OptimizerConfig):
    """Options shared by ``CMA_ES`` and ``SEP_CMA_ES`` (each registers a subclass)."""

    population_size: int | None = option(
        None, doc="genomes per generation, lambda (null: 4 + floor(3 ln(genome size)))", ge=2
    )
    mu: int | None = option(
        None, doc="best genomes that move the mean (null: population_size // 2)", ge=1
    )
    sigma: float = option(0.5, doc="initial step size (std. dev. of the search distribution)", gt=0)
    initial_centroid: float | None = option(None, doc="initial mean of every gene (null: 0)")
    weights: WeightsKind = option(
        "superlinear",
        doc="recombination weights of the mu best: superlinear (ln), linear or equal",
    )
    restart_every_generations: int | None = option(
        None,
        doc="start a fresh search (the initial mean and sigma, C = I, empty paths; the "
        "generator runs on) every this many generations; the run then stands behind the new "
        "mean. null: never",
        ge=1,
    )

    def validate(self, path: str) -> None:
        size = self.population_size
        if self.mu is not None and size is not None and self.mu > size:
            raise ConfigError(
                join(path, "mu"), f"must be <= population_size ({size}), got {self.mu}"
            )

    def lambda_for(self, genome_size: int) -> int:
        """The population size for genomes of ``genome_size`` (Table 1 default when null)."""
        if self.population_size is not None:
            return self.population_size
        return 4 + int(3 * log(genome_size))


def recombination_weights(kind: WeightsKind, population_size: int, mu: int) -> np.ndarray:
    """The ``mu`` positive weights w_1 >= ... >= w_mu summing to 1 (Eq. 49, 53).

    superlinear: w'_i = ln(max(mu, lambda/2) + 1/2) - ln i, which is Eq. (49)'s
    ln((lambda + 1)/2) - ln i for the default mu and stays positive for a larger mu.
    """
    ranks = np.arange(1, mu + 1, dtype=np.float64)
    if kind == "superlinear":
        raw = log(max(mu, population_size / 2) + 0.5) - np.log(ranks)
    elif kind == "linear":
        raw = mu + 0.5 - ranks
    elif kind == "equal":
        raw = np.ones(mu)
    else:
        raise ValueError(f"weights: unknown kind {kind!r}, use superlinear, linear or equal")
    return raw / raw.sum()


@dataclasses.dataclass(frozen=True)
class CmaParameters:
    """The strategy parameters of Table 1 for one genome size (fixed for the whole run)."""

    population_size: int
    mu: int
    weights: np.ndarray
    mueff: float  # variance effective selection mass, Eq. (8)
    cc: float
    cs: float
    c1: float
    cmu: float
    damps: float
    chi_n: float  # E||N(0, I)||

    @classmethod
    def for_genome(
        cls, config: CmaConfig, genome_size: int, diagonal: bool = False
    ) -> CmaParameters:
        """Table 1 defaults; ``diagonal``: c1 and cmu times (n + 2)/3 (Ros & Hansen 2008)."""
        n = genome_size
        lam = config.lambda_for(n)
        mu = config.mu if config.mu is not None else lam // 2
        if mu > lam:
            raise ValueError(
                f"mu: must be <= the population size {lam} (the default for {n} genes), got "
                f"{mu}; set population_size or lower mu"
            )
        weights = recombination_weights(config.weights, lam, mu)
        mueff = 1.0 / float(np.sum(weights**2))
        cs = (mueff + 2) / (n + mueff + 5)  # Eq. (55)
        damps = 1 + 2 * max(0.0, sqrt((mueff - 1) / (n + 1)) - 1) + cs  # Eq. (55)
        cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)  # Eq. (56)
        c1 = 2 / ((n + 1.3) ** 2 + mueff)  # Eq. (57), alpha_cov = 2
        cmu = min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff))  # Eq. (58)
        if diagonal:  # sep-CMA-ES: a diagonal learns n, not n^2/2, parameters
            c1 = c1 * (n + 2) / 3
            cmu = min(1 - c1, cmu * (n + 2) / 3)
        chi_n = sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n**2))
        return cls(lam, mu, weights, mueff, cc, cs, c1, cmu, damps, chi_n)


class CmaBase(Optimizer):
    """Sampling, ranking, mean and step-size update of CMA-ES; the subclass owns C.

    State between generations: mean, sigma, the two evolution paths, the generation count,
    the Generator and, between ``ask`` and ``tell``, the asked steps y = sqrt(C) z.
    """

    NAME: ClassVar[str]
    config: CmaConfig

    def __init__(self, config: CmaConfig, genome_size: int, seed: int, diagonal: bool):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.params = CmaParameters.for_genome(config, genome_size, diagonal)
        self.population_size = self.params.population_size
        self._fresh_distribution()
        self.generation = 0
        self.restarts = 0  # fresh starts so far (restart_every_generations)
        self.restart_generation = 0  # the generation count at the last fresh start
        self._random = owned_generator(seed, GENERATOR_PURPOSE)
        self._steps: np.ndarray | None = None  # y_k of the pending ask, (lambda, n)

    # --- the covariance model ------------------------------------------------------------------
    @abstractmethod
    def _scale(self, z: np.ndarray) -> np.ndarray:
        """y = sqrt(C) z for rows z ~ N(0, I) (Eq. 39), with C as last decomposed."""

    @abstractmethod
    def _whiten(self, y: np.ndarray) -> np.ndarray:
        """C^(-1/2) y with the same C as :meth:`_scale` (Eq. 43)."""

    def _recombine(self, best: np.ndarray) -> np.ndarray:
        """<y>_w = sum_i w_i y_i:lambda over the asked steps of rows ``best`` (Eq. 41)."""
        assert self._steps is not None
        return self.params.weights @ self._steps[best]

    @abstractmethod
    def _adapt_covariance(self, best: np.ndarray, hsig: float) -> None:
        """Eq. (47) from the asked steps of rows ``best`` (best first) and the h_sigma flag."""

    @abstractmethod
    def _reset_covariance(self, generation: int) -> None:
        """C = I from ``generation`` on: at the start and after a restart."""

    @abstractmethod
    def _covariance_state(self) -> dict[str, Any]:
        """The covariance model's part of :meth:`state`."""

    @abstractmethod
    def _load_covariance_state(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`_covariance_state` (shapes checked)."""

    # --- ask / tell ----------------------------------------------------------------------------
    REDRAWS = True

    def _ask(self) -> np.ndarray:
        """lambda samples m + sigma y_k (Eq. 38-40), drawn once per generation."""
        if self._steps is None:
            z = self._random.standard_normal((self.population_size, self.genome_size))
            self._steps = self._scale(z)
            return self.resampled(self.mean + self.sigma * self._steps)
        return self.mean + self.sigma * self._steps

    def _asked_count(self) -> int:
        return 0 if self._steps is None else len(self._steps)

    def _redraw(self, rows: np.ndarray) -> np.ndarray:
        """New steps y = sqrt(C) z for ``rows``."""
        assert self._steps is not None
        z = self._random.standard_normal((len(rows), self.genome_size))
        self._steps[rows] = self._scale(z)
        return self.mean + self.sigma * self._steps

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Move mean, sigma and C towards the mu best of the last ask (hall of fame unused)."""
        p, n = self.params, self.genome_size
        best = np.argsort(-fitness, kind="stable")[: p.mu]  # higher fitness first, ties by index
        y_w = self._recombine(best)  # Eq. (41)
        self.mean += self.sigma * y_w  # Eq. (42), c_m = 1
        self.ps *= 1 - p.cs  # Eq. (43)
        self.ps += sqrt(p.cs * (2 - p.cs) * p.mueff) * self._whiten(y_w)
        ps_norm = float(np.linalg.norm(self.ps))
        # h_sigma (below Eq. 45): stall the pc update while ||ps|| is large.
        threshold = (1.4 + 2 / (n + 1)) * p.chi_n
        since = self.generation + 1 - self.restart_generation  # generations of this search
        hsig = float(ps_norm / sqrt(1 - (1 - p.cs) ** (2 * since)) < threshold)
        self.pc *= 1 - p.cc  # Eq. (45)
        self.pc += hsig * sqrt(p.cc * (2 - p.cc) * p.mueff) * y_w
        self._adapt_covariance(best, hsig)
        self.sigma *= exp(p.cs / p.damps * (ps_norm / p.chi_n - 1))  # Eq. (44)
        self._steps = None
        every = self.config.restart_every_generations
        if every is not None and since >= every:
            self._restart(self.generation + 1)

    def _fresh_distribution(self) -> None:
        """The initial mean and sigma and empty evolution paths (C is the subclass's)."""
        n = self.genome_size
        self.mean = np.full(n, self.config.initial_centroid or 0.0, dtype=np.float64)
        self.sigma = float(self.config.sigma)
        self.ps = np.zeros(n)  # evolution path of sigma, Eq. (43)
        self.pc = np.zeros(n)  # evolution path of C, Eq. (45)

    def _restart(self, generation: int) -> None:
        """A fresh search distribution from ``generation`` on (the count after this tell); the
        generation count and the generator run on."""
        self._fresh_distribution()
        self._reset_covariance(generation)
        self.restarts += 1
        self.restart_generation = generation

    def center(self) -> np.ndarray:
        """The distribution's mean m."""
        return self.mean.copy()

    # --- state ---------------------------------------------------------------------------------
    def state(self) -> OptimizerState:
        """Mean, sigma, paths, covariance model, pending steps and Generator state."""
        asked = self._steps is not None
        return {
            "optimizer": self.NAME,
            "generation": self.generation,
            "restarts": self.restarts,
            "restart_generation": self.restart_generation,
            "mean": self.mean.copy(),
            "sigma": self.sigma,
            "ps": self.ps.copy(),
            "pc": self.pc.copy(),
            **self._covariance_state(),
            "has_asked": asked,
            "asked_steps": (
                self._steps.copy() if self._steps is not None else np.zeros((0, self.genome_size))
            ),
            **generator_to_state(self._random, "generator"),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`state` of an optimizer with the same config and genome size."""
        name = str(state_scalar(state, "optimizer"))
        if name != self.NAME:
            raise ValueError(f"optimizer state is for {name!r}, not {self.NAME}")
        n = self.genome_size
        has_asked = bool(state_scalar(state, "has_asked"))
        rows = self.population_size if has_asked else 0
        steps = state_array(state, "asked_steps", np.float64, (rows, n))
        mean = state_array(state, "mean", np.float64, (n,))
        ps = state_array(state, "ps", np.float64, (n,))
        pc = state_array(state, "pc", np.float64, (n,))
        self._load_covariance_state(state)
        generator_load_state(self._random, state, "generator")
        self.mean, self.ps, self.pc = mean, ps, pc
        self.sigma = float(state_scalar(state, "sigma"))
        self.generation = int(state_scalar(state, "generation"))
        # states saved before restarts existed have neither key: no restart yet
        self.restarts = int(state_scalar(state, "restarts")) if "restarts" in state else 0
        self.restart_generation = (
            int(state_scalar(state, "restart_generation")) if "restart_generation" in state else 0
        )
        self._steps = steps if has_asked else None

    @classmethod
    def _sample_bytes(cls, config: CmaConfig, genome_size: int) -> int:
        """Bytes of the O(lambda n) arrays of one generation: z and y while sampling, the
        asked genomes and their temporary, the caller's copy (lambda x n each)."""
        lam = config.lambda_for(genome_size)
        return 8 * genome_size * (5 * lam + 8)
