"""The optimizer interface: ``ask`` for genomes, ``tell`` one :class:`Evaluations` record of what
they scored; all state is explicit data.

Every optimizer (ES, MU_ES, QD, NSGA-II, a user's own) is told the same record, and declares what
it needs and adds through the same methods: the per-episode measures it selects on
(:meth:`Optimizer.measure_configs`), its log columns (:meth:`Optimizer.log_metrics`) and the
files it writes into a run directory (:meth:`Optimizer.run_files`), and which of those files'
genomes ``replay`` and ``export`` may pick (:meth:`Optimizer.stored_members`). The run, replay and
export call these on every optimizer and name none.

``ask`` and ``tell`` are template methods (as evosax's ``tell``/``_tell``): the base keeps the
bounds (:mod:`.bounds`), the guards every tell needs (a preceding ask, one finite fitness per asked
genome) and the generation count, and a subclass writes only its method: ``_ask``, ``_tell`` and
``_asked_count``.

An optimizer declares its state once (:attr:`Optimizer.STATE`, entries of
:mod:`.declared_state`: which attribute holds each array, scalar, pending ask and generator, under
which key, with which shape); the base writes ``state()`` and ``load_state()`` from them, with the
owner tag and the generation count, and checks shapes and dtypes on load.

An optimizer owns every bit of randomness it uses (DEAP's operators draw from Python's global
``random`` and numpy's global generator: implementations swap their own saved generator state
in around those calls), so ``state()`` after generation g plus ``load_state`` reproduces the rest
of the run exactly.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.core.registry import Registry
from neuro_evolution.core.schema import ConfigBase, config_class, option, register_polymorphic
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.optimizers.bounds import BoundsConfig, GeneBounds, check_start_inside
from neuro_evolution.optimizers.declared_state import Entry, Value, load_entries, save_entries
from neuro_evolution.optimizers.shaping import checked_fitness
from neuro_evolution.optimizers.state_parts import check_owner
from neuro_evolution.support.errors import ConfigError
from neuro_evolution.support.frozen import FrozenABCMeta

if TYPE_CHECKING:
    from neuro_evolution.brains.base import BrainTemplate
    from neuro_evolution.optimizers.members import StoredMembers

OptimizerState = dict[str, "np.ndarray | int | float | str | bool"]
# A run-directory file writer: called after every generation with whether pictures are due.
RunFileWriter = Callable[[bool], None]


@dataclasses.dataclass(frozen=True)
class Evaluations:
    """What one generation's evaluations produced, one row per asked genome, in ask order.

    Only ``fitness`` is always needed; a run fills every field.
    """

    fitness: np.ndarray  # (P,) what to select on (with novelty search: combined with novelty)
    hall_of_fame: HallOfFame | None = None  # already updated with this generation's raw fitness
    measures: np.ndarray | None = None  # (P, M) the measures of measure_configs(), in order
    seeds: np.ndarray | None = None  # (P,) episode base seeds (replay reruns them)
    generation: int = 0  # the generation being told
    scaler: ObservationScaler | None = None  # the generation's frozen observation scaler

    def measure_matrix(self, columns: int) -> np.ndarray:
        """``measures`` as a float64 (P, columns) matrix; ValueError when it is not one."""
        expected = (len(self.fitness), columns)
        if self.measures is None:
            raise ValueError(f"no measures told; expected shape {expected}")
        measures = np.asarray(self.measures, dtype=np.float64)
        if measures.shape != expected:
            raise ValueError(f"measures have shape {measures.shape}; expected {expected}")
        return measures

    def seed_array(self) -> np.ndarray:
        """``seeds`` as int64 (zeros when none were told)."""
        if self.seeds is None:
            return np.zeros(len(self.fitness), dtype=np.int64)
        return np.asarray(self.seeds, dtype=np.int64)


@config_class
class OptimizerConfig(ConfigBase):
    """Base of every optimizer's config section; the section's ``type`` picks the class."""

    bounds: BoundsConfig | None = option(
        None,
        doc="{low, high, method}: every asked genome and the candidate lie in [low, high]"
        " (finite scalars or one value per gene; center_init inside them); method clip, reflect"
        " or resample (docs/guide/optimizers.md). null: unbounded",
    )

    def type_name(self) -> str:
        """The registered name of this config's optimizer."""
        return OPTIMIZERS.name_of(type(self))


