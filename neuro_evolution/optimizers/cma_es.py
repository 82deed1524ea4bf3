"""CMA_ES: the covariance matrix adaptation evolution strategy of ``deap.cma.Strategy``.

Every generation samples ``population_size`` genomes from N(centroid, sigma^2 C) and moves the
distribution towards the ``mu`` best (weighted recombination, rank-based). DEAP samples from
numpy's global legacy generator; this optimizer swaps its own saved state in around sampling.

Memory: C, B (G x G float64 each) are part of the state, so a genome of 5,000 genes costs
~200 MB per matrix and an eigendecomposition of that size every generation; CMA_ES suits
small brains, MU_ES large ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import log
from typing import Any, Literal

import numpy as np
from deap import cma

from neuro_evolution.configtools import ConfigError, config_class, join, option
from neuro_evolution.hall_of_fame import HallOfFame
from neuro_evolution.optimizers.base import OPTIMIZERS, Optimizer, OptimizerConfig, OptimizerState
from neuro_evolution.optimizers.rng import NumpyLegacyRandomState, state_array, state_scalar
from neuro_evolution.optimizers.shaping import checked_fitness

NAME = "CMA_ES"


@config_class
class CmaEsConfig(OptimizerConfig):
    """Options of the ``CMA_ES`` optimizer (deap.cma.Strategy)."""

    population_size: int | None = option(
        None, doc="genomes per generation, deap's lambda_ (null: int(4 + 3 ln(genome size)))", ge=2
    )
    mu: int | None = option(
        None, doc="best genomes that move the mean (null: population_size // 2)", ge=1
    )
    sigma: float = option(0.5, doc="initial step size (std. dev. of the search distribution)", gt=0)
    initial_centroid: float | None = option(None, doc="initial mean of every gene (null: 0)")
    weights: Literal["superlinear", "linear", "equal"] = option(
        "superlinear", doc="recombination weights of the mu best (deap's weights)"
    )

    def validate(self, path: str) -> None:
        size = self.population_size
        if self.mu is not None and size is not None and self.mu > size:
            raise ConfigError(
                join(path, "mu"), f"must be <= population_size ({size}), got {self.mu}"
            )

    def lambda_for(self, genome_size: int) -> int:
        """The population size for genomes of ``genome_size`` (deap's default when null)."""
        if self.population_size is not None:
            return self.population_size
        return int(4 + 3 * log(genome_size))


class _Scored(np.ndarray):
    """A genome row with the ``fitness`` attribute ``Strategy.update`` sorts by."""

    fitness: float


@OPTIMIZERS.register(NAME, config=CmaEsConfig)
class CmaEs(Optimizer):
    """CMA-ES on ``deap.cma.Strategy``; every ``ask`` returns ``population_size`` genomes."""

    def __init__(self, config: CmaEsConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.population_size = config.lambda_for(genome_size)
        mu = config.mu if config.mu is not None else self.population_size // 2
        if mu > self.population_size:
            raise ValueError(
                f"mu: must be <= the population size {self.population_size} (deap's default for "
                f"{genome_size} genes), got {mu}; set population_size or lower mu"
            )
        centroid = np.full(genome_size, config.initial_centroid or 0.0, dtype=np.float64)
        self._strategy = cma.Strategy(
            centroid=centroid,
            sigma=config.sigma,
            lambda_=self.population_size,
            mu=mu,
            weights=config.weights,
        )
        self._random = NumpyLegacyRandomState(seed)
        self._generation = 0
        self._asked: np.ndarray | None = None

    def ask(self) -> np.ndarray:
        """``population_size`` samples; asking again before :meth:`tell` returns the same ones."""
        if self._asked is None:
            with self._random.active():
                rows = self._strategy.generate(np.array)
            self._asked = np.array(rows, dtype=np.float64).reshape(
                self.population_size, self.genome_size
            )
        return self._asked.copy()

    def tell(self, fitness: np.ndarray, hall_of_fame: HallOfFame) -> None:
        """Update mean, step size and covariance from the ranked samples (hall of fame unused)."""
        if self._asked is None:
            raise RuntimeError("tell() needs a preceding ask(): there are no genomes to score")
        fitness = checked_fitness(fitness, len(self._asked))
        population = []
        for row, value in zip(self._asked, fitness):
            individual = row.view(_Scored)
            individual.fitness = float(value)
            population.append(individual)
        self._strategy.update(population)  # draws nothing
        self._asked = None
        self._generation += 1

    def center(self) -> np.ndarray:
        """The distribution's mean (centroid)."""
        return np.array(self._strategy.centroid, dtype=np.float64)

    def state(self) -> OptimizerState:
        """Distribution (centroid, sigma, C, B, diagD, paths), pending ask, np.random state."""
        strategy = self._strategy
        asked = self._asked is not None
        return {
            "optimizer": NAME,
            "generation": self._generation,
            "centroid": np.array(strategy.centroid, dtype=np.float64),
            "sigma": float(strategy.sigma),
            "C": np.array(strategy.C, dtype=np.float64),
            "B": np.array(strategy.B, dtype=np.float64),
            "diagD": np.array(strategy.diagD, dtype=np.float64),
            "cond": float(strategy.cond),
            "pc": np.array(strategy.pc, dtype=np.float64),
            "ps": np.array(strategy.ps, dtype=np.float64),
            "update_count": int(strategy.update_count),
            "has_asked": asked,
            "asked_genomes": self._asked.copy() if asked else np.zeros((0, self.genome_size)),
            **self._random.to_state("numpy_random"),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`state` of an optimizer with the same config and genome size."""
        if str(state_scalar(state, "optimizer")) != NAME:
            raise ValueError(
                f"optimizer state is for {state_scalar(state, 'optimizer')!r}, not {NAME}"
            )
        g = self.genome_size
        has_asked = bool(state_scalar(state, "has_asked"))
        asked = state_array(
            state, "asked_genomes", np.float64, (self.population_size if has_asked else 0, g)
        )
        values = {
            "centroid": state_array(state, "centroid", np.float64, (g,)),
            "C": state_array(state, "C", np.float64, (g, g)),
            "B": state_array(state, "B", np.float64, (g, g)),
            "diagD": state_array(state, "diagD", np.float64, (g,)),
            "pc": state_array(state, "pc", np.float64, (g,)),
            "ps": state_array(state, "ps", np.float64, (g,)),
            "sigma": float(state_scalar(state, "sigma")),
            "cond": float(state_scalar(state, "cond")),
            "update_count": int(state_scalar(state, "update_count")),
        }
        self._random.load_state(state, "numpy_random")
        for name, value in values.items():
            setattr(self._strategy, name, value)
        self._strategy.BD = self._strategy.B * self._strategy.diagD  # as deap derives it
        self._generation = int(state_scalar(state, "generation"))
        self._asked = asked if has_asked else None
