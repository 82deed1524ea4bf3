"""MU_ES: a (mu + lambda) evolution strategy with self-adaptive mutation strengths, on DEAP.

Every individual carries strategy genes (mutation standard deviations) next to its genes:
one per gene (``strategy_parameter_per_gene``; DEAP's ``mutESLogNormal`` / ``cxESBlend``) or a
single one shared by all genes (the same log-normal rule with one strength, tau = c/sqrt(n)).
Offspring come from DEAP's ``varOr`` (crossover, mutation or copy); survivors are chosen by
DEAP's ``selTournament`` or ``selBest`` among parents + offspring.

Generation sizes (what :meth:`MuPlusLambda.ask` returns, always ``population_size`` genomes):

- ``reevaluate_parents`` true (default): ``mu + lambda_`` — the mu parents (re-evaluated, because
  episode fitness is noisy and a parent that got one lucky evaluation would otherwise survive on
  stale fitness) followed by lambda_ offspring. The first generation is ``mu + lambda_``
  individuals drawn uniformly from ``initial_gene_range``.
- ``reevaluate_parents`` false: ``lambda_`` — only the offspring; parents keep the fitness they
  were told. The first generation is ``lambda_`` uniform individuals (so ``lambda_ >= mu``).

Parents chosen from the first generation are selected exactly like later ones.
"""

from __future__ import annotations

import math
import random
from typing import Literal

import numpy as np
from deap import algorithms, base, tools

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import (
    OPTIMIZERS,
    Evaluations,
    Optimizer,
    OptimizerConfig,
)
from neuro_evolution.optimizers.declared_state import Array, ArrayDict, Part, Pending
from neuro_evolution.optimizers.rng import PythonRandomState
from neuro_evolution.optimizers.shaping import FitnessShaping, shape_fitness

NAME = "MU_ES"


@config_class
class MuEsConfig(OptimizerConfig):
    """Options of the ``MU_ES`` (mu + lambda) evolution strategy."""

    mu: int = option(10, doc="parents kept each generation", ge=1)
    lambda_: int = option(40, doc="offspring made each generation", ge=1)
    initial_gene_range: tuple[float, float] = option(
        (-1.0, 1.0), doc="[low, high]: genes of the first generation are uniform in this range"
    )
    initial_strategy: float = option(
        0.1, doc="initial value of every strategy gene (a mutation standard deviation)", gt=0
    )
    min_strategy: float = option(
        1e-3, doc="strategy genes are raised to at least this after variation", ge=0
    )
    strategy_parameter_per_gene: bool = option(
        False, doc="true: one self-adapted mutation strength per gene; false: one per individual"
    )
    c: float = option(1.0, doc="learning parameter of the log-normal strategy update", gt=0)
    indpb: float = option(1.0, doc="probability that a gene is mutated", gt=0, le=1)
    selection: Literal["best", "tournament"] = option(
        "best",
        doc="survivor selection: the mu best (classic ES truncation) or tournaments of tournsize"
        " (with replacement: weaker pressure, the best can be lost)",
    )
    tournsize: int = option(3, doc="individuals per tournament (selection: tournament)", ge=1)
    mate_prob: float = option(0.1, doc="probability an offspring is made by crossover", ge=0, le=1)
    mutate_prob: float = option(
        0.9, doc="probability an offspring is made by mutation (the rest are copies)", ge=0, le=1
    )
    blend_alpha: float = option(
        0.1, doc="blend crossover extent beyond the two parents' values (genes and strategy)", ge=0
    )
    extra_from_hof: int = option(
        0, doc="best hall-of-fame genomes added to the parents when making offspring", ge=0
    )
    reevaluate_parents: bool = option(
        True, doc="evaluate parents again each generation (noisy fitness); false: keep it"
    )
    fitness_shaping: FitnessShaping = option(
        "none",
        doc="none or centered_ranks (over parents and offspring together); both selections are"
        " rank-based, so the survivors are the same either way",
    )

    def validate(self, path: str) -> None:
        low, high = self.initial_gene_range
        if not low < high:
            raise ConfigError(
                join(path, "initial_gene_range"),
                f"must be [low, high] with low < high, got {[low, high]}",
            )
        if not (self.mate_prob + self.mutate_prob) <= 1.0:  # the same check as deap's varOr
            raise ConfigError(
                join(path, "mutate_prob"),
                f"mate_prob + mutate_prob must be <= 1, got {self.mate_prob} + {self.mutate_prob};"
                " lower one of them",
            )
        if self.mate_prob > 0 and self.mu < 2:
            raise ConfigError(
                join(path, "mu"),
                "must be >= 2 when mate_prob > 0 (crossover needs two parents)"
                f", got {self.mu}; raise mu or set mate_prob to 0",
            )
        if self.min_strategy > self.initial_strategy:
            raise ConfigError(
                join(path, "min_strategy"),
                f"must be <= initial_strategy ({self.initial_strategy}), got {self.min_strategy}",
            )
        if not self.reevaluate_parents and self.lambda_ < self.mu:
            raise ConfigError(
                join(path, "lambda_"),
                f"must be >= mu ({self.mu}) when reevaluate_parents is false (the first"
                f" generation of lambda_ individuals supplies the mu parents), got {self.lambda_}",
            )

    @property
    def population_size(self) -> int:
        """Genomes returned by every ``ask``."""
        return self.lambda_ + (self.mu if self.reevaluate_parents else 0)


