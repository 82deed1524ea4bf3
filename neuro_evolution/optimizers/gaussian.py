"""Shared pieces of the separable-Gaussian optimizers (PGPE, OPENAI_ES, SNES).

- :class:`GaussianSearch`: the ask/tell bookkeeping of a search distribution N(center, stdev^2)
  with a diagonal covariance (O(G) memory): genomes are ``center + stdev * z`` for standard
  normal rows ``z``; a subclass chooses how ``z`` is drawn and writes only the update
  (template method: ``_sample`` and ``_update``).
- :func:`mirrored_normal`: antithetic / symmetric sampling (pairs ``z, -z``).
- :class:`ClipUp` and :class:`Adam`: steps of the center along an estimated gradient, each
  holding its state as arrays and scalars.
- Option factories for the options several configs share, so each is documented once.

Every optimizer draws from its own ``numpy.random.Generator`` (PCG64), saved in ``state()``
as words (see :func:`rng.generator_to_state`); the global generators are never touched.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import (
    Evaluations,
    Optimizer,
    OptimizerConfig,
)
from neuro_evolution.optimizers.declared_state import Array, Entry, Generator, Pending
from neuro_evolution.optimizers.rng import (
    owned_generator,
    state_array,
    state_scalar,
)
from neuro_evolution.optimizers.shaping import FitnessShaping
from neuro_evolution.support.seeds import GENERATOR_PURPOSE


def center_init_option() -> Any:
    """``center_init``: the initial mean of every gene."""
    return option(0.0, doc="initial mean (center) of every gene")


def adam_beta1_option() -> Any:
    """``adam_beta1`` (Kingma & Ba 2015 default)."""
    return option(0.9, doc="Adam: decay of the running mean of the gradient", ge=0, lt=1)


def adam_beta2_option() -> Any:
    """``adam_beta2`` (Kingma & Ba 2015 default)."""
    return option(0.999, doc="Adam: decay of the running mean of the squared gradient", ge=0, lt=1)


def adam_epsilon_option() -> Any:
    """``adam_epsilon`` (Kingma & Ba 2015 default)."""
    return option(1e-8, doc="Adam: added to the root of the squared-gradient mean", gt=0)


def check_even_population(size: int, path: str) -> None:
    """Refuse an odd population: symmetric sampling evaluates pairs center +- noise."""
    if size % 2:
        raise ConfigError(
            join(path, "population_size"),
            f"must be even (mirrored pairs center + noise, center - noise), got {size};"
            f" use {size + 1} or {size - 1}",
        )


@config_class
class MirroredSearchConfig(OptimizerConfig):
    """Options shared by the optimizers that sample mirrored pairs, shape fitness by rank and
    can step with Adam (PGPE, OPENAI_ES); each adds its own after these."""

    population_size: int = option(
        100,
        doc="genomes per generation; even (mirrored pairs center + noise, center - noise)",
        ge=2,
    )
    center_init: float = center_init_option()
    fitness_shaping: FitnessShaping = option(
        "centered_ranks", doc="none or centered_ranks (rank-based, ignores the reward scale)"
    )
    adam_beta1: float = adam_beta1_option()
    adam_beta2: float = adam_beta2_option()
    adam_epsilon: float = adam_epsilon_option()

    def validate(self, path: str) -> None:
        check_even_population(self.population_size, path)

    def adam(self, genome_size: int, step_size: float) -> Adam:
        """An Adam center update with this config's betas and epsilon."""
        return Adam(genome_size, step_size, self.adam_beta1, self.adam_beta2, self.adam_epsilon)


