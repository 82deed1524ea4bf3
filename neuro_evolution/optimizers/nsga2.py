"""NSGA2: Deb et al. (2002)'s NSGA-II behind ask/tell, told a (P, M) matrix of objectives.

One generation: binary tournaments on (Pareto rank, crowding distance) pick parents from the
survivors; pairs are crossed with SBX (probability ``crossover_prob`` per pair) and every child
is mutated; the survivors of parents + offspring (mu + lambda) are the best fronts, the last
one cut by crowding distance (larger first, ties by index).

Variation (``variation``):

- ``sbx_gaussian`` (default; neuro_evolution genomes are unbounded floats): DEAP's unbounded
  ``cxSimulatedBinary`` (every gene) and Gaussian mutation ``mutation_sigma * N(0, 1)``.
- ``sbx_polynomial``: genes bounded in ``bounds``: DEAP's ``cxSimulatedBinaryBounded`` (each gene
  crossed with probability 1/2) and ``mutPolynomialBounded`` (Deb's NSGA-II C code). The first
  generation is uniform in ``bounds`` and no gene ever leaves them.

Each gene is mutated with probability ``mutation_prob`` (null: 1/genome_size). The operators
are vectorized numpy re-writings of DEAP's, fed by the optimizer's own PCG64 generator with a
fixed number of draws per generation (tests check them against DEAP's: every branch exactly,
values to the last bit or two, as numpy's vectorized power may round differently from libm's).

With one objective (``tell``) this is a (mu + lambda) genetic algorithm. ``center()`` is None
(there is no search distribution): a run stands behind its hall of fame's best, as for MU_ES. A
run of several objectives validates :meth:`NSGA2.candidate` of the objective it names: the
front member best in that objective.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from neuro_evolution.config.schema import ConfigError, config_class, join, option
from neuro_evolution.hall_of_fame import HallOfFame
from neuro_evolution.optimizers.base import (
    MultiObjectiveOptimizer,
    OptimizerConfig,
    OptimizerState,
)
from neuro_evolution.optimizers.pareto import (
    checked_matrix,
    crowded_order,
    crowding_distance,
    non_dominated_ranks,
)
from neuro_evolution.optimizers.registry import OPTIMIZERS
from neuro_evolution.optimizers.rng import (
    generator_load_state,
    generator_to_state,
    owned_generator,
    state_array,
    state_scalar,
)
from neuro_evolution.support.seeds import GENERATOR_PURPOSE

NAME = "NSGA2"
Variation = Literal["sbx_gaussian", "sbx_polynomial"]


@config_class
class Nsga2Config(OptimizerConfig):
    """Options of the ``NSGA2`` multi-objective genetic algorithm."""

    population_size: int = option(100, doc="survivors kept each generation (mu)", ge=2)
    offspring_size: int | None = option(
        None, doc="offspring made each generation (lambda); null: population_size", ge=1
    )
    variation: Variation = option(
        "sbx_gaussian",
        doc="sbx_gaussian (unbounded genes: SBX + Gaussian mutation) or sbx_polynomial (genes"
        " kept in bounds: bounded SBX + polynomial mutation)",
    )
    bounds: tuple[float, float] = option(
        (0.0, 1.0), doc="[low, high] of every gene (variation: sbx_polynomial)"
    )
    initial_gene_range: tuple[float, float] = option(
        (-1.0, 1.0), doc="[low, high]: first generation uniform here (variation: sbx_gaussian)"
    )
    crossover_prob: float = option(0.9, doc="probability a pair of parents is crossed", ge=0, le=1)
    crossover_eta: float = option(
        15.0, doc="SBX distribution index: larger keeps children nearer their parents", ge=0
    )
    mutation_prob: float | None = option(
        None, doc="probability each gene is mutated; null: 1/genome_size", gt=0, le=1
    )
    mutation_eta: float = option(
        20.0, doc="polynomial mutation distribution index (variation: sbx_polynomial)", ge=0
    )
    mutation_sigma: float = option(
        0.1, doc="Gaussian mutation standard deviation (variation: sbx_gaussian)", gt=0
    )
    reevaluate_parents: bool = option(
        False,
        doc="true: ask the survivors again with the offspring (noisy objectives); false: they"
        " keep the objectives told once (classic NSGA-II)",
    )

    def validate(self, path: str) -> None:
        for name in ("bounds", "initial_gene_range"):
            low, high = getattr(self, name)
            if not low < high:
                raise ConfigError(
                    join(path, name), f"must be [low, high] with low < high, got {[low, high]}"
                )

    @property
    def lambda_(self) -> int:
        """Offspring per generation."""
        return self.offspring_size if self.offspring_size is not None else self.population_size

    @property
    def asked_size(self) -> int:
        """Genomes asked per generation after the first (the first asks population_size)."""
        return self.lambda_ + (self.population_size if self.reevaluate_parents else 0)


def sbx(
    first: np.ndarray, second: np.ndarray, eta: float, uniform: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """DEAP's ``cxSimulatedBinary`` on rows of parents, one uniform draw per gene."""
    beta = np.where(uniform <= 0.5, 2.0 * uniform, 1.0 / (2.0 * (1.0 - uniform)))
    beta = beta ** (1.0 / (eta + 1.0))
    child1 = 0.5 * (((1 + beta) * first) + ((1 - beta) * second))
    child2 = 0.5 * (((1 - beta) * first) + ((1 + beta) * second))
    return child1, child2


