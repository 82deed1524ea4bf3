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

In a run, ``objectives`` (per-episode measures, see
:mod:`neuro_evolution.moo.objectives`) make NSGA2 a measured optimizer: every evaluation
returns them and :meth:`NSGA2.tell` selects on them (minimized ones negated), the
log gains the front's ``hypervolume`` against ``reference_point``, and the run validates
:meth:`NSGA2.center`: the front member best in objective ``candidate_objective``. Each
survivor keeps the episode base seed, generation and observation scaler of its evaluation, so
``pareto.npz`` can be replayed. Without objectives (``tell``, one column: the episode return)
this is a (mu + lambda) genetic algorithm; ``center()`` is None (there is no search
distribution) and a run stands behind its hall of fame's best, as for MU_ES.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.moo.files import FrontMembers, ParetoWriter
from neuro_evolution.moo.objectives import (
    ObjectiveConfig,
    check_objectives,
    front_hypervolume,
    raw_values,
    record_scaler,
    senses,
    survivor_records,
)
from neuro_evolution.moo.operators import (
    binary_tournament,
    environmental_selection,
    polynomial_bounded,
    sbx,
    sbx_bounded,
)
from neuro_evolution.moo.pareto import (
    checked_matrix,
    to_maximization,
)
from neuro_evolution.moo.reference_point import unbeaten_reference_line
from neuro_evolution.optimizers.base import (
    OPTIMIZERS,
    Evaluations,
    Optimizer,
    OptimizerConfig,
    RunFileWriter,
)
from neuro_evolution.optimizers.declared_state import (
    Array,
    ArrayDict,
    Generator,
    Pending,
    Value,
)
from neuro_evolution.optimizers.members import StoredMembers
from neuro_evolution.optimizers.rng import owned_generator
from neuro_evolution.support.console import warning
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

    objectives: tuple[ObjectiveConfig, ...] = option(
        (),
        doc="per-episode measures to optimize: [{name, source, index, reduce, sense, ...}];"
        " empty: one objective, the episode return (no hypervolume, no pareto files)",
    )
    reference_point: tuple[float, ...] | None = option(
        None,
        doc="objectives: the hypervolume's reference point in raw units, one value each (below"
        " what should count of a maximized objective, above it of a minimized one)",
    )
    candidate_objective: int = option(
        0, doc="objectives: the run validates the front member best in this objective", ge=0
    )

    def validate(self, path: str) -> None:
        check_objectives(self.objectives, self.reference_point, self.candidate_objective, path)
        low, high = self.initial_gene_range
        if not low < high:
            raise ConfigError(
                join(path, "initial_gene_range"),
                f"must be [low, high] with low < high, got {[low, high]}",
            )
        if self.variation == "sbx_polynomial" and self.bounds is None:
            raise ConfigError(
                join(path, "bounds"),
                'variation sbx_polynomial keeps genes in bounds: give bounds {"low": ...,'
                ' "high": ...}',
            )

    @property
    def lambda_(self) -> int:
        """Offspring per generation."""
        return self.offspring_size if self.offspring_size is not None else self.population_size

    @property
    def asked_size(self) -> int:
        """Genomes asked per generation after the first (the first asks population_size)."""
        return self.lambda_ + (self.population_size if self.reevaluate_parents else 0)


def _asked_count(optimizer: NSGA2, loaded: Mapping[str, Any]) -> int:
    """The pending ask's size: the offspring, or the first population before any survivors."""
    return optimizer.config.asked_size if len(loaded["_genomes"]) else optimizer.population_size