def mirrored_normal(rng: np.random.Generator, count: int, genome_size: int) -> np.ndarray:
    """(count, genome_size) standard normal rows in mirrored pairs: row 2i+1 is -(row 2i).

    Antithetic sampling (Salimans et al. 2017, Sec. 2.2) / symmetric sampling (Sehnke et al.
    2010): each pair's fitness difference cancels the even part of the objective.
    """
    if count % 2:
        raise ValueError(f"mirrored sampling needs an even count, got {count}")
    half = rng.standard_normal((count // 2, genome_size))
    rows = np.empty((count, genome_size))
    rows[0::2] = half
    rows[1::2] = -half
    return rows


class ClipUp:
    """ClipUp (Toklu et al. 2020, "ClipUp: a simple and powerful optimizer for distribution-based
    policy evolution", Sec. 3): momentum on the *normalised* gradient, speed clipped.

    v <- momentum * v + step_size * g / ||g||;  v <- v * min(1, max_speed / ||v||);  x <- x + v.
    The step never exceeds ``max_speed`` whatever the fitness scale. Reference: pgpelib.
    """

    def __init__(self, genome_size: int, step_size: float, momentum: float, max_speed: float):
        self.step_size, self.momentum, self.max_speed = step_size, momentum, max_speed
        self.velocity = np.zeros(genome_size)

    def step(self, gradient: np.ndarray) -> np.ndarray:
        """The change of the center for ``gradient`` (an ascent direction); updates velocity."""
        norm = float(np.linalg.norm(gradient))
        direction = gradient / norm if norm > 0 else np.zeros_like(gradient)
        velocity = self.momentum * self.velocity + self.step_size * direction
        speed = float(np.linalg.norm(velocity))
        if speed > self.max_speed:
            velocity = velocity * (self.max_speed / speed)
        self.velocity = velocity
        return velocity.copy()

    def to_state(self, prefix: str) -> dict[str, Any]:
        return {f"{prefix}_velocity": self.velocity.copy()}

    def load_state(self, state: Mapping[str, Any], prefix: str) -> None:
        self.velocity = state_array(state, f"{prefix}_velocity", np.float64, self.velocity.shape)


class Adam:
    """Adam (Kingma & Ba 2015, Algorithm 1, with the bias correction folded into the step size
    as in their Sec. 2), used for ascent: x <- x + alpha_t * m / (sqrt(v) + epsilon)."""

    def __init__(
        self, genome_size: int, step_size: float, beta1: float, beta2: float, epsilon: float
    ):
        self.step_size, self.beta1, self.beta2, self.epsilon = step_size, beta1, beta2, epsilon
        self.m = np.zeros(genome_size)
        self.v = np.zeros(genome_size)
        self.t = 0

    def step(self, gradient: np.ndarray) -> np.ndarray:
        """The change of the center for ``gradient`` (an ascent direction); updates m, v, t."""
        self.t += 1
        self.m = self.beta1 * self.m + (1 - self.beta1) * gradient
        self.v = self.beta2 * self.v + (1 - self.beta2) * gradient * gradient
        alpha_t = self.step_size * np.sqrt(1 - self.beta2**self.t) / (1 - self.beta1**self.t)
        return alpha_t * self.m / (np.sqrt(self.v) + self.epsilon)

    def to_state(self, prefix: str) -> dict[str, Any]:
        return {f"{prefix}_m": self.m.copy(), f"{prefix}_v": self.v.copy(), f"{prefix}_t": self.t}

    def load_state(self, state: Mapping[str, Any], prefix: str) -> None:
        self.m = state_array(state, f"{prefix}_m", np.float64, self.m.shape)
        self.v = state_array(state, f"{prefix}_v", np.float64, self.v.shape)
        self.t = int(state_scalar(state, f"{prefix}_t"))


class GaussianSearch(Optimizer):
    """Ask/tell over N(center, diag(stdev^2)); subclasses draw ``z`` and update the distribution.

    State (all O(G) but the pending noise, O(P G)): center, stdev, the noise rows of a pending
    ask and the sampling generator; a subclass adds its update rule's entries to ``STATE``.
    """

    STATE: ClassVar[tuple[Entry, ...]] = (
        Array("mean", ("genome_size",), key="center"),
        Array("stdev", ("genome_size",)),
        Pending((("_noise", "asked_noise"),)),
        Generator("_rng"),
    )

    def __init__(self, config: Any, genome_size: int, seed: int, population_size: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.population_size = population_size
        self.mean = np.full(genome_size, float(config.center_init))
        self.stdev = np.ones(genome_size)  # set by the subclass
        self._rng = owned_generator(seed, GENERATOR_PURPOSE)
        self._noise: np.ndarray | None = None

    @classmethod
    def state_bytes(cls, config: Any, genome_size: int) -> int:
        """Center, stdev, update-rule vectors and temporaries (at most 8 vectors of G) plus
        three (P, G) arrays: the pending noise, the asked genomes and the gradient's products."""
        population_for = getattr(config, "population_for", None)
        population = population_for(genome_size) if population_for else config.population_size
        return 8 * (8 * genome_size + 3 * population * genome_size)

    @abstractmethod
    def _sample(self, rng: np.random.Generator) -> np.ndarray:
        """The (population_size, G) standard normal rows ``z`` of the next generation."""

    @abstractmethod
    def _update(self, noise: np.ndarray, fitness: np.ndarray) -> None:
        """Move ``self.mean`` / ``self.stdev`` given the asked rows ``z`` and their fitness."""

    REDRAWS = True

    def _ask(self) -> np.ndarray:
        """``population_size`` genomes center + stdev * z (z drawn once per generation)."""
        if self._noise is None:
            self._noise = self._sample(self._rng)
            return self.resampled(self.mean + self.stdev * self._noise)
        return self.mean + self.stdev * self._noise

    def _asked_count(self) -> int:
        return 0 if self._noise is None else len(self._noise)

    def _redraw(self, rows: np.ndarray) -> np.ndarray:
        """New rows ``z`` for ``rows`` (drawn as :meth:`_sample` draws them)."""
        assert self._noise is not None
        self._noise[rows] = self._rng.standard_normal((len(rows), self.genome_size))
        return self.mean + self.stdev * self._noise

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Update the distribution from the fitness of the last ask (hall of fame unused)."""
        assert self._noise is not None
        self._update(self._noise, fitness)
        self._noise = None

    def center(self) -> np.ndarray:
        """The distribution's mean: the genome the run stands behind."""
        return self.mean.copy()


class MirroredSearch(GaussianSearch):
    """A GaussianSearch that asks mirrored pairs (PGPE, OPENAI_ES)."""

    def _sample(self, rng: np.random.Generator) -> np.ndarray:
        return mirrored_normal(rng, self.population_size, self.genome_size)

    def _redraw(self, rows: np.ndarray) -> np.ndarray:
        """A redrawn row takes its mirrored partner along: the pair (z, -z) is one sample."""
        assert self._noise is not None
        pairs = np.unique(rows // 2)
        half = self._rng.standard_normal((len(pairs), self.genome_size))
        self._noise[2 * pairs] = half
        self._noise[2 * pairs + 1] = -half
        return self.mean + self.stdev * self._noise
