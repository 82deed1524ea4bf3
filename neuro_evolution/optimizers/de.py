"""DE: differential evolution, strategies rand/1/bin and best/1/bin.

Storn & Price (1997), "Differential Evolution - A Simple and Efficient Heuristic for Global
Optimization over Continuous Spaces", Journal of Global Optimization 11: 341-359 (Sec. 2:
mutation, crossover, selection), with their suggested F, CR and NP as defaults. Reference
implementation: evosax's ``DifferentialEvolution``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import OPTIMIZERS, Evaluations, OptimizerConfig
from neuro_evolution.optimizers.declared_state import Array
from neuro_evolution.optimizers.population import (
    POPULATION_ROWS,
    PopulationSearch,
    check_initial_range,
    initial_range_option,
)

NAME = "DE"
Strategy = Literal["rand/1/bin", "best/1/bin"]
# Vectors drawn per target besides it: base + two differences (rand/1), two differences (best/1).
DRAWN = {"rand/1/bin": 3, "best/1/bin": 2}


@config_class
class DeConfig(OptimizerConfig):
    """Options of the ``DE`` optimizer (defaults: Storn & Price 1997, Sec. 2 and 4)."""

    population_size: int | None = option(
        None, doc="NP, genomes per generation (null: 10 x genome size, the paper's 5D to 10D)", ge=3
    )
    strategy: Strategy = option(
        "rand/1/bin",
        doc="rand/1/bin: v = x_r1 + F (x_r2 - x_r3); best/1/bin: v = x_best + F (x_r1 - x_r2)",
    )
    differential_weight: float = option(0.5, doc="F, the scale of the difference vector", gt=0)
    crossover_rate: float = option(
        0.1, doc="CR: probability a gene comes from the mutant (one always does)", ge=0, le=1
    )
    initial_gene_range: tuple[float, float] = initial_range_option()

    def validate(self, path: str) -> None:
        check_initial_range(self.initial_gene_range, path)
        least = DRAWN[self.strategy] + 1
        if self.population_size is not None and self.population_size < least:
            raise ConfigError(
                join(path, "population_size"),
                f"must be >= {least} for {self.strategy} (the target and {least - 1} other"
                f" distinct vectors), got {self.population_size}",
            )

    def population_for(self, genome_size: int) -> int:
        """NP for genomes of ``genome_size``."""
        if self.population_size is not None:
            return self.population_size
        return max(10 * genome_size, DRAWN[self.strategy] + 1)


def others(rng: np.random.Generator, size: int, rows: np.ndarray, count: int) -> np.ndarray:
    """(len(rows), count) indices: per row ``i``, ``count`` distinct members of range(size),
    all different from ``i``."""
    picked = np.empty((len(rows), count), dtype=np.int64)
    for k, i in enumerate(rows):
        draw = rng.choice(size - 1, count, replace=False)
        picked[k] = draw + (draw >= i)  # skip the target itself
    return picked


def crossover_mask(uniforms: np.ndarray, forced: np.ndarray, crossover_rate: float) -> np.ndarray:
    """Eq. (3)'s choice: gene j from the mutant when randb(j) <= CR or j = rnbr(i) (``forced``)."""
    mask = uniforms <= crossover_rate
    mask[np.arange(len(mask)), forced] = True
    return mask


def trial_vectors(
    targets: np.ndarray,
    base: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    mask: np.ndarray,
    weight: float,
) -> np.ndarray:
    """Eq. (2) then Eq. (3): v = base + F (first - second); u = v where ``mask``, else target."""
    mutants = base + weight * (first - second)  # Eq. (2)
    return np.where(mask, mutants, targets)  # Eq. (3)


@OPTIMIZERS.register(NAME, config=DeConfig)
class DifferentialEvolution(PopulationSearch):
    """DE/rand/1/bin and DE/best/1/bin (Storn & Price 1997) over float64 genomes.

    Generation 1 asks NP genomes uniform in ``initial_gene_range``. Every later generation asks
    one trial vector u_i per target x_i: mutant v_i = x_r1 + F (x_r2 - x_r3) (rand/1) or
    v_i = x_best + F (x_r1 - x_r2) (best/1; x_best the target of highest fitness), with
    r1, r2, r3 distinct and != i (Eq. 2); binomial crossover takes gene j from v_i when
    randb(j) <= CR or j = rnbr(i), one gene drawn per target (Eq. 3); greedy selection keeps
    u_i in place of x_i only when it scores strictly better (Sec. 2.3).

    Deviations of evosax's ``DifferentialEvolution``, where this follows the paper: evosax
    replaces a target on ties (<=), draws the best/1 differences excluding x_best, and defaults
    to F = 0.8, CR = 0.9 (here 0.5 and 0.1, the paper's first choices).

    A target keeps the fitness of its one evaluation: with noisy episode fitness a lucky
    target stays. So ``center()`` is the best trial of the latest generation, freshly evaluated,
    not the best target.
    """

    NAME = NAME
    STATE = (
        *PopulationSearch.STATE,
        Array("_population", POPULATION_ROWS),
        Array("_fitness", ("_population",)),
    )

    def __init__(self, config: DeConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, config.population_for(genome_size))
        self._population = np.zeros((0, genome_size))
        self._fitness = np.zeros(0)

    @classmethod
    def state_bytes(cls, config: DeConfig, genome_size: int) -> int:
        """Targets, the pending trials, mutants, uniforms and mask (P, G each) and fitness."""
        population = config.population_for(genome_size)
        return 8 * population * (5 * genome_size + 1)

    def _draw(self, rows: np.ndarray) -> np.ndarray:
        """Generation 1: uniform genomes; then the trial vectors of the targets ``rows``."""
        if len(self._fitness) == 0:
            return self.uniform_initial(len(rows))
        config, population = self.config, self._population
        picked = others(self._rng, self.population_size, rows, DRAWN[config.strategy])
        if config.strategy == "best/1/bin":
            base = population[int(np.argmax(self._fitness))]
            first, second = population[picked[:, 0]], population[picked[:, 1]]
        else:
            base = population[picked[:, 0]]
            first, second = population[picked[:, 1]], population[picked[:, 2]]
        uniforms = self._rng.random((len(rows), self.genome_size))
        forced = self._rng.integers(0, self.genome_size, len(rows))
        mask = crossover_mask(uniforms, forced, config.crossover_rate)
        return trial_vectors(
            population[rows], base, first, second, mask, config.differential_weight
        )

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Generation 1 becomes the population; then each trial replaces its target when it
        scores strictly better."""
        trials = self.take_pending(fitness)
        if len(self._fitness) == 0:
            self._population, self._fitness = trials, fitness.copy()
            return
        better = fitness > self._fitness
        self._population[better] = trials[better]
        self._fitness[better] = fitness[better]

    def population(self) -> tuple[np.ndarray, np.ndarray]:
        """The current targets and the fitness each was told with."""
        return self._population.copy(), self._fitness.copy()
