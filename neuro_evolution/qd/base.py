"""What MAP_ELITES and CMA_ME share: the archive, the measures they ask for, metrics and state."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.optimizers.base import Evaluations, Optimizer, RunFileWriter
from neuro_evolution.optimizers.declared_state import Entry, Generator, Part, Pending
from neuro_evolution.optimizers.members import StoredMembers
from neuro_evolution.optimizers.rng import owned_generator
from neuro_evolution.qd.archive import Archive
from neuro_evolution.qd.bounds import bounds_missed
from neuro_evolution.qd.descriptors import QdConfig
from neuro_evolution.qd.files import ArchiveMembers, ArchiveWriter
from neuro_evolution.support.console import warning
from neuro_evolution.support.seeds import GENERATOR_PURPOSE


class QdOptimizer(Optimizer):
    """A quality-diversity optimizer: it keeps an :class:`Archive` of elites by descriptor.

    The genome the run stands behind (``center``) is the best elite; the run validates it.
    The archive's observation scalers are on when :meth:`keep_scalers` was called before the
    first tell (the experiment does so when observations are normalized).
    """

    CANDIDATE_SOURCE = "best_elite"
    # the algorithm's state entries beyond the archive and the pending ask
    ALGORITHM_STATE: ClassVar[tuple[Entry, ...]] = ()
    config: QdConfig

    def __init__(self, config: QdConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        self.seed = seed
        self.archive = Archive(config.archive, config.descriptors, genome_size)
        self._random = owned_generator(seed, GENERATOR_PURPOSE)
        self._asked: np.ndarray | None = None
        self._bounds_warned: set[int] = set()  # descriptors warned about (qd/bounds.py)

    def keep_scalers(self, observation_size: int) -> None:
        """Keep each elite's observation scaler (``observation_size`` values wide)."""
        self.archive = Archive(
            self.config.archive,
            self.config.descriptors,
            self.genome_size,
            observation_size,
            centroids=self.archive.centroids if self.config.archive.kind == "cvt" else None,
        )

    @classmethod
    def state_bytes(cls, config: Any, genome_size: int) -> int:
        """The dense archive (cells x genome) plus a few batches of genomes."""
        cells = config.archive.cells if config.archive.kind == "cvt" else 1
        if config.archive.kind == "grid":
            for descriptor in config.descriptors:
                cells *= descriptor.bins
        return 8 * cells * (genome_size + len(config.descriptors) + 8) + cls._batch_bytes(
            config, genome_size
        )

    @classmethod
    def _batch_bytes(cls, config: Any, genome_size: int) -> int:
        return 0

    def measure_configs(self) -> tuple[MeasureConfig, ...]:
        """The descriptors, in order: the archive is keyed by them."""
        return tuple(self.config.descriptors)

    def _ask(self) -> np.ndarray:
        """This generation's genomes, drawn once per generation."""
        if self._asked is None:
            self._asked = self.within_bounds(self._sample())
        return self._asked.copy()

    def _asked_count(self) -> int:
        return 0 if self._asked is None else len(self._asked)

    def _sample(self) -> np.ndarray:
        raise NotImplementedError

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """Insert the asked genomes in submission order (with their measures, seeds, generation
        and scaler), then let the algorithm adapt."""
        assert self._asked is not None
        measures = evaluations.measure_matrix(len(self.config.descriptors))
        status, value = self.archive.add(
            self._asked,
            fitness,
            measures,
            evaluations.generation,
            evaluations.seed_array(),
            evaluations.scaler,
        )
        self._adapt(fitness, status, value)
        self._asked = None
        for index, message in bounds_missed(self.config.descriptors, measures, self.generation):
            if index not in self._bounds_warned:  # once per descriptor and run
                self._bounds_warned.add(index)
                warning(message)

    def _adapt(self, fitness: np.ndarray, status: np.ndarray, value: np.ndarray) -> None:
        """What the algorithm learns from one generation's insertion results."""

    def center(self) -> np.ndarray | None:
        """The best elite's genome (None before the first tell)."""
        cell = self.archive.best_cell()
        return None if cell is None else self.archive.genomes[cell].copy()

    def center_scaler(self) -> ObservationScaler | None:
        """The observation scaler the best elite was evaluated with."""
        cell = self.archive.best_cell()
        return None if cell is None else self.archive.scaler(cell)

    def log_metrics(self) -> dict[str, float]:
        """coverage, qd_score (offset ``qd_score_offset``) and qd_best of the archive."""
        return self.archive.metrics(self.config.qd_score_offset)

    def run_files(self, folder: Path, template: BrainTemplate, title: str) -> list[RunFileWriter]:
        """``archive.npz`` (every elite) and ``archive.png`` (its picture)."""
        return [ArchiveWriter(folder, lambda: self.archive, template, title)]

    @classmethod
    def stored_members(cls, config: QdConfig, run_dir: Path) -> StoredMembers | None:
        """The archive's elites (``archive.npz``): ``--elite K`` or ``--cell I,J``."""
        return ArchiveMembers(run_dir, tuple(config.descriptors))

    # --- state ---------------------------------------------------------------------------------
    def state_entries(self) -> tuple[Entry, ...]:
        """The pending ask, the archive, the generator and the algorithm's own entries."""
        return (
            Pending((("_asked", "asked"),), count=None),
            Part("archive", "archive_"),
            Generator("_random"),
            *self.ALGORITHM_STATE,
            Part("algorithm_hooks", ""),
        )

    @property
    def algorithm_hooks(self) -> _AlgorithmHooks:
        """:meth:`_algorithm_state` and :meth:`_load_algorithm_state` as one state part."""
        return _AlgorithmHooks(self)

    def _algorithm_state(self) -> dict[str, Any]:
        """State that no declared entry describes, written by the algorithm itself (none)."""
        return {}

    def _load_algorithm_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`_algorithm_state` wrote."""


class _AlgorithmHooks:
    """A QD optimizer's own ``_algorithm_state`` hooks, saved and loaded as a state part."""

    def __init__(self, owner: QdOptimizer):
        self.owner = owner

    def to_state(self, prefix: str) -> dict[str, Any]:
        return self.owner._algorithm_state()

    def load_state(self, state: Mapping[str, Any], prefix: str) -> None:
        self.owner._load_algorithm_state(state)
