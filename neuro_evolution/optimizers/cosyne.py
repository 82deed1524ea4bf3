"""COSYNE: Cooperative Synapse Neuroevolution, Gomez, Schmidhuber & Miikkulainen (2008),
"Accelerated Neural Evolution through Cooperatively Coevolved Synapses", JMLR 9, Fig. 2.

The population is an n x m matrix P: m complete genomes (columns; rows of :meth:`ask` here)
of n genes, and each gene's m values X_i form one subpopulation. Every generation:

1. evaluate the m genomes x_j = (x_1j, ..., x_nj) and sort them by fitness, best first;
2. recombine: l offspring from the top quarter (ceil(m / 4), at least 2): each pair of
   parents drawn at random from it (without replacement) gives two children by one-point
   crossover (cut uniform in 1..n-1; ``crossover: neuron``: one cut within each neuron's genes,
   the brain template's :meth:`~neuro_evolution.brains.base.BrainTemplate.gene_units`, as the
   paper recombines), then every gene of a child is, with probability ``mutation_rate``, moved
   by ``mutation_scale`` times Cauchy (or Gaussian) noise;
3. in each subpopulation the offspring replace the l worst: o_{i,k} -> x_{i,m-k}, k = 1..l
   (``mutation_scope: population``: the mutation of step 2 then moves every gene of the new P,
   survivors too, instead of the offspring's alone);
4. permute: in each subpopulation X_i every surviving value x_ij is marked with probability

       p(x_ij) = 1 - ((f(x_j) - f_min) / (f_max - f_min))^(1/n)

   (f(x_j) the fitness of the genome it was evaluated in, f_min and f_max the generation's
   lowest and highest; ``marking: rank`` puts rank / (m - 1) in place of the min-max fraction,
   ``all`` marks every survivor as the basic CoSyNE does, and a generation of equal fitness
   marks all), and the marked values are shuffled among their own positions in X_i.

Choices where the paper leaves room: l (``offspring``; default the size of the top quarter, so
the worst quarter is replaced), offspring are not permuted (they are evaluated as
recombination made them), and which genes mutate: the paper's Fig. 2 mutates "each weight in
P", its experiments' text "each weight in a new network" (``mutation_scope``; default
``offspring``). docs/benchmarks/reproductions.md measures each choice on the paper's double
pole. l matters on the double pole without velocities
(docs/benchmarks/matrix.md).
The paper's f(x_ij) is min-max scaled fitness, not rank: ``marking: fitness`` is the default.
The best genome is never marked (p = 0), so it survives whole into the next generation.
CoSyNE has no search distribution: :meth:`center` is the best genome of the latest generation
told, the network the paper tests each generation (the best fitness ever seen would stick to a
genome that was lucky once on a capped return).
"""

from __future__ import annotations

from math import ceil
from typing import Literal

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import (
    OPTIMIZERS,
    Evaluations,
    Optimizer,
    OptimizerConfig,
)
from neuro_evolution.optimizers.declared_state import Array, Generator, Value
from neuro_evolution.optimizers.population import GENERATION_BEST
from neuro_evolution.optimizers.rng import owned_generator
from neuro_evolution.optimizers.shaping import mean_ranks
from neuro_evolution.support.seeds import GENERATOR_PURPOSE

NAME = "COSYNE"

Marking = Literal["fitness", "rank", "all"]
Crossover = Literal["genome", "neuron"]
MutationScope = Literal["offspring", "population"]


