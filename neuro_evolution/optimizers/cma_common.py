"""What CMA_ES and SEP_CMA_ES share: config, strategy parameters, sampling, mean and step size.

Both follow N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772 (2016);
"Eq. (n)" and "Table 1" below are that paper's. Hansen's ``purecma.py`` (shipped with pycma) is
the reference implementation the defaults are checked against. Recombination weights are the
non-negative ones, as in the DEAP strategy ``CMA_ES`` used before; with ``active`` (CMA_ES and
SEP_CMA_ES) the lambda - mu worst samples get the tutorial's negative weights too (Eq. 46-53):
the covariance shrinks along them, as pycma's default ``CMA_active`` does.

A subclass holds the covariance model: the full matrix C = B D^2 B^T (``CMA_ES``) or its
diagonal (``SEP_CMA_ES``, Ros & Hansen 2008). It provides the three operations that depend on
it: y = sqrt(C) z (Eq. 39), C^(-1/2) y (Eq. 43) and the covariance update (Eq. 47), and
what the stopping criteria read (the variances C_ii, a principal axis, the condition number).

A search restarts every ``restart_every_generations`` (same lambda), or with ``restarts`` when
a stopping criterion (:mod:`cma_stopping`) ends it, with lambda and sigma0 from the IPOP or
BIPOP schedule (:mod:`cma_restarts`).
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from math import exp, log, sqrt
from typing import ClassVar, Literal

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import (
    Evaluations,
    Optimizer,
    OptimizerConfig,
)
from neuro_evolution.optimizers.cma_restarts import RestartSchedule, RestartsConfig
from neuro_evolution.optimizers.cma_stopping import (
    StopHistory,
    condition_cov,
    equal_fitness_history,
    history_length,
    no_effect_axis,
    no_effect_coordinate,
    stagnation,
    stagnation_window,
    tolfun,
    tolx,
)
from neuro_evolution.optimizers.declared_state import Array, Entry, Generator, Part, Pending, Value
from neuro_evolution.optimizers.rng import owned_generator
from neuro_evolution.optimizers.state_parts import RESTART_COUNTERS
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
    center_init: float | None = option(
        None, doc="initial mean of every gene (null: 0; old name: initial_centroid)"
    )
    weights: WeightsKind = option(
        "superlinear",
        doc="recombination weights of the mu best: superlinear (ln), linear or equal",
    )
    restart_every_generations: int | None = option(
        None,
        doc="start a fresh search (the initial mean and sigma, C = I, empty paths; the "
        "generator runs on) every this many generations; the run then stands behind the new "
        "mean. With restarts set, one more stopping criterion of the schedule. null: never",
        ge=1,
    )
    restarts: RestartsConfig | None = option(
        None,
        doc="{kind: ipop or bipop, population_factor, max_restarts, tolfun, tolx, ...}: restart"
        " a search that a stopping criterion ends, with a larger population"
        " (docs/guide/optimizers.md, Restarts). null: no such restarts",
    )

    def validate(self, path: str) -> None:
        size = self.population_size
        if self.mu is not None and size is not None and self.mu > size:
            raise ConfigError(
                join(path, "mu"), f"must be <= population_size ({size}), got {self.mu}"
            )
        if self.mu is not None and self.restarts is not None:
            raise ConfigError(
                join(path, "mu"),
                "must be null with restarts (each search uses mu = lambda // 2 of its own"
                f" lambda), got {self.mu}",
            )

    def lambda_for(self, genome_size: int) -> int:
        """The population size for genomes of ``genome_size`` (Table 1 default when null)."""
        if self.population_size is not None:
            return self.population_size
        return 4 + int(3 * log(genome_size))

    def largest_lambda_for(self, genome_size: int) -> int:
        """The largest population any search of the run can have."""
        default = self.lambda_for(genome_size)
        return default if self.restarts is None else self.restarts.largest_population(default)


@config_class
class ActiveCmaConfig(CmaConfig):
    """CmaConfig with the active covariance update (CMA_ES and SEP_CMA_ES)."""

    active: bool = option(
        False,
        doc="active covariance update: the lambda - mu worst samples get negative weights and"
        " C shrinks along them (Hansen's tutorial, Eq. 46-53; pycma's CMA_active). false: the"
        " mu best only",
    )


def negative_weights(
    population_size: int, mu: int, mueff: float, c1: float, cmu: float, genome_size: int
) -> np.ndarray:
    """The weights w_i <= 0 of ranks mu + 1 ... lambda (Eq. 49-53): w'_i = ln((lambda + 1)/2)
    - ln i where that is negative (else 0), scaled to sum to -min(alpha_mu^-, alpha_mueff^-,
    alpha_posdef^-); all 0 without a rank-mu update (cmu = 0)."""
    ranks = np.arange(mu + 1, population_size + 1, dtype=np.float64)
    raw = np.minimum(log((population_size + 1) / 2) - np.log(ranks), 0.0)
    total = -float(raw.sum())
    if total == 0 or cmu == 0:
        return np.zeros(len(ranks))
    mueff_minus = total**2 / float(np.sum(raw**2))  # Eq. (50) for the negative part
    alpha_mu = 1 + c1 / cmu  # Eq. (50)
    alpha_mueff = 1 + 2 * mueff_minus / (mueff + 2)  # Eq. (51)
    alpha_posdef = (1 - c1 - cmu) / (genome_size * cmu)  # Eq. (52)
    return min(alpha_mu, alpha_mueff, alpha_posdef) * raw / total  # Eq. (53)


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
    # w_i <= 0 of ranks mu + 1 ... lambda for the active update; empty without it
    negative_weights: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))

    @classmethod
    def for_genome(
        cls,
        config: CmaConfig,
        genome_size: int,
        diagonal: bool = False,
        population_size: int | None = None,
    ) -> CmaParameters:
        """Table 1 defaults; ``diagonal``: c1 and cmu times (n + 2)/3 (Ros & Hansen 2008);
        ``population_size``: a restart's lambda instead of the config's."""
        n = genome_size
        lam = population_size or config.lambda_for(n)
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
        negative = np.zeros(0)
        if isinstance(config, ActiveCmaConfig) and config.active:
            negative = negative_weights(lam, mu, mueff, c1, cmu, n)
        return cls(lam, mu, weights, mueff, cc, cs, c1, cmu, damps, chi_n, negative)


class CmaBase(Optimizer):
    """Sampling, ranking, mean and step-size update of CMA-ES; the subclass owns C.

    State between generations: mean, sigma, the two evolution paths, the generation count,
    the Generator and, between ``ask`` and ``tell``, the asked steps y = sqrt(C) z.
    """

    config: CmaConfig

    def __init__(self, config: CmaConfig, genome_size: int, seed: int, diagonal: bool):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.diagonal = diagonal
        self.params = CmaParameters.for_genome(config, genome_size, diagonal)
        self.population_size = self.params.population_size
        self.sigma0 = float(config.sigma)  # this search's initial step size
        self._fresh_distribution()
        self.generation = 0
        self.restarts = 0  # fresh starts so far
        self.restart_generation = 0  # the generation count at the last fresh start
        self.schedule: RestartSchedule | None = None
        if config.restarts is not None:
            self.schedule = RestartSchedule(config.restarts, genome_size, self.population_size)
        self.schedule_spent = False  # the schedule's restarts are used up
        self.stop_reason = ""  # the criterion that ended the last search
        self.history = StopHistory(history_length(genome_size, self.population_size))
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
    def _adapt_covariance(self, best: np.ndarray, hsig: float, worst: np.ndarray) -> None:
        """Eq. (47) from the asked steps of rows ``best`` (best first), the h_sigma flag and,
        for the active update, rows ``worst`` (ranks mu + 1 ... lambda, best first)."""

    @abstractmethod
    def _whitened_norms(self, rows: np.ndarray) -> np.ndarray:
        """||C^(-1/2) y|| of each row y, with the C of :meth:`_whiten`."""

    def _active_rows(self, worst: np.ndarray) -> np.ndarray | None:
        """Rows r_i with sum_i r_i r_i^T = -sum_i w°_i y_i y_i^T over the negative weights,
        w°_i = w_i n / ||C^(-1/2) y_i||^2 (Eq. 46), times cmu; None without the active update."""
        weights = self.params.negative_weights
        if not np.any(weights < 0):
            return None
        assert self._steps is not None
        keep = weights < 0
        steps = self._steps[worst[: len(weights)][keep]]
        norms = np.maximum(self._whitened_norms(steps) ** 2, np.finfo(np.float64).tiny)
        scale = self.params.cmu * -weights[keep] * self.genome_size / norms
        return np.sqrt(scale)[:, None] * steps

    def _active_decay(self) -> float:
        """cmu sum_j w_j (Eq. 47) beyond cmu: cmu times the negative weights' sum (0 without
        the active update)."""
        return self.params.cmu * float(self.params.negative_weights.sum())

    @abstractmethod
    def _reset_covariance(self, generation: int) -> None:
        """C = I from ``generation`` on: at the start and after a restart."""

    @abstractmethod
    def _variances(self) -> np.ndarray:
        """The diagonal of C."""

    @abstractmethod
    def _principal_axis(self, index: int) -> np.ndarray:
        """d_i b_i: principal axis ``index`` of C scaled by its standard deviation."""

    @abstractmethod
    def _condition(self) -> float:
        """The condition number of C (of its last decomposition)."""

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
        ranked = np.argsort(-fitness, kind="stable")  # higher fitness first, ties by index
        best = ranked[: p.mu]
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
        self._adapt_covariance(best, hsig, ranked[p.mu :])
        self.sigma *= exp(p.cs / p.damps * (ps_norm / p.chi_n - 1))  # Eq. (44)
        self._steps = None
        every = self.config.restart_every_generations
        if self.schedule is None:
            if every is not None and since >= every:
                self._restart(self.generation + 1)
            return
        if self.schedule_spent:
            return
        self.history.record(fitness)
        reason = self._stop_reason(fitness, since)
        if reason is None and every is not None and since >= every:
            reason = "restart_every_generations"
        if reason is not None:
            self._scheduled_restart(self.generation + 1, since, reason)

    def _stop_reason(self, fitness: np.ndarray, since: int) -> str | None:
        """The first stopping criterion that ends this search after ``since`` generations of
        it, or None (cma_stopping; thresholds from ``restarts``)."""
        assert self.schedule is not None
        c, n, h = self.schedule.config, self.genome_size, self.history
        variances = self._variances()
        axis = self._principal_axis(since % n)
        window = stagnation_window(n, self.population_size, since)
        checks = (
            ("max_generations", lambda: since >= self.schedule.plan.generation_limit),
            ("equalfunvalhist", lambda: equal_fitness_history(h.recent_best, h.recent_length)),
            ("tolfun", lambda: tolfun(h.recent_best, fitness, h.recent_length, c.tolfun)),
            ("tolx", lambda: tolx(self.sigma, self.pc, variances, self.sigma0, c.tolx)),
            ("noeffectaxis", lambda: no_effect_axis(self.mean, self.sigma, axis)),
            ("noeffectcoord", lambda: no_effect_coordinate(self.mean, self.sigma, variances)),
            ("conditioncov", lambda: condition_cov(self._condition(), c.max_condition)),
            ("stagnation", lambda: c.stagnation and stagnation(h.best, h.median, window)),
        )
        return next((name for name, check in checks if check()), None)

    def _scheduled_restart(self, generation: int, since: int, reason: str) -> None:
        """The next search of the schedule from ``generation`` on: its lambda (new strategy
        parameters) and sigma0; or none when the schedule is spent."""
        assert self.schedule is not None
        self.stop_reason = reason
        plan = self.schedule.next_search(self.population_size * since, self._random)
        if plan is None:
            self.schedule_spent = True
            return
        self._set_population(plan.population_size)
        self.sigma0 = self.config.sigma * plan.sigma_factor
        self._restart(generation)

    def _set_population(self, population_size: int) -> None:
        """lambda and the strategy parameters that depend on it (Table 1)."""
        self.params = CmaParameters.for_genome(
            self.config, self.genome_size, self.diagonal, population_size
        )
        self.population_size = population_size
        self.history = StopHistory(history_length(self.genome_size, population_size))

    def _fresh_distribution(self) -> None:
        """The initial mean and sigma and empty evolution paths (C is the subclass's)."""
        n = self.genome_size
        self.mean = np.full(n, self.config.center_init or 0.0, dtype=np.float64)
        self.sigma = self.sigma0
        self.ps = np.zeros(n)  # evolution path of sigma, Eq. (43)
        self.pc = np.zeros(n)  # evolution path of C, Eq. (45)

    def _restart(self, generation: int) -> None:
        """A fresh search distribution from ``generation`` on (the count after this tell); the
        generation count and the generator run on."""
        self._fresh_distribution()
        self._reset_covariance(generation)
        self.history = StopHistory(self.history.recent_length)
        self.restarts += 1
        self.restart_generation = generation

    def center(self) -> np.ndarray:
        """The distribution's mean m."""
        return self.mean.copy()

    def log_metrics(self) -> dict[str, float]:
        """With ``restarts``: the current lambda and the restarts so far."""
        if self.schedule is None:
            return {}
        return {"population_size": float(self.population_size), "restarts": float(self.restarts)}

    # --- state ---------------------------------------------------------------------------------
    # The covariance model's entries (the subclass's C and what derives from it).
    COVARIANCE: ClassVar[tuple[Entry, ...]]

    def state_entries(self) -> tuple[Entry, ...]:
        """Restart counters, this search's lambda and sigma0, with ``restarts`` the schedule and
        the stop histories, then mean, sigma, paths, covariance model, pending steps and the
        Generator."""
        schedule: tuple[Entry, ...] = ()
        if self.schedule is not None:
            schedule = (
                Part("schedule", "restart_"),
                Value("schedule_spent", bool, key="restart_spent"),
                Value("stop_reason", str, key="restart_stop_reason"),
                Part("history", "stop_history_"),
            )
        return (
            *RESTART_COUNTERS,
            Value("population_size", int, low=2),
            Value("sigma0"),
            *schedule,
            Array("mean", ("genome_size",)),
            Value("sigma"),
            Array("ps", ("genome_size",)),
            Array("pc", ("genome_size",)),
            *self.COVARIANCE,
            Pending((("_steps", "asked_steps"),)),
            Generator("_random"),
        )

    def _loaded(self) -> None:
        """The strategy parameters and the stop history's length for the loaded lambda (a
        restart schedule may have grown it)."""
        if self.population_size != self.params.population_size:
            self.params = CmaParameters.for_genome(
                self.config, self.genome_size, self.diagonal, self.population_size
            )
            self.history.recent_length = history_length(self.genome_size, self.population_size)

    @classmethod
    def _sample_bytes(cls, config: CmaConfig, genome_size: int) -> int:
        """Bytes of the O(lambda n) arrays of one generation: z and y while sampling, the
        asked genomes and their temporary, the caller's copy (lambda x n each), at the largest
        lambda of the restart schedule."""
        lam = config.largest_lambda_for(genome_size)
        return 8 * genome_size * (5 * lam + 8)