class _Fitness(base.Fitness):
    weights = (1.0,)


class _Individual(list):
    """A genome as DEAP's ES operators expect it: a list of genes with a ``strategy`` list."""

    def __init__(self, genes: list[float], strategy: list[float], index: int = -1):
        super().__init__(genes)
        self.strategy = list(strategy)
        self.fitness = _Fitness()
        self.position = index  # not ``index``: that would hide list.index


def mut_log_normal_global(individual: _Individual, c: float, indpb: float) -> tuple[_Individual]:
    """``mutESLogNormal`` for one strength shared by all genes: s *= exp(tau N(0,1)), tau=c/sqrt(n).

    Then each gene, with probability ``indpb``, gets s * N(0,1) added. Draws from ``random``.
    """
    tau = c / math.sqrt(len(individual))
    individual.strategy[0] *= math.exp(tau * random.gauss(0, 1))
    strength = individual.strategy[0]
    for index in range(len(individual)):
        if random.random() < indpb:
            individual[index] += strength * random.gauss(0, 1)
    return (individual,)


def cx_blend_global(
    first: _Individual, second: _Individual, alpha: float
) -> tuple[_Individual, _Individual]:
    """``cxESBlend`` for one shared strength: blend the genes (``cxBlend``), then the strength."""
    tools.cxBlend(first, second, alpha)
    gamma = (1.0 + 2.0 * alpha) * random.random() - alpha
    s1, s2 = first.strategy[0], second.strategy[0]
    first.strategy[0] = (1.0 - gamma) * s1 + gamma * s2
    second.strategy[0] = gamma * s1 + (1.0 - gamma) * s2
    return first, second