def _spread(beta: np.ndarray, eta: float, uniform: np.ndarray) -> np.ndarray:
    alpha = 2.0 - beta ** -(eta + 1)
    return np.where(
        uniform <= 1.0 / alpha,
        (uniform * alpha) ** (1.0 / (eta + 1)),
        (1.0 / (2.0 - uniform * alpha)) ** (1.0 / (eta + 1)),
    )


def sbx_bounded(
    first: np.ndarray,
    second: np.ndarray,
    eta: float,
    bounds: tuple[float, float],
    draws: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """DEAP's ``cxSimulatedBinaryBounded``; ``draws`` (3, ...) are per gene: apply (<= 1/2),
    spread, swap (<= 1/2). Genes closer than 1e-14 are not crossed."""
    low, high = bounds
    apply, uniform, swap = draws
    x1, x2 = np.minimum(first, second), np.maximum(first, second)
    active = (apply <= 0.5) & (np.abs(first - second) > 1e-14)
    gap = np.where(active, x2 - x1, 1.0)
    q1 = _spread(1.0 + (2.0 * (np.where(active, x1, low) - low) / gap), eta, uniform)
    q2 = _spread(1.0 + (2.0 * (high - np.where(active, x2, high)) / gap), eta, uniform)
    c1 = np.minimum(np.maximum(0.5 * (x1 + x2 - q1 * (x2 - x1)), low), high)
    c2 = np.minimum(np.maximum(0.5 * (x1 + x2 + q2 * (x2 - x1)), low), high)
    swapped = swap <= 0.5
    child1 = np.where(active, np.where(swapped, c2, c1), first)
    child2 = np.where(active, np.where(swapped, c1, c2), second)
    return child1, child2


def polynomial_bounded(
    genomes: np.ndarray,
    eta: float,
    bounds: tuple[float, float],
    prob: float,
    draws: np.ndarray,
) -> np.ndarray:
    """DEAP's ``mutPolynomialBounded``; ``draws`` (2, ...) are per gene: apply (<= prob), shape."""
    low, high = bounds
    apply, uniform = draws
    width = high - low
    delta_1, delta_2 = (genomes - low) / width, (high - genomes) / width
    power = 1.0 / (eta + 1.0)
    lower = uniform < 0.5
    xy = np.where(lower, 1.0 - delta_1, 1.0 - delta_2)
    low_val = 2.0 * uniform + (1.0 - 2.0 * uniform) * xy ** (eta + 1)
    high_val = 2.0 * (1.0 - uniform) + 2.0 * (uniform - 0.5) * xy ** (eta + 1)
    delta_q = np.where(lower, low_val**power - 1.0, 1.0 - high_val**power)
    mutated = np.minimum(np.maximum(genomes + delta_q * width, low), high)
    return np.where(apply <= prob, mutated, genomes)


def binary_tournament(
    rng: np.random.Generator, ranks: np.ndarray, crowding: np.ndarray, count: int
) -> np.ndarray:
    """``count`` winners of tournaments between two uniformly drawn entrants (with
    replacement): lower rank wins, then larger crowding, then the first drawn."""
    entrants = rng.integers(0, len(ranks), size=(count, 2))
    a, b = entrants[:, 0], entrants[:, 1]
    second_wins = (ranks[b] < ranks[a]) | ((ranks[b] == ranks[a]) & (crowding[b] > crowding[a]))
    return np.where(second_wins, b, a)


def environmental_selection(objectives: np.ndarray, count: int) -> tuple[np.ndarray, ...]:
    """(chosen indices in increasing order, their ranks, their crowding): the ``count`` best by
    whole fronts, the last front cut by crowding distance (larger first, ties by index)."""
    ranks = non_dominated_ranks(objectives)
    crowding = np.zeros(len(ranks))
    for rank in range(int(ranks.max()) + 1):
        members = np.flatnonzero(ranks == rank)
        crowding[members] = crowding_distance(objectives[members])
        if np.count_nonzero(ranks <= rank) >= count:
            break
    chosen = np.sort(crowded_order(ranks, crowding)[:count])
    return chosen, ranks[chosen], crowding[chosen]


@OPTIMIZERS.register(NAME, config=Nsga2Config)
class NSGA2(MultiObjectiveOptimizer):
    """NSGA-II over float64 genomes; every objective column is maximized."""

    def __init__(self, config: Nsga2Config, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.population_size = config.population_size
        self.mutation_prob = config.mutation_prob or 1.0 / genome_size
        self._rng = owned_generator(seed, GENERATOR_PURPOSE)
        self._generation = 0
        self._objective_count = 0  # set by the first tell
        self._genomes = np.zeros((0, genome_size))
        self._objectives = np.zeros((0, 0))
        self._ranks = np.zeros(0, dtype=np.int64)
        self._crowding = np.zeros(0)
        self._asked: np.ndarray | None = None

    @classmethod
    def state_bytes(cls, config: Nsga2Config, genome_size: int) -> int:
        """Parents + offspring genomes (union, children, six draw planes per child) and the
        union's n x n dominance matrix with its (block, n, M) temporaries (M taken as 8)."""
        union = config.population_size + config.asked_size
        return 8 * 10 * union * genome_size + union * union * 10

    def ask(self) -> np.ndarray:
        """The genomes to evaluate; asking again before :meth:`tell_objectives` repeats them."""
        if self._asked is None:
            if len(self._genomes) == 0:
                self._asked = self._initial_population()
            else:
                offspring = self._offspring()
                if self.config.reevaluate_parents:
                    offspring = np.concatenate([self._genomes, offspring])
                self._asked = offspring
        return self._asked.copy()

    def _initial_population(self) -> np.ndarray:
        config = self.config
        low, high = (
            config.bounds if config.variation == "sbx_polynomial" else (config.initial_gene_range)
        )
        return self._rng.uniform(low, high, size=(self.population_size, self.genome_size))

    def _offspring(self) -> np.ndarray:
        """lambda_ children: tournaments, SBX per pair, mutation per gene."""
        config, rng, g = self.config, self._rng, self.genome_size
        pairs = -(-config.lambda_ // 2)
        chosen = binary_tournament(rng, self._ranks, self._crowding, 2 * pairs)
        first, second = self._genomes[chosen[0::2]], self._genomes[chosen[1::2]]
        crossed = (rng.random(pairs) < config.crossover_prob)[:, None]
        if config.variation == "sbx_polynomial":
            draws = rng.random((3, pairs, g))
            c1, c2 = sbx_bounded(first, second, config.crossover_eta, config.bounds, draws)
        else:
            c1, c2 = sbx(first, second, config.crossover_eta, rng.random((pairs, g)))
        children = np.empty((2 * pairs, g))
        children[0::2] = np.where(crossed, c1, first)
        children[1::2] = np.where(crossed, c2, second)
        children = children[: config.lambda_]
        if config.variation == "sbx_polynomial":
            draws = rng.random((2, len(children), g))
            return polynomial_bounded(
                children, config.mutation_eta, config.bounds, self.mutation_prob, draws
            )
        mutate = rng.random(children.shape) < self.mutation_prob
        noise = rng.standard_normal(children.shape)
        return np.where(mutate, children + config.mutation_sigma * noise, children)

    def tell_objectives(
        self, objectives: np.ndarray, hall_of_fame: HallOfFame | None = None
    ) -> None:
        """Keep the population_size best of survivors + asked by (rank, crowding); the hall of
        fame is not used."""
        if self._asked is None:
            raise RuntimeError("tell() needs a preceding ask(): there are no genomes to score")
        values = checked_matrix(objectives)
        if len(values) != len(self._asked):
            raise ValueError(
                f"objectives: expected {len(self._asked)} rows (one per genome of the last ask),"
                f" got shape {values.shape}"
            )
        if self._objective_count and values.shape[1] != self._objective_count:
            raise ValueError(
                f"objectives: expected {self._objective_count} columns as before, got"
                f" {values.shape[1]}"
            )
        genomes = self._asked
        if len(self._genomes) and not self.config.reevaluate_parents:
            genomes = np.concatenate([self._genomes, genomes])
            values = np.concatenate([self._objectives, values])
        chosen, self._ranks, self._crowding = environmental_selection(values, self.population_size)
        self._genomes, self._objectives = genomes[chosen], values[chosen]
        self._objective_count = values.shape[1]
        self._asked = None
        self._generation += 1

    def front(self) -> tuple[np.ndarray, np.ndarray]:
        """Rank-0 survivors' genomes and objectives, by the first objective descending (ties
        by survivor index)."""
        members = np.flatnonzero(self._ranks == 0)
        if len(members):
            members = members[np.argsort(-self._objectives[members, 0], kind="stable")]
        return self._genomes[members].copy(), self._objectives[members].copy()

    def candidate(self, objective: int) -> np.ndarray | None:
        """The rank-0 survivor best in column ``objective`` (ties: lowest survivor index);
        None before the first tell."""
        if self._objective_count == 0:
            return None
        if not 0 <= objective < self._objective_count:
            raise ValueError(
                f"objective {objective}: there are {self._objective_count} objectives"
                f" (0..{self._objective_count - 1})"
            )
        members = np.flatnonzero(self._ranks == 0)
        best = members[int(np.argmax(self._objectives[members, objective]))]
        return self._genomes[best].copy()

    def state(self) -> OptimizerState:
        """Survivors (genomes, objectives, ranks, crowding), a pending ask and the generator."""
        return {
            "optimizer": NAME,
            "generation": self._generation,
            "objective_count": self._objective_count,
            "parent_genomes": self._genomes.copy(),
            "parent_objectives": self._objectives.copy(),
            "parent_ranks": self._ranks.copy(),
            "parent_crowding": self._crowding.copy(),
            "has_asked": self._asked is not None,
            "asked_genomes": (
                self._asked.copy() if self._asked is not None else np.zeros((0, self.genome_size))
            ),
            **generator_to_state(self._rng, "generator"),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`state` of an optimizer with the same config and genome size."""
        if str(state_scalar(state, "optimizer")) != NAME:
            raise ValueError(
                f"optimizer state is for {state_scalar(state, 'optimizer')!r}, not {NAME}"
            )
        g, m = self.genome_size, int(state_scalar(state, "objective_count"))
        genomes = state_array(state, "parent_genomes", np.float64, (None, g))
        n = len(genomes)
        if n not in (0, self.population_size):
            raise ValueError(
                f"optimizer state has {n} survivors, but the config's population_size is"
                f" {self.population_size}"
            )
        objectives = state_array(state, "parent_objectives", np.float64, (n, m))
        ranks = state_array(state, "parent_ranks", np.int64, (n,))
        crowding = state_array(state, "parent_crowding", np.float64, (n,))
        has_asked = bool(state_scalar(state, "has_asked"))
        asked = state_array(state, "asked_genomes", np.float64, (None, g))
        if has_asked and len(asked) != (self.config.asked_size if n else self.population_size):
            raise ValueError(f"optimizer state has {len(asked)} asked genomes for this config")
        generator_load_state(self._rng, state, "generator")
        self._generation = int(state_scalar(state, "generation"))
        self._objective_count = m
        self._genomes, self._objectives, self._ranks, self._crowding = (
            genomes,
            objectives,
            ranks,
            crowding,
        )
        self._asked = asked if has_asked else None
