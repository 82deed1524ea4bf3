"""A user's own QD optimizer, registered from outside the package (a config's ``imports``).

LEDGER_MAP_ELITES is MAP-Elites with Gaussian variation (x' = x_i + sigma N(0, I), x_i a
uniformly chosen elite) that also keeps a ledger of what each generation did to the archive: how
many cells it filled and how many elites it improved. Through the optimizer interface alone it
writes ``ledger.csv`` into the run directory (:meth:`run_files`), adds a ``new_cells`` column to
``log.csv`` (:meth:`log_metrics`), keeps the ledger in its checkpointed state, and inherits the
archive files and ``replay --elite`` from :class:`QdOptimizer`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neuro_evolution import BrainTemplate, config_class, option, register_optimizer
from neuro_evolution.optimizers.base import RunFileWriter
from neuro_evolution.optimizers.declared_state import Array
from neuro_evolution.qd.archive import IMPROVED, NEW
from neuro_evolution.qd.base import QdOptimizer
from neuro_evolution.qd.descriptors import QdConfig
from neuro_evolution.support.atomic import atomic_write_text

NAME = "LEDGER_MAP_ELITES"
LEDGER_FILE = "ledger.csv"


@config_class
class LedgerMapElitesConfig(QdConfig):
    """Options of ``LEDGER_MAP_ELITES``."""

    batch_size: int = option(12, doc="genomes per generation", ge=1)
    sigma: float = option(0.5, doc="mutation step size", gt=0)
    initial_sigma: float = option(1.0, doc="std. dev. of the first batch (empty archive)", gt=0)


@register_optimizer(NAME, config=LedgerMapElitesConfig)
class LedgerMapElites(QdOptimizer):
    """MAP-Elites with a per-generation ledger of new and improved cells."""

    NAME = NAME
    # checkpointed with the archive: any number of (generation, new, improved) rows
    ALGORITHM_STATE = (Array("ledger", (None, 3), dtype=np.int64),)
    config: LedgerMapElitesConfig

    def __init__(self, config: LedgerMapElitesConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed)
        self.ledger = np.zeros((0, 3), dtype=np.int64)  # rows: generation, new, improved

    def _sample(self) -> np.ndarray:
        config, rng = self.config, self._random
        shape = (config.batch_size, self.genome_size)
        cells = self.archive.elite_cells()
        if len(cells) == 0:
            return config.initial_sigma * rng.standard_normal(shape)
        parents = self.archive.genomes[cells[rng.integers(len(cells), size=config.batch_size)]]
        return parents + config.sigma * rng.standard_normal(shape)

    def _adapt(self, fitness: np.ndarray, status: np.ndarray, value: np.ndarray) -> None:
        row = [self.generation, int(np.sum(status == NEW)), int(np.sum(status == IMPROVED))]
        self.ledger = np.vstack([self.ledger, np.array([row], dtype=np.int64)])

    def log_metrics(self) -> dict[str, float]:
        """The archive's columns and the cells the last generation filled."""
        new_cells = float(self.ledger[-1, 1]) if len(self.ledger) else 0.0
        return {**super().log_metrics(), "new_cells": new_cells}

    def run_files(self, folder: Path, template: BrainTemplate, title: str) -> list[RunFileWriter]:
        """The archive's files and ``ledger.csv``."""
        return [*super().run_files(folder, template, title), self._write_ledger(folder)]

    def _write_ledger(self, folder: Path) -> RunFileWriter:
        def write(plot: bool) -> None:
            lines = ["generation,new_cells,improved_cells"]
            lines += [",".join(str(int(v)) for v in row) for row in self.ledger]
            atomic_write_text(folder / LEDGER_FILE, "\n".join(lines) + "\n")

        return write