class Optimizer(metaclass=FrozenABCMeta):
    """Ask/tell search over float64 genomes; higher fitness is better.

    A subclass implements :meth:`_ask` (the pending genomes, the same ones until the next
    tell), :meth:`_asked_count` and :meth:`_tell` (the method's update); :meth:`_redraw` too if
    it can draw a genome again (``bounds.method: resample``).
    """

    # How the run names the genome of center() in candidate.npz (QD: "best_elite").
    CANDIDATE_SOURCE = "center"
    # The optimizer section's field that names measure_configs() (for error messages).
    MEASURES_FIELD = "descriptors"
    # The owner tag its state is saved with: the registered name.
    NAME: ClassVar[str] = ""
    # What the next ask depends on beyond the generation count, declared once
    # (:mod:`.declared_state`); the base writes state() and load_state() from it.
    STATE: ClassVar[tuple[Entry, ...]] = ()

    def __init__(self, config: Any, genome_size: int, seed: int):
        self.config = config
        self.genome_size = genome_size
        self.generation = 0  # generations told so far (counted by tell)
        self.gene_units: np.ndarray | None = None  # the genome's neurons (use_gene_units)
        bounds = getattr(config, "bounds", None)
        self.bounds = None if bounds is None else GeneBounds(bounds, genome_size)
        if self.bounds is not None and self.bounds.method == "resample" and not self.REDRAWS:
            raise ConfigError(
                "optimizer.bounds.method",
                f"{type(self).__name__} cannot draw a genome again, so it cannot resample;"
                " use clip or reflect",
            )

    # Whether _redraw is implemented (bounds.method "resample" is refused otherwise).
    REDRAWS = False

    def use_gene_units(self, units: np.ndarray | None) -> None:
        """Take the genome's layout by neuron (:meth:`BrainTemplate.gene_units`: a unit number
        per gene, or None where the brain type does not say) as ``gene_units``; a method that
        recombines by neuron overrides this to refuse None in one line."""
        if units is not None and np.shape(units) != (self.genome_size,):
            raise ValueError(
                f"gene_units: one unit per gene expected ({self.genome_size}), got "
                f"shape {np.shape(units)}"
            )
        self.gene_units = units

    def ask(self) -> np.ndarray:
        """The (P, genome_size) genomes to evaluate this generation, inside the bounds; asking
        again before :meth:`tell` returns the same ones."""
        genomes = self._ask()
        return genomes if self.bounds is None else self.bounds.repair(genomes)

    def resampled(self, genomes: np.ndarray) -> np.ndarray:
        """With ``bounds.method: resample``, the freshly drawn ``genomes`` with every row that
        has a gene outside drawn again (:meth:`_redraw`, at most ``max_resamples`` times); as
        they are otherwise. A ``REDRAWS`` optimizer calls it in :meth:`_ask` right after
        drawing, so its pending state holds the accepted rows (rows out of draws are clipped
        by ``ask``)."""
        if self.bounds is None or self.bounds.method != "resample":
            return genomes
        return self.bounds.resample(genomes, self._redraw)

    def within_bounds(self, genomes: np.ndarray) -> np.ndarray:
        """``genomes`` clipped or reflected into the bounds (unchanged without bounds): a
        population method calls this on its offspring, so that what it keeps is what was
        evaluated."""
        return genomes if self.bounds is None else self.bounds.repair(genomes)

    def tell(self, evaluations: Evaluations) -> None:
        """What the genomes of the last ``ask`` scored, in the same order.

        Refused without a pending ask, and unless ``fitness`` holds one number (no NaN) per
        asked genome; then :meth:`_tell` updates the method and the generation count grows.
        """
        count = self._asked_count()
        if count == 0:
            raise RuntimeError("tell() needs a preceding ask(): there are no genomes to score")
        fitness = checked_fitness(evaluations.fitness, count)
        self._tell(fitness, evaluations)
        self.generation += 1

    @abstractmethod
    def _ask(self) -> np.ndarray:
        """The pending (P, genome_size) genomes, drawn on the first call after a tell; the
        same values on every call until the next tell."""

    @abstractmethod
    def _asked_count(self) -> int:
        """Genomes of the pending ask; 0 when there is none (before ask, after tell)."""

    @abstractmethod
    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """The method's update from the checked float64 ``fitness`` (one per asked genome) and
        the rest of ``evaluations``; it ends the pending ask. ``self.generation`` is the
        generation being told (the base adds one afterwards)."""

    def _redraw(self, rows: np.ndarray) -> np.ndarray:
        """Draw the pending genomes of ``rows`` again (the method's own sampling, its own
        generator) and return the whole pending (P, genome_size) array. Only for ``REDRAWS``."""
        raise NotImplementedError(f"{type(self).__name__} does not redraw genomes")

    def center(self) -> np.ndarray | None:
        """The method's own center: its search distribution's mean (QD: the best elite;
        NSGA-II: the front's best in its candidate objective), unbounded as the method holds it.

        ``None`` for optimizers without one (MU_ES): the run then stands behind its hall of
        fame's best. The run stands behind :meth:`center_in_bounds`, never a lucky sample.
        """
        return None

    def center_in_bounds(self) -> np.ndarray | None:
        """The genome the run stands behind (validated, saved as the candidate, replayed and
        exported): :meth:`center` brought into the bounds as an asked genome is (reflected for
        ``reflect``, clipped for ``clip`` and ``resample``), so it is the genome the method's
        own mean would be evaluated as. Without bounds, :meth:`center` unchanged."""
        center = self.center()
        if center is None or self.bounds is None:
            return center
        return self.bounds.repair(center[None, :])[0]

    def center_scaler(self) -> ObservationScaler | None:
        """The observation scaler :meth:`center`'s genome goes with (None: the current one)."""
        return None

    def measure_configs(self) -> tuple[MeasureConfig, ...]:
        """The per-episode measures every evaluation must return, in order (none by default:
        the episode loops then compute none and ``Evaluations.measures`` is (P, 0))."""
        return ()

    def keep_scalers(self, observation_size: int) -> None:
        """Observations are normalized (``observation_size`` wide) and this optimizer names
        measures: keep the scaler each stored genome was evaluated with (an archive or front
        does); nothing by default."""

    def log_metrics(self) -> dict[str, float]:
        """Extra ``log.csv`` columns after this generation (name -> value, the same names every
        generation); none by default."""
        return {}

    def run_files(self, folder: Path, template: BrainTemplate, title: str) -> list[RunFileWriter]:
        """Writers of this optimizer's own files in the run directory ``folder`` (QD:
        ``archive.npz``/``.png``); each is called after every generation with whether pictures
        are due, and once more at the end. None by default."""
        return []

    @classmethod
    def stored_members(cls, config: Any, run_dir: Path) -> StoredMembers | None:
        """The members this optimizer's files in the run directory ``run_dir`` hold for a run of
        its config section ``config`` (QD: the archive's elites, NSGA2: the Pareto front), which
        ``replay`` reruns and ``export`` exports by name (:mod:`.members`); None: it stores
        none (the default)."""
        return None

    @classmethod
    def state_bytes(cls, config: Any, genome_size: int) -> int:
        """Peak bytes this optimizer holds for ``genome_size`` genes (state and per-generation
        temporaries), computed without allocating: start-up refuses a config that cannot fit."""
        raise NotImplementedError(
            f"{cls.__name__} does not declare state_bytes(config, genome_size)"
        )

    def state_entries(self) -> tuple[Entry, ...]:
        """The entries of this optimizer's state: :attr:`STATE`; an optimizer whose entries
        depend on its config (a prefix, an optional schedule) adds them here."""
        return self.STATE

    def _entries(self) -> tuple[Entry, ...]:
        entries = self.state_entries()
        if not entries:
            raise NotImplementedError(
                f"{type(self).__name__} declares no STATE (neuro_evolution.optimizers."
                "declared_state) and does not write state() itself"
            )
        return (Value("generation", int), *entries)

    def state(self) -> OptimizerState:
        """Everything the next ``ask`` depends on, as arrays and scalars (no pickle): the owner
        tag ``optimizer`` (:attr:`NAME`), ``generation`` and the declared entries."""
        return {"optimizer": self.NAME, **save_entries(self, self._entries())}

    def load_state(self, state: OptimizerState) -> None:
        """Continue exactly from a :meth:`state` snapshot (of this optimizer type, config and
        genome size); a state that does not fit is refused and changes nothing declared."""
        check_owner(state, self.NAME)
        load_entries(self, self._entries(), state)
        self._loaded()

    def _loaded(self) -> None:
        """Recompute what derives from the state just loaded (nothing by default)."""


