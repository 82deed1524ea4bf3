"""GA: the simple genetic algorithm of deep neuroevolution (truncation selection, Gaussian
mutation, elitism, no crossover).

Such, Madhavan, Conti, Lehman, Stanley, Clune (2017), "Deep Neuroevolution: Genetic Algorithms
Are a Competitive Alternative for Training Deep Neural Networks for Reinforcement Learning"
(arXiv:1712.06567), Algorithm 1, with the Atari hyperparameters of their Table 2 as defaults.
Reference implementation: evosax's ``SimpleGA``.
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import OPTIMIZERS, Evaluations, OptimizerConfig
from neuro_evolution.optimizers.declared_state import Array
from neuro_evolution.optimizers.population import PopulationSearch

NAME = "GA"


@config_class
class GaConfig(OptimizerConfig):
    """Options of the ``GA`` optimizer (defaults: Such et al. 2017, Table 2, Atari)."""

    population_size: int = option(1001, doc="genomes per generation, elites included", ge=2)
    truncation: int = option(
        20, doc="T: the best T of a generation are the parents of the next", ge=1
    )
    sigma: float = option(0.002, doc="mutation power: offspring = parent + sigma * N(0, I)", gt=0)
    elites: int = option(
        1, doc="best genomes carried into the next generation unchanged (and evaluated again)", ge=0
    )
    center_init: float = option(0.0, doc="mean of every gene of the first population")
    initial_stdev: float = option(1.0, doc="stdev of every gene of the first population", gt=0)

    def validate(self, path: str) -> None:
        if self.truncation > self.population_size:
            raise ConfigError(
                join(path, "truncation"),
                f"must be <= population_size ({self.population_size}), got {self.truncation}",
            )
        if self.elites > self.truncation:
            raise ConfigError(
                join(path, "elites"),
                f"must be <= truncation ({self.truncation}): the elites are the best parents,"
                f" got {self.elites}",
            )
        if self.elites >= self.population_size:
            raise ConfigError(
                join(path, "elites"),
                f"must be < population_size ({self.population_size}) to leave room for"
                f" offspring, got {self.elites}",
            )


def truncation_order(fitness: np.ndarray, count: int) -> np.ndarray:
    """Indices of the ``count`` highest ``fitness`` values, best first (ties: lower index)."""
    return np.argsort(-fitness, kind="stable")[:count]


def mutated_offspring(
    parents: np.ndarray, choice: np.ndarray, noise: np.ndarray, sigma: float
) -> np.ndarray:
    """Algorithm 1's offspring: P_k + sigma * eps, k = ``choice`` (uniform over the T parents),
    eps = ``noise`` (standard normal rows)."""
    return parents[choice] + sigma * noise


@OPTIMIZERS.register(NAME, config=GaConfig)
class GeneticAlgorithm(PopulationSearch):
    """Simple GA (Such et al. 2017, Algorithm 1) over float64 genomes.

    Generation 1: ``population_size`` genomes N(center_init, initial_stdev^2 I). After each
    tell the generation is sorted by fitness; its best T (``truncation``) are the parents. The
    next ask holds the best ``elites`` genomes unchanged, then ``population_size - elites``
    offspring P_k + sigma * eps, k uniform over the T parents, eps ~ N(0, I).

    Elitism: the paper picks the elite among the 10 best by 30 extra episodes each. Here the
    elites are carried over and evaluated again as part of the next ask, with the offspring, so
    an elite that was lucky once must score again to stay (no extra evaluations outside the
    ask). ``elites: 0`` replaces the whole generation.

    evosax's ``SimpleGA`` deviates from the paper: its truncation is fixed at half the
    population, it has no elitism and an optional crossover; here T and the elites are options
    and there is no crossover, as in the paper.

    ``center()`` is None: the best-so-far is a fitness draw, so the run stands behind its hall
    of fame.
    """

    NAME = NAME
    STATE = (
        *PopulationSearch.STATE,
        Array("_parents", ((0, "config.truncation"), "genome_size")),
        Array("_parent_fitness", ("_parents",)),
    )

    def __init__(self, config: GaConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, config.population_size)
        self._parents = np.zeros((0, genome_size))  # best first
        self._parent_fitness = np.zeros(0)

    @classmethod
    def state_bytes(cls, config: GaConfig, genome_size: int) -> int:
        """Parents (T, G), the pending population and its noise (P, G each), sort temporaries."""
        rows = 3 * config.population_size + config.truncation
        return 8 * genome_size * rows + 16 * config.population_size

    def _draw(self, rows: np.ndarray) -> np.ndarray:
        """First generation: Gaussian genomes. Then elites in the first rows, offspring after."""
        config = self.config
        if len(self._parents) == 0:
            noise = self._rng.standard_normal((len(rows), self.genome_size))
            return config.center_init + config.initial_stdev * noise
        drawn = np.empty((len(rows), self.genome_size))
        elite = rows < config.elites
        drawn[elite] = self._parents[rows[elite]]
        count = int((~elite).sum())
        choice = self._rng.integers(0, len(self._parents), count)
        noise = self._rng.standard_normal((count, self.genome_size))
        drawn[~elite] = mutated_offspring(self._parents, choice, noise, config.sigma)
        return drawn

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Truncation selection: the best T of the told generation become the parents."""
        genomes = self.take_pending(fitness)
        order = truncation_order(fitness, self.config.truncation)
        self._parents, self._parent_fitness = genomes[order], fitness[order]

    def parents(self) -> tuple[np.ndarray, np.ndarray]:
        """The selected parents (best first) and the fitness they were told with."""
        return self._parents.copy(), self._parent_fitness.copy()
