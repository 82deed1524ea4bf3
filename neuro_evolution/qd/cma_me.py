"""CMA_ME: CMA-ES emitters that rank their samples by how much they improve the archive.

M. C. Fontaine, J. Togelius, S. Nikolaidis and A. K. Hoover, "Covariance Matrix Adaptation for
the Rapid Illumination of Behavior Space", GECCO 2020 (arXiv:1912.02400): improvement emitters.
pyribs' ``EvolutionStrategyEmitter(ranker="2imp", restart_rule="no_improvement")`` is the
reference implementation. Each of ``emitters`` emitters is the project's CMA_ES (``covariance``
full) or SEP_CMA_ES (diagonal) with ``batch_size`` samples per generation and mu = batch_size
// 2 (pyribs' "mu" selection). One generation asks every emitter in turn and concatenates the
batches; the archive takes them in that order. Each emitter then ranks its own samples
two-stage: first by insertion status (new cell, improved elite, not added), then by value
(fitness for a new cell, else fitness minus the cell's elite before it), and moves its CMA-ES
towards the best of that ranking.

``selection``: ``mu`` moves each emitter towards the best half of its ranking; ``filter``
(pyribs' default ``selection_rule``) towards the samples that entered the archive only, with
Table 1's weights and rates for that many parents (a stalled emitter restarts instead).

Restart (pyribs' "no_improvement" rule): an emitter none of whose samples entered the archive
starts a fresh CMA-ES (step size ``sigma``) at an elite drawn uniformly from the archive; its
seed is ``emitter_seed(optimizer seed, emitter, restarts)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from neuro_evolution.core.schema import config_class, option
from neuro_evolution.optimizers.base import OPTIMIZERS, Evaluations
from neuro_evolution.optimizers.cma_common import CmaBase, CmaParameters
from neuro_evolution.optimizers.cma_es import CmaEs, CmaEsConfig
from neuro_evolution.optimizers.declared_state import Array, Part
from neuro_evolution.optimizers.sep_cma_es import SepCmaEs, SepCmaEsConfig
from neuro_evolution.qd.archive import NOT_ADDED
from neuro_evolution.qd.base import QdOptimizer
from neuro_evolution.qd.descriptors import QdConfig
from neuro_evolution.support.seeds import emitter_seed

NAME = "CMA_ME"


@config_class
class CmaMeConfig(QdConfig):
    """Options of the ``CMA_ME`` optimizer (improvement emitters)."""

    emitters: int = option(5, doc="CMA-ES emitters; a generation asks each for batch_size", ge=1)
    batch_size: int = option(30, doc="samples per emitter and generation (CMA-ES lambda)", ge=2)
    sigma: float = option(1.0, doc="initial (and restart) step size of each emitter", gt=0)
    center_init: float = option(0.0, doc="initial mean of every gene (old name: initial_centroid)")
    covariance: Literal["full", "diagonal"] = option(
        "full", doc="full: CMA_ES emitters (O(n^2)); diagonal: SEP_CMA_ES emitters (O(n))"
    )
    selection: Literal["mu", "filter"] = option(
        "mu",
        doc="parents of each emitter's update: mu: the best half of its ranking; filter: the "
        "samples that entered the archive (pyribs' default)",
    )


def improvement_order(status: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Indices best first: status descending (new, improved, not added), then value
    descending; ties keep submission order."""
    return np.lexsort((-value, -status))