@OPTIMIZERS.register(NAME, config=Nsga2Config)
class NSGA2(Optimizer):
    """NSGA-II over float64 genomes; every objective column is maximized.

    With ``objectives`` configured it selects on their per-episode measures (raw units,
    minimized ones negated). Without, it maximizes the columns of ``Evaluations.measures`` as
    told (a benchmark problem's objective matrix), or the fitness as one column when no measures
    are told (an ordinary run).
    """

    NAME = NAME
    CANDIDATE_SOURCE = "front_best"
    MEASURES_FIELD = "objectives"
    STATE = (
        Value("_objective_count", int, key="objective_count"),
        Array("_genomes", ((0, "population_size"), "genome_size"), key="parent_genomes"),
        Array("_objectives", ("_genomes", "_objective_count"), key="parent_objectives"),
        Array("_ranks", ("_genomes",), dtype=np.int64, key="parent_ranks"),
        Array("_crowding", ("_genomes",), key="parent_crowding"),
        ArrayDict("_provenance", "parent_", rows="_genomes", like="survivor_layout"),
        Pending((("_asked", "asked_genomes"),), count=_asked_count),
        Generator("_rng"),
    )
    config: Nsga2Config

    def __init__(self, config: Nsga2Config, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.population_size = config.population_size
        self.mutation_prob = config.mutation_prob or 1.0 / genome_size
        self.senses = senses(config.objectives)
        self.observation_size = 0  # > 0 once keep_scalers was called
        self._rng = owned_generator(seed, GENERATOR_PURPOSE)
        self._objective_count = 0  # set by the first tell
        self._genomes = np.zeros((0, genome_size))
        self._objectives = np.zeros((0, 0))
        self._reference_warned = False  # optimizers/reference_point.py
        self._ranks = np.zeros(0, dtype=np.int64)
        self._crowding = np.zeros(0)
        self._provenance = survivor_records(0, 0)  # per survivor: seed, generation, scaler
        self._asked: np.ndarray | None = None

    @classmethod
    def state_bytes(cls, config: Nsga2Config, genome_size: int) -> int:
        """Parents + offspring genomes (union, children, six draw planes per child) and the
        union's n x n dominance matrix with its (block, n, M) temporaries (M taken as 8)."""
        union = config.population_size + config.asked_size
        return 8 * 10 * union * genome_size + union * union * 10

    # --- measured (a run with objectives) ------------------------------------------------------
    def measure_configs(self) -> tuple[MeasureConfig, ...]:
        """The objectives, in order (none: the run tells the episode return)."""
        return tuple(self.config.objectives)

    def keep_scalers(self, observation_size: int) -> None:
        """Keep each survivor's observation scaler (``observation_size`` values wide)."""
        self.observation_size = observation_size
        self._provenance = survivor_records(len(self._genomes), observation_size)

    def run_files(self, folder: Path, template: BrainTemplate, title: str) -> list[RunFileWriter]:
        """With objectives: ``pareto.npz`` (the front) and ``pareto.png`` (its picture)."""
        if not self.config.objectives:
            return []
        return [ParetoWriter(folder, self, template, title)]

    @classmethod
    def stored_members(cls, config: Nsga2Config, run_dir: Path) -> StoredMembers | None:
        """With objectives: the Pareto front (``pareto.npz``), ``--front K``; none without."""
        if not config.objectives:
            return None
        return FrontMembers(run_dir, tuple(config.objectives))

    def log_metrics(self) -> dict[str, float]:
        """``hypervolume`` of the front against ``reference_point`` (none without objectives)."""
        if not self.config.objectives or self.config.reference_point is None:
            return {}
        _, objectives = self.front()
        volume = front_hypervolume(objectives, self.config.reference_point, self.senses)
        if volume == 0.0 and len(objectives) and not self._reference_warned:  # once per run
            self._reference_warned = True
            names = [objective.name for objective in self.config.objectives]
            raw = raw_values(objectives, self.senses)
            warning(unbeaten_reference_line(raw, self.config.reference_point, self.senses, names))
        return {"hypervolume": volume}

    def center(self) -> np.ndarray | None:
        """With objectives: the front member best in ``candidate_objective`` (what the run
        validates); otherwise None (the run stands behind its hall of fame's best)."""
        if not self.config.objectives:
            return None
        return self.candidate(self.config.candidate_objective)

    def center_scaler(self) -> ObservationScaler | None:
        """The observation scaler :meth:`center`'s genome was evaluated with."""
        if not self.config.objectives or not self.observation_size or not self._objective_count:
            return None
        return record_scaler(self._provenance, self._best_member(self.config.candidate_objective))

    # --- ask / tell ----------------------------------------------------------------------------
    def _ask(self) -> np.ndarray:
        """The genomes to evaluate, made once per generation."""
        if self._asked is None:
            if len(self._genomes) == 0:
                genomes = self._initial_population()
            else:
                genomes = self._offspring()
                if self.config.reevaluate_parents:
                    genomes = np.concatenate([self._genomes, genomes])
            self._asked = self.within_bounds(genomes)
        return self._asked.copy()

    def _asked_count(self) -> int:
        return 0 if self._asked is None else len(self._asked)

    def _variation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of every gene for the bounded variation (sbx_polynomial)."""
        assert self.bounds is not None  # the config refuses sbx_polynomial without bounds
        return self.bounds.low, self.bounds.high

    def _initial_population(self) -> np.ndarray:
        config = self.config
        low, high = (
            self._variation_bounds()
            if config.variation == "sbx_polynomial"
            else config.initial_gene_range
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
            c1, c2 = sbx_bounded(
                first, second, config.crossover_eta, self._variation_bounds(), draws
            )
        else:
            c1, c2 = sbx(first, second, config.crossover_eta, rng.random((pairs, g)))
        children = np.empty((2 * pairs, g))
        children[0::2] = np.where(crossed, c1, first)
        children[1::2] = np.where(crossed, c2, second)
        children = children[: config.lambda_]
        if config.variation == "sbx_polynomial":
            draws = rng.random((2, len(children), g))
            return polynomial_bounded(
                children, config.mutation_eta, self._variation_bounds(), self.mutation_prob, draws
            )
        mutate = rng.random(children.shape) < self.mutation_prob
        noise = rng.standard_normal(children.shape)
        return np.where(mutate, children + config.mutation_sigma * noise, children)

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Keep the population_size best of survivors + asked by (rank, crowding). With
        objectives the survivors keep their evaluation's seed, generation and scaler; without,
        their seeds are 0 (nothing replays them) and the hall of fame is not used."""
        assert self._asked is not None
        if self.config.objectives:
            measures = evaluations.measure_matrix(len(self.config.objectives))
            self._select(
                to_maximization(measures, self.senses),
                evaluations.seed_array(),
                evaluations.generation,
                evaluations.scaler,
            )
            return
        told = evaluations.measures
        if told is not None and np.ndim(told) == 2 and np.shape(told)[1] > 0:
            values = np.asarray(told, dtype=np.float64)
        else:
            values = fitness[:, None]
        self._select(values, np.zeros(len(self._asked), dtype=np.int64), self.generation)

    def _select(
        self,
        objectives: np.ndarray,
        seeds: np.ndarray,
        generation: int,
        scaler: ObservationScaler | None = None,
    ) -> None:
        assert self._asked is not None
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
        if self.observation_size and scaler is None:
            raise ValueError("this optimizer keeps observation scalers: pass the scaler")
        genomes = self._asked
        provenance = survivor_records(
            len(genomes), self.observation_size, seeds, generation, scaler
        )
        if len(self._genomes) and not self.config.reevaluate_parents:
            genomes = np.concatenate([self._genomes, genomes])
            values = np.concatenate([self._objectives, values])
            provenance = {
                key: np.concatenate([self._provenance[key], value])
                for key, value in provenance.items()
            }
        chosen, self._ranks, self._crowding = environmental_selection(values, self.population_size)
        self._genomes, self._objectives = genomes[chosen], values[chosen]
        self._provenance = {key: value[chosen] for key, value in provenance.items()}
        self._objective_count = values.shape[1]
        self._asked = None

    # --- the front -----------------------------------------------------------------------------
    def front_members(self) -> np.ndarray:
        """Survivor indices of the rank-0 front, by the first objective descending (ties by
        survivor index): front member K is survivor ``front_members()[K]``."""
        members = np.flatnonzero(self._ranks == 0)
        if len(members):
            members = members[np.argsort(-self._objectives[members, 0], kind="stable")]
        return members

    def front(self) -> tuple[np.ndarray, np.ndarray]:
        """Rank-0 survivors' genomes and objectives, by the first objective descending (ties
        by survivor index)."""
        members = self.front_members()
        return self._genomes[members].copy(), self._objectives[members].copy()

    def front_records(self) -> dict[str, np.ndarray]:
        """Per front member (order of :meth:`front`): ``survivors`` (their indices), ``seeds``
        and ``generations`` of their evaluations and, when kept, their observation scalers."""
        members = self.front_members()
        return {"survivors": members} | {k: v[members] for k, v in self._provenance.items()}

    def _best_member(self, objective: int) -> int:
        members = np.flatnonzero(self._ranks == 0)
        return int(members[int(np.argmax(self._objectives[members, objective]))])

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
        return self._genomes[self._best_member(objective)].copy()

    # --- state ---------------------------------------------------------------------------------
    def survivor_layout(self) -> dict[str, np.ndarray]:
        """What the state keeps per survivor beyond its genome (no rows: the layout)."""
        return survivor_records(0, self.observation_size)