@OPTIMIZERS.register(NAME, config=MuEsConfig)
class MuPlusLambda(Optimizer):
    """(mu + lambda) ES with self-adaptive strategy genes; DEAP operators on an owned ``random``.

    ``extra_from_hof``: after selection, the best ``extra_from_hof`` genomes of the hall of fame
    given to :meth:`tell` (fewer while it holds fewer) join the mu parents as parents of the next
    offspring (variation only; they are not survivors and are not re-evaluated as parents).
    Hall-of-fame genomes carry no strategy genes: they get the mean strategy of the mu parents
    just selected, i.e. the currently adapted mutation strength.
    """

    NAME = NAME
    CANDIDATE_SOURCE = "best_parent"
    STATE = (
        Array("_parent_genomes", ((0, "config.mu"), "genome_size")),
        Array("_parent_strategies", ("_parent_genomes", "strategy_size")),
        Array("_parent_fitness", ("_parent_genomes",)),
        Array("_extra_genomes", (None, "genome_size")),
        Array("_extra_strategies", ("_extra_genomes", "strategy_size")),
        Pending(
            (("_asked_genomes", "asked_genomes"), ("_asked_strategies", "asked_strategies")),
            widths=("genome_size", "strategy_size"),
        ),
        Part("_random", "random"),
        # per parent, the observation scaler its fitness came from (a run with normalization)
        ArrayDict(
            "_parent_scalers",
            "parent_observation_",
            ("mean", "scale", "clip"),
            rows="_parent_genomes",
        ),
    )

    def __init__(self, config: MuEsConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.strategy_size = genome_size if config.strategy_parameter_per_gene else 1
        self.population_size = config.population_size
        self._random = PythonRandomState(seed)
        self._toolbox = base.Toolbox()
        if config.strategy_parameter_per_gene:
            self._toolbox.register("mate", tools.cxESBlend, alpha=config.blend_alpha)
            self._toolbox.register("mutate", tools.mutESLogNormal, c=config.c, indpb=config.indpb)
        else:
            self._toolbox.register("mate", cx_blend_global, alpha=config.blend_alpha)
            self._toolbox.register("mutate", mut_log_normal_global, c=config.c, indpb=config.indpb)
        self._parent_genomes = np.zeros((0, genome_size))
        self._parent_strategies = np.zeros((0, self.strategy_size))
        self._parent_fitness = np.zeros(0)
        # per parent, the observation scaler its told fitness came from (None: no normalization)
        self._parent_scalers: dict[str, np.ndarray] | None = None
        self._extra_genomes = np.zeros((0, genome_size))
        self._extra_strategies = np.zeros((0, self.strategy_size))
        self._asked_genomes: np.ndarray | None = None
        self._asked_strategies: np.ndarray | None = None

    @classmethod
    def state_bytes(cls, config: MuEsConfig, genome_size: int) -> int:
        """Peak bytes: every individual of a generation (asked, parents, hall-of-fame extras)
        as arrays and as DEAP's lists of Python floats (~40 bytes a gene), strategy included."""
        strategy_size = genome_size if config.strategy_parameter_per_gene else 1
        individuals = config.population_size + config.mu + config.extra_from_hof
        return 40 * individuals * (genome_size + strategy_size)

    def _ask(self) -> np.ndarray:
        """``population_size`` genomes, made once per generation."""
        if self._asked_genomes is None:
            with self._random.active():
                if len(self._parent_genomes) == 0:
                    genomes, strategies = self._initial_population()
                else:
                    genomes, strategies = self._offspring()
                    if self.config.reevaluate_parents:
                        genomes = np.concatenate([self._parent_genomes, genomes])
                        strategies = np.concatenate([self._parent_strategies, strategies])
            self._asked_genomes = self.within_bounds(genomes)
            self._asked_strategies = strategies
        return self._asked_genomes.copy()

    def _asked_count(self) -> int:
        return 0 if self._asked_genomes is None else len(self._asked_genomes)

    def center(self) -> np.ndarray | None:
        """The fittest of the mu parents selected at the latest tell (None before it): with
        re-evaluated parents, the best genome of the latest generation told. The best fitness
        ever seen would stick to a genome that was lucky once on a noisy or capped return."""
        if len(self._parent_genomes) == 0:
            return None
        return self._parent_genomes[int(np.argmax(self._parent_fitness))].copy()

    def center_scaler(self) -> ObservationScaler | None:
        """The observation scaler :meth:`center`'s fitness was evaluated with."""
        rows = self._parent_scalers
        if rows is None or len(self._parent_genomes) == 0:
            return None
        best = int(np.argmax(self._parent_fitness))
        return ObservationScaler(
            mean=rows["mean"][best].copy(),
            scale=rows["scale"][best].copy(),
            clip=float(rows["clip"][best]),
        )

    def _initial_population(self) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.config.initial_gene_range
        genomes = np.array(
            [
                [random.uniform(low, high) for _ in range(self.genome_size)]
                for _ in range(self.population_size)
            ],
            dtype=np.float64,
        ).reshape(self.population_size, self.genome_size)
        strategies = np.full(
            (self.population_size, self.strategy_size), self.config.initial_strategy
        )
        return genomes, strategies

    def _offspring(self) -> tuple[np.ndarray, np.ndarray]:
        """lambda_ offspring of parents + hall-of-fame extras by DEAP's varOr."""
        pool = [
            _Individual(genes.tolist(), strategy.tolist())
            for genes, strategy in zip(
                np.concatenate([self._parent_genomes, self._extra_genomes]),
                np.concatenate([self._parent_strategies, self._extra_strategies]),
            )
        ]
        config = self.config
        offspring = algorithms.varOr(
            pool, self._toolbox, config.lambda_, config.mate_prob, config.mutate_prob
        )
        genomes = np.array([list(child) for child in offspring], dtype=np.float64)
        strategies = np.array([child.strategy for child in offspring], dtype=np.float64)
        strategies = np.maximum(strategies, config.min_strategy)
        return genomes.reshape(config.lambda_, self.genome_size), strategies

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Select the mu survivors among parents + offspring; take the hall-of-fame extras."""
        assert self._asked_genomes is not None and self._asked_strategies is not None
        extra_genomes = self._hall_of_fame_extras(evaluations.hall_of_fame)
        scalers = scaler_rows(evaluations.scaler, len(fitness))
        if self.config.reevaluate_parents or len(self._parent_genomes) == 0:
            genomes, strategies = self._asked_genomes, self._asked_strategies
        else:
            genomes = np.concatenate([self._parent_genomes, self._asked_genomes])
            strategies = np.concatenate([self._parent_strategies, self._asked_strategies])
            fitness = np.concatenate([self._parent_fitness, fitness])
            if scalers is not None and self._parent_scalers is not None:
                kept = self._parent_scalers
                scalers = {key: np.concatenate([kept[key], scalers[key]]) for key in scalers}
        chosen = self._select(shape_fitness(self.config.fitness_shaping, fitness))
        self._parent_scalers = (
            None if scalers is None else {key: rows[chosen] for key, rows in scalers.items()}
        )
        self._parent_genomes = genomes[chosen]
        self._parent_strategies = strategies[chosen]
        self._parent_fitness = fitness[chosen]
        self._extra_genomes = extra_genomes
        self._extra_strategies = np.tile(
            self._parent_strategies.mean(axis=0), (len(extra_genomes), 1)
        )
        self._asked_genomes = self._asked_strategies = None

    def _select(self, selection_fitness: np.ndarray) -> np.ndarray:
        """Indices of the mu survivors (DEAP selection on the given fitness)."""
        candidates = []
        for index, value in enumerate(selection_fitness):
            individual = _Individual([], [], index)
            individual.fitness.values = (float(value),)
            candidates.append(individual)
        if self.config.selection == "best":
            chosen = tools.selBest(candidates, self.config.mu)
        else:
            with self._random.active():
                chosen = tools.selTournament(candidates, self.config.mu, self.config.tournsize)
        return np.array([individual.position for individual in chosen], dtype=np.int64)

    def _hall_of_fame_extras(self, hall_of_fame: HallOfFame | None) -> np.ndarray:
        count = self.config.extra_from_hof
        if count == 0:
            return np.zeros((0, self.genome_size))
        if hall_of_fame is None:
            raise ValueError("tell: extra_from_hof > 0 needs the hall of fame, got None")
        genomes = np.asarray(hall_of_fame.genomes, dtype=np.float64)
        if genomes.ndim != 2 or genomes.shape[1] != self.genome_size:
            raise ValueError(
                f"tell: hall of fame genomes have shape {genomes.shape}, expected (n, "
                f"{self.genome_size})"
            )
        return genomes[:count].copy()


def scaler_rows(scaler: ObservationScaler | None, count: int) -> dict[str, np.ndarray] | None:
    """``count`` rows of ``scaler`` (mean, scale, clip), one per told genome; None without one."""
    if scaler is None:
        return None
    return {
        "mean": np.tile(np.asarray(scaler.mean, dtype=np.float64), (count, 1)),
        "scale": np.tile(np.asarray(scaler.scale, dtype=np.float64), (count, 1)),
        "clip": np.full(count, float(scaler.clip)),
    }