@OPTIMIZERS.register(NAME, config=CmaMeConfig)
class CmaMe(QdOptimizer):
    """CMA-ME with improvement emitters; every ask returns ``emitters * batch_size`` genomes."""

    NAME = NAME
    ALGORITHM_STATE = (
        Array("restarts", ("config.emitters",), dtype=np.int64),
        Part("emitter_states", "emitter"),
    )
    config: CmaMeConfig

    def __init__(self, config: CmaMeConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        self.restarts = np.zeros(config.emitters, dtype=np.int64)
        self._parameter_cache: dict[int, CmaParameters] = {}
        start = np.full(genome_size, config.center_init, dtype=np.float64)
        self.emitters: list[CmaBase] = [self._new_emitter(e, start) for e in range(config.emitters)]

    @classmethod
    def _batch_bytes(cls, config: Any, genome_size: int) -> int:
        per_emitter = 8 * genome_size * (5 * config.batch_size + 8)
        if config.covariance == "full":
            per_emitter += 5 * 8 * genome_size**2
        return config.emitters * per_emitter

    def _emitter_config(self, mu: int | None = None) -> CmaEsConfig | SepCmaEsConfig:
        """The CMA-ES config of an emitter (``mu`` parents; null: batch_size // 2)."""
        config = self.config
        kind = CmaEsConfig if config.covariance == "full" else SepCmaEsConfig
        return kind(population_size=config.batch_size, mu=mu, sigma=config.sigma)

    def _new_emitter(self, emitter: int, mean: np.ndarray) -> CmaBase:
        """A fresh CMA-ES for ``emitter`` (seed from its restart count) centred on ``mean``."""
        seed = emitter_seed(self.seed, emitter, int(self.restarts[emitter]))
        cma: CmaBase
        if self.config.covariance == "full":
            cma = CmaEs(self._emitter_config(), self.genome_size, seed)  # type: ignore[arg-type]
        else:
            cma = SepCmaEs(self._emitter_config(), self.genome_size, seed)  # type: ignore[arg-type]
        cma.mean = np.array(mean, dtype=np.float64)
        return cma

    def _parameters(self, parents: int) -> CmaParameters:
        """Table 1's strategy parameters for ``parents`` parents (cached per count)."""
        cached = self._parameter_cache.get(parents)
        if cached is None:
            diagonal = self.config.covariance == "diagonal"
            cached = CmaParameters.for_genome(
                self._emitter_config(parents), self.genome_size, diagonal
            )
            self._parameter_cache[parents] = cached
        return cached

    def _sample(self) -> np.ndarray:
        return np.concatenate([emitter.ask() for emitter in self.emitters])

    def _adapt(self, fitness: np.ndarray, status: np.ndarray, value: np.ndarray) -> None:
        batch = self.config.batch_size
        for e, emitter in enumerate(self.emitters):
            rows = slice(e * batch, (e + 1) * batch)
            order = improvement_order(status[rows], value[rows])
            ranked = np.empty(batch)
            ranked[order] = -np.arange(batch, dtype=np.float64)  # best first for CMA-ES
            stalled = bool(np.all(status[rows] == NOT_ADDED))
            if self.config.selection == "filter" and not stalled:
                # the parents are the samples that entered the archive (they rank first)
                emitter.params = self._parameters(int(np.sum(status[rows] != NOT_ADDED)))
            emitter.tell(Evaluations(ranked))
            if stalled or not np.all(np.isfinite(emitter.mean)):
                self._restart(e)

    def _restart(self, emitter: int) -> None:
        """A fresh CMA-ES at a uniformly drawn elite (the start mean while the archive is empty)."""
        cells = self.archive.elite_cells()
        if len(cells):
            mean = self.archive.genomes[cells[self._random.integers(len(cells))]]
        else:
            mean = np.full(self.genome_size, self.config.center_init)
        self.restarts[emitter] += 1
        self.emitters[emitter] = self._new_emitter(emitter, mean)

    @property
    def emitter_states(self) -> EmitterStates:
        """The emitters as one state part (``emitter{e}_`` keys)."""
        return EmitterStates(self)


class EmitterStates:
    """A CMA-ME run's emitters as one state part: emitter ``e``'s CMA-ES state under
    ``{prefix}{e}_``; loading builds each emitter afresh and loads its state into it."""

    def __init__(self, owner: CmaMe):
        self.owner = owner

    def to_state(self, prefix: str) -> dict[str, Any]:
        state: dict[str, Any] = {}
        for e, emitter in enumerate(self.owner.emitters):
            state.update({f"{prefix}{e}_{k}": v for k, v in emitter.state().items()})
        return state

    def load_state(self, state: Mapping[str, Any], prefix: str) -> None:
        owner = self.owner
        start = np.full(owner.genome_size, owner.config.center_init)
        emitters = []
        for e in range(owner.config.emitters):
            keys = f"{prefix}{e}_"
            emitter = owner._new_emitter(e, start)
            emitter.load_state({k[len(keys) :]: v for k, v in state.items() if k.startswith(keys)})
            emitters.append(emitter)
        owner.emitters = emitters
