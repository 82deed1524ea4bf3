"""A user's own QD optimizer with its own archive file, registered from outside the package (a
config's ``imports``), whose elites ``replay`` and ``export`` pick through the stored-members
interface alone.

NICHE_ELITES is MAP-Elites over one per-episode measure cut into ``niches`` equal intervals of
[low, high] (values outside go to the end niches): each niche keeps the best genome that fell
into it, and a generation mutates uniformly chosen elites, x' = x_i + sigma N(0, I) (the first
generation draws N(0, initial_sigma^2 I)). It is no :class:`~neuro_evolution.qd.base.QdOptimizer`:
it keeps its own arrays, writes its own ``niches.npz`` (:meth:`run_files`) and declares its
elites as stored members (:meth:`stored_members`): ``--elite K`` is row K of ``niches.npz``
(occupied niches ascending).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution import BrainTemplate, config_class, option, register_optimizer
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.optimizers.base import (
    Evaluations,
    Optimizer,
    OptimizerConfig,
    OptimizerState,
    RunFileWriter,
)
from neuro_evolution.optimizers.members import Member, StoredMembers, row_scaler
from neuro_evolution.optimizers.rng import (
    generator_load_state,
    generator_to_state,
    owned_generator,
    state_scalar,
)
from neuro_evolution.support.atomic import atomic_savez, load_npz
from neuro_evolution.support.errors import UserError
from neuro_evolution.support.seeds import GENERATOR_PURPOSE

NAME = "NICHE_ELITES"
NICHES_FILE = "niches.npz"
TEMPLATE_PREFIX = "template."


@config_class
class NicheElitesConfig(OptimizerConfig):
    """Options of ``NICHE_ELITES``."""

    niche_measure: MeasureConfig = option(doc="the per-episode measure the niches cut")
    low: float = option(doc="lower end of the first niche")
    high: float = option(doc="upper end of the last niche")
    niches: int = option(8, doc="equal intervals of [low, high]", ge=1)
    batch_size: int = option(12, doc="genomes per generation", ge=1)
    sigma: float = option(0.5, doc="mutation step size", gt=0)
    initial_sigma: float = option(1.0, doc="std. dev. of the first batch", gt=0)


@dataclasses.dataclass(frozen=True)
class NicheMembers(StoredMembers):
    """The elites of ``niches.npz``: ``--elite K`` is its row K."""

    path: Path
    measure: MeasureConfig
    flags = ("--elite",)

    def member(self, flag: str, value: str) -> Member:
        if not self.path.is_file():
            raise UserError(f"{self.path}: missing; the run has not finished a generation yet")
        data = load_npz(self.path)
        template = BrainTemplate.from_state(
            {k[len(TEMPLATE_PREFIX) :]: v for k, v in data.items() if k.startswith(TEMPLATE_PREFIX)}
        )
        count = len(data["niches"])
        if not value.isdigit() or int(value) >= count:
            raise UserError(f"--elite must be in 0..{count - 1}, got {value}")
        row = int(value)
        return Member(
            genome=np.array(data["genomes"][row], dtype=np.float64),
            seed=int(data["seeds"][row]),
            scaler=row_scaler(data, row),
            template=template,
            measures=(self.measure,),
            stored_fitness=float(data["fitness"][row]),
            stored_measures=data["measures"][row : row + 1],
            label=f"elite {row}",
            description=f"niche {int(data['niches'][row])} elite",
        )


@register_optimizer(NAME, config=NicheElitesConfig)
class NicheElites(Optimizer):
    """MAP-Elites over one measure's niches, with its own archive file."""

    CANDIDATE_SOURCE = "best_elite"
    MEASURES_FIELD = "niche_measure"
    config: NicheElitesConfig

    def __init__(self, config: NicheElitesConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        self._random = owned_generator(seed, GENERATOR_PURPOSE)
        self.genomes = np.zeros((config.niches, genome_size))
        self.fitness = np.full(config.niches, -np.inf)
        self.measures = np.zeros(config.niches)
        self.seeds = np.zeros(config.niches, dtype=np.int64)
        self.observation_mean = np.zeros((config.niches, 0))
        self.observation_scale = np.zeros((config.niches, 0))
        self.observation_clip = np.zeros(config.niches)
        self.scalers_kept = False
        self._asked: np.ndarray | None = None

    @classmethod
    def state_bytes(cls, config: NicheElitesConfig, genome_size: int) -> int:
        """The niches' genomes and one batch."""
        return 8 * (config.niches + 2 * config.batch_size) * (genome_size + 4)

    def measure_configs(self) -> tuple[MeasureConfig, ...]:
        """The one measure the niches cut."""
        return (self.config.niche_measure,)

    def keep_scalers(self, observation_size: int) -> None:
        """Keep the observation scaler of each niche's elite."""
        self.scalers_kept = True
        self.observation_mean = np.zeros((self.config.niches, observation_size))
        self.observation_scale = np.ones((self.config.niches, observation_size))

    def _ask(self) -> np.ndarray:
        if self._asked is None:
            config, rng = self.config, self._random
            shape = (config.batch_size, self.genome_size)
            filled = np.flatnonzero(np.isfinite(self.fitness))
            if len(filled) == 0:
                asked = config.initial_sigma * rng.standard_normal(shape)
            else:
                parents = self.genomes[filled[rng.integers(len(filled), size=config.batch_size)]]
                asked = parents + config.sigma * rng.standard_normal(shape)
            self._asked = self.within_bounds(asked)
        return self._asked.copy()

    def _asked_count(self) -> int:
        return 0 if self._asked is None else len(self._asked)

    def niche_of(self, measures: np.ndarray) -> np.ndarray:
        """The niche of each measure value."""
        config = self.config
        position = (measures - config.low) / (config.high - config.low) * config.niches
        return np.clip(np.floor(position), 0, config.niches - 1).astype(np.int64)

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Each asked genome, in submission order, replaces its niche's elite if it is fitter."""
        assert self._asked is not None
        measures = evaluations.measure_matrix(1)[:, 0]
        seeds = evaluations.seed_array()
        scaler = evaluations.scaler
        for index, niche in enumerate(self.niche_of(measures)):
            if fitness[index] > self.fitness[niche]:
                self.genomes[niche] = self._asked[index]
                self.fitness[niche] = fitness[index]
                self.measures[niche] = measures[index]
                self.seeds[niche] = seeds[index]
                if self.scalers_kept and scaler is not None:
                    self.observation_mean[niche] = scaler.mean
                    self.observation_scale[niche] = scaler.scale
                    self.observation_clip[niche] = scaler.clip
        self._asked = None

    def _best(self) -> int | None:
        return None if not np.isfinite(self.fitness).any() else int(np.argmax(self.fitness))

    def center(self) -> np.ndarray | None:
        """The best elite's genome."""
        best = self._best()
        return None if best is None else self.genomes[best].copy()

    def center_scaler(self) -> ObservationScaler | None:
        """The scaler the best elite was evaluated with."""
        best = self._best()
        if best is None or not self.scalers_kept:
            return None
        return ObservationScaler(
            mean=self.observation_mean[best].copy(),
            scale=self.observation_scale[best].copy(),
            clip=float(self.observation_clip[best]),
        )

    def log_metrics(self) -> dict[str, float]:
        """The share of niches filled."""
        return {"niches_filled": float(np.isfinite(self.fitness).mean())}

    def run_files(self, folder: Path, template: BrainTemplate, title: str) -> list[RunFileWriter]:
        """``niches.npz``: the occupied niches' elites, ascending, with the template."""

        def write(plot: bool) -> None:
            filled = np.flatnonzero(np.isfinite(self.fitness))
            arrays: dict[str, Any] = {
                "niches": filled,
                "genomes": self.genomes[filled],
                "fitness": self.fitness[filled],
                "measures": self.measures[filled],
                "seeds": self.seeds[filled],
            }
            if self.scalers_kept:  # row K's scaler, as optimizers.members.row_scaler reads it
                arrays["observation_mean"] = self.observation_mean[filled]
                arrays["observation_scale"] = self.observation_scale[filled]
                arrays["observation_clip"] = self.observation_clip[filled]
            arrays.update({TEMPLATE_PREFIX + k: v for k, v in template.to_state().items()})
            atomic_savez(folder / NICHES_FILE, arrays)

        return [write]

    @classmethod
    def stored_members(cls, config: NicheElitesConfig, run_dir: Path) -> StoredMembers | None:
        """The elites of ``niches.npz``."""
        return NicheMembers(run_dir / NICHES_FILE, config.niche_measure)

    def state(self) -> OptimizerState:
        asked = self._asked
        return {
            "optimizer": NAME,
            "generation": self.generation,
            "has_asked": asked is not None,
            "asked": asked.copy() if asked is not None else np.zeros((0, self.genome_size)),
            "genomes": self.genomes.copy(),
            "fitness": self.fitness.copy(),
            "measures": self.measures.copy(),
            "seeds": self.seeds.copy(),
            "observation_mean": self.observation_mean.copy(),
            "observation_scale": self.observation_scale.copy(),
            "observation_clip": self.observation_clip.copy(),
            **generator_to_state(self._random, "generator"),
        }

    def load_state(self, state: OptimizerState) -> None:
        self.generation = int(state_scalar(state, "generation"))
        asked = np.array(state["asked"], dtype=np.float64)
        self._asked = asked if bool(state_scalar(state, "has_asked")) else None
        self.genomes = np.array(state["genomes"], dtype=np.float64)
        self.fitness = np.array(state["fitness"], dtype=np.float64)
        self.measures = np.array(state["measures"], dtype=np.float64)
        self.seeds = np.array(state["seeds"], dtype=np.int64)
        self.observation_mean = np.array(state["observation_mean"], dtype=np.float64)
        self.observation_scale = np.array(state["observation_scale"], dtype=np.float64)
        self.observation_clip = np.array(state["observation_clip"], dtype=np.float64)
        generator_load_state(self._random, state, "generator")