@config_class
class CosyneConfig(OptimizerConfig):
    """Options of the ``COSYNE`` optimizer (cooperatively coevolved synapses)."""

    population_size: int = option(40, doc="m: genomes (values per subpopulation)", ge=4)
    initial_gene_range: tuple[float, float] = option(
        (-1.0, 1.0), doc="[low, high]: genes of the first generation are uniform in this range"
    )
    mutation: Literal["cauchy", "gaussian"] = option(
        "cauchy", doc="distribution of the noise added to a mutated offspring gene"
    )
    mutation_rate: float = option(
        0.3, doc="probability that an offspring gene is mutated", ge=0, le=1
    )
    mutation_scale: float = option(
        0.3, doc="scale of the mutation noise (Cauchy scale or Gaussian stdev)", gt=0
    )
    offspring: int | None = option(
        None,
        doc="l: offspring bred from the top quarter each generation, replacing the l least fit"
        " (null: as many as the top quarter holds); at most population_size - 1",
        ge=1,
    )
    crossover: Crossover = option(
        "genome",
        doc="genome: one-point crossover over the whole genome; neuron: one point within each"
        " neuron's genes (the paper's recombination; needs a brain type that names its neurons'"
        " genes: FFNN, CTRNN, composed of them)",
    )
    mutation_scope: MutationScope = option(
        "offspring",
        doc="offspring: mutation moves the new offspring's genes; population: every gene of the"
        " new population P, survivors too (the paper's 'each weight in P')",
    )
    marking: Marking = option(
        "fitness",
        doc="permutation marking: fitness (the paper's p = 1 - u^(1/n), u min-max scaled"
        " fitness), rank (u = rank / (m - 1)) or all (every survivor is permuted)",
    )

    def validate(self, path: str) -> None:
        low, high = self.initial_gene_range
        if not low < high:
            raise ConfigError(
                join(path, "initial_gene_range"),
                f"must be [low, high] with low < high, got {[low, high]}",
            )
        if self.offspring is not None and self.offspring >= self.population_size:
            raise ConfigError(
                join(path, "offspring"),
                f"must be below population_size ({self.population_size}) so that a genome "
                f"survives, got {self.offspring}",
            )

    @property
    def parents(self) -> int:
        """The top quarter, ceil(m / 4), at least 2."""
        return max(2, ceil(self.population_size / 4))

    @property
    def offspring_count(self) -> int:
        """l, the offspring per generation: ``offspring``, or the size of the top quarter."""
        return self.offspring if self.offspring is not None else self.parents


def marking_probabilities(fitness: np.ndarray, genes: int, marking: Marking) -> np.ndarray:
    """p per genome of ``fitness`` (any order): 1 - u^(1/genes), u its min-max scaled fitness
    (``rank``: rank / (m - 1)); 1 for every genome with ``all`` or when all fitness is equal."""
    low, high = float(fitness.min()), float(fitness.max())
    if marking == "all" or low == high:
        return np.ones(len(fitness))
    if marking == "rank":
        fraction = mean_ranks(fitness) / (len(fitness) - 1)
    else:
        fraction = (fitness - low) / (high - low)
    return 1.0 - fraction ** (1.0 / genes)