# an optimizer option's old name -> its name now; the old one is read as the new, with a warning
RENAMED_KEYS = {"initial_centroid": "center_init"}


# The optimizers by name: the built-in ES, GAs and the QD optimizers MAP_ELITES and CMA_ME,
# and a user's added with register_optimizer. A built-in
# optimizer's module is imported when its name is first looked up, so listing the names imports
# none of them. ``@register_optimizer("NAME", config=NameConfig)`` on an Optimizer subclass adds
# one; the optimizer contract tests (``tests/optimizers/test_optimizer_contract.py``) run on
# every name.
OPTIMIZERS: Registry[Optimizer] = Registry(
    "optimizer",
    {
        "ARS": "neuro_evolution.optimizers.ars",
        "CEM": "neuro_evolution.optimizers.cem",
        "CMA_ES": "neuro_evolution.optimizers.cma_es",
        "CMA_ME": "neuro_evolution.qd.cma_me",
        "COSYNE": "neuro_evolution.optimizers.cosyne",
        "CR_FM_NES": "neuro_evolution.optimizers.cr_fm_nes",
        "DE": "neuro_evolution.optimizers.de",
        "GA": "neuro_evolution.optimizers.ga",
        "LM_MA_ES": "neuro_evolution.optimizers.lm_ma_es",
        "MAP_ELITES": "neuro_evolution.qd.map_elites",
        "MA_ES": "neuro_evolution.optimizers.ma_es",
        "MU_ES": "neuro_evolution.optimizers.mu_plus_lambda",
        "NSGA2": "neuro_evolution.moo.nsga2",
        "OPENAI_ES": "neuro_evolution.optimizers.openai_es",
        "PGPE": "neuro_evolution.optimizers.pgpe",
        "PSO": "neuro_evolution.optimizers.pso",
        "SEP_CMA_ES": "neuro_evolution.optimizers.sep_cma_es",
        "SNES": "neuro_evolution.optimizers.snes",
        "XNES": "neuro_evolution.optimizers.xnes",
    },
    what="optimizer type",
    known="types",
    renamed=RENAMED_KEYS,
)
register_optimizer = OPTIMIZERS.register


def parse_optimizer_config(data: Any, path: str) -> OptimizerConfig:
    """An ``optimizer`` section as its type's config; a start point (``center_init``, null
    read as 0) outside its ``bounds`` is refused."""
    config = OPTIMIZERS.parse_config(data, path)
    bounds = getattr(config, "bounds", None)
    if bounds is not None and hasattr(config, "center_init"):
        check_start_inside(bounds, float(config.center_init or 0.0), path)
    return config


register_polymorphic(OptimizerConfig, parse_optimizer_config)  # ``optimizer`` picks its class