def permute_marked(values: np.ndarray, marked: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``values`` (m, n) with, in every column, the marked entries shuffled among the marked
    positions: they go, in the order of their ``keys``, to the marked positions top down."""
    m, n = values.shape
    slots = np.arange(m)[:, None]
    order = np.argsort(np.where(marked, keys, np.inf), axis=0, kind="stable")
    positions = np.argsort(np.where(marked, slots, m), axis=0, kind="stable")
    valid = slots < marked.sum(axis=0)  # the first count_j rows of column j are marked ones
    columns = np.broadcast_to(np.arange(n), (m, n))[valid]
    permuted = values.copy()
    permuted[positions[valid], columns] = values[order[valid], columns]
    return permuted


@OPTIMIZERS.register(NAME, config=CosyneConfig)
class Cosyne(Optimizer):
    """CoSyNE over float64 genomes: the m genomes of the population are what ``ask`` returns."""

    NAME = NAME
    CANDIDATE_SOURCE = "generation_best"
    STATE = (
        Array("_population", ("population_size", "genome_size")),
        Value("_asked", bool, key="has_asked"),
        GENERATION_BEST,
        Generator("_rng"),
    )

    def __init__(self, config: CosyneConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.population_size = config.population_size
        self._rng = owned_generator(seed, GENERATOR_PURPOSE)
        low, high = config.initial_gene_range
        first = self._rng.uniform(low, high, (self.population_size, genome_size))
        self._population = self.within_bounds(first)
        self._asked = False
        self._generation_best = np.zeros((0, genome_size))

    @classmethod
    def state_bytes(cls, config: CosyneConfig, genome_size: int) -> int:
        """The population and at most six (m, n) temporaries of a tell (sorting, marks, keys,
        permutation indices)."""
        return 8 * 7 * config.population_size * genome_size

    def _ask(self) -> np.ndarray:
        """The population, the same until the next tell."""
        self._asked = True
        return self._population.copy()

    def _asked_count(self) -> int:
        return self.population_size if self._asked else 0

    def center(self) -> np.ndarray | None:
        """The best genome of the latest generation told (None before the first tell)."""
        return self._generation_best[0].copy() if len(self._generation_best) else None

    def use_gene_units(self, units: np.ndarray | None) -> None:
        """``crossover: neuron`` needs the genome's neurons: refused in one line without."""
        super().use_gene_units(units)
        if self.config.crossover != "neuron":
            return
        if units is None:
            raise ConfigError(
                "optimizer.crossover",
                "neuron needs a brain type that names which genes belong to which neuron "
                "(FFNN, CTRNN, or a composed brain of them); use crossover: genome",
            )
        order = np.argsort(units, kind="stable")  # each unit's genes, in genome order
        self._unit_genes = tuple(np.split(order, np.cumsum(np.bincount(units))[:-1]))

    def _cross(self, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Two children of one pair: one cut over the genome, or (``crossover: neuron``) one
        cut within each neuron's genes, unit by unit (a unit of one gene is not cut)."""
        n = self.genome_size
        if self.config.crossover == "genome":
            cut = int(self._rng.integers(1, n)) if n > 1 else n
            return (
                np.concatenate([first[:cut], second[cut:]]),
                np.concatenate([second[:cut], first[cut:]]),
            )
        one, other = first.copy(), second.copy()
        for genes in self._unit_genes:
            if len(genes) > 1:
                tail = genes[int(self._rng.integers(1, len(genes))) :]
                one[tail], other[tail] = second[tail], first[tail]
        return one, other

    def _mutated(self, genomes: np.ndarray) -> np.ndarray:
        """``genomes`` with each gene moved, with probability ``mutation_rate``, by
        ``mutation_scale`` times Cauchy (or Gaussian) noise."""
        shape = genomes.shape
        mutated = self._rng.random(shape) < self.config.mutation_rate
        if self.config.mutation == "cauchy":
            noise = self._rng.standard_cauchy(shape)
        else:
            noise = self._rng.standard_normal(shape)
        return genomes + np.where(mutated, self.config.mutation_scale * noise, 0.0)

    def _offspring(self, parents: np.ndarray, count: int) -> np.ndarray:
        """``count`` children of the sorted top-quarter ``parents``: crossover of random pairs,
        then (``mutation_scope: offspring``) mutation, draws in that order."""
        children = np.empty((count, self.genome_size))
        for k in range(0, count, 2):
            first, second = parents[self._rng.choice(len(parents), 2, replace=False)]
            one, other = self._cross(first, second)
            children[k] = one
            if k + 1 < count:
                children[k + 1] = other
        if self.config.mutation_scope == "offspring":
            children = self._mutated(children)
        return self.within_bounds(children)

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Sort, breed l offspring into the worst l places, permute the survivors' genes."""
        order = np.argsort(-fitness, kind="stable")
        ranked, ranked_fitness = self._population[order], fitness[order]
        self._generation_best = ranked[:1].copy()
        l_count = self.config.offspring_count
        survivors = self.population_size - l_count
        children = self._offspring(ranked[: self.config.parents], l_count)
        probability = marking_probabilities(ranked_fitness, self.genome_size, self.config.marking)
        shape = (survivors, self.genome_size)
        marked = self._rng.random(shape) < probability[:survivors, None]
        keys = self._rng.random(shape)
        population = np.empty_like(ranked)
        population[:survivors] = permute_marked(ranked[:survivors], marked, keys)
        population[survivors:] = children[::-1]  # o_k -> x_{m-k}
        if self.config.mutation_scope == "population":
            population = self.within_bounds(self._mutated(population))
        self._population = population
        self._asked = False
