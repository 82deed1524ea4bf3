"""Shared bookkeeping of the population methods (GA, DE, PSO): a pending population made row by
row, kept inside the bounds, and saved with the method's own state.

A subclass writes :meth:`PopulationSearch._draw` (the candidates of some rows of the next ask,
from the method's own generator) and ``_tell``; the base asks all rows, draws the rows a
``resample`` bound rejects again through the same :meth:`PopulationSearch._draw`, and keeps the
repaired genomes (:meth:`Optimizer.within_bounds`): what the method keeps is what was evaluated.

The genome such a run stands behind (:meth:`PopulationSearch.center`) is the best genome of the
latest generation told, re-chosen every generation, as the double-pole literature tests the best
network of each generation (Gomez, Schmidhuber & Miikkulainen 2008): the best fitness ever seen
would stick to a genome that was lucky once on a capped return.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from neuro_evolution.core.schema import ConfigError, join, option
from neuro_evolution.optimizers.base import Optimizer
from neuro_evolution.optimizers.declared_state import Array, Entry, Generator, Pending
from neuro_evolution.optimizers.rng import owned_generator
from neuro_evolution.support.seeds import GENERATOR_PURPOSE


def initial_range_option() -> Any:
    """``initial_gene_range``: the box the first population is drawn uniformly from."""
    return option(
        (-1.0, 1.0), doc="[low, high]: every gene of the first population is uniform in it"
    )


def check_initial_range(value: tuple[float, float], path: str) -> None:
    """Refuse an initial range that is not [low, high] with low < high."""
    low, high = value
    if not low < high:
        raise ConfigError(
            join(path, "initial_gene_range"),
            f"must be [low, high] with low < high, got {[low, high]}",
        )


def _no_generation_best(optimizer: Any) -> np.ndarray:
    return np.zeros((0, optimizer.genome_size))


# The (0 or P, G) shape of a method's population array: no rows before the first tell.
POPULATION_ROWS = ((0, "population_size"), "genome_size")
# The (0 or 1, G) best genome of the latest generation told; a state saved before the candidate
# was kept has none: the run then stands behind its hall of fame until the next tell.
GENERATION_BEST = Array("_generation_best", ((0, 1), "genome_size"), missing=_no_generation_best)


class PopulationSearch(Optimizer):
    """Ask/tell over an explicit population of ``population_size`` genomes.

    State: the pending ask's genomes, the generator, the latest generation's best, and the
    method's own entries (its population, fitness, bests) after :attr:`STATE`'s.
    """

    REDRAWS = True
    CANDIDATE_SOURCE = "generation_best"
    STATE: ClassVar[tuple[Entry, ...]] = (
        Pending((("_pending", "asked_genomes"),)),
        Generator("_rng"),
        GENERATION_BEST,
    )

    def __init__(self, config: Any, genome_size: int, seed: int, population_size: int):
        super().__init__(config, genome_size, seed)
        if genome_size < 1:
            raise ValueError(f"genome_size: must be >= 1, got {genome_size}")
        self.population_size = population_size
        self._rng = owned_generator(seed, GENERATOR_PURPOSE)
        self._pending: np.ndarray | None = None
        self._generation_best = np.zeros((0, genome_size))

    @abstractmethod
    def _draw(self, rows: np.ndarray) -> np.ndarray:
        """The (len(rows), G) candidates of ``rows`` of the next ask, freshly drawn."""

    def uniform_initial(self, count: int) -> np.ndarray:
        """(count, G) genes uniform in the config's ``initial_gene_range``."""
        low, high = self.config.initial_gene_range
        return self._rng.uniform(low, high, (count, self.genome_size))

    def _ask(self) -> np.ndarray:
        """All ``population_size`` candidates, drawn once per generation, inside the bounds."""
        if self._pending is None:
            self._pending = self._draw(np.arange(self.population_size))
            self._pending = self.within_bounds(self.resampled(self._pending))
        return self._pending.copy()

    def _redraw(self, rows: np.ndarray) -> np.ndarray:
        """Make the candidates of ``rows`` again (``bounds.method: resample``)."""
        assert self._pending is not None
        self._pending[rows] = self._draw(rows)
        return self._pending

    def _asked_count(self) -> int:
        return 0 if self._pending is None else len(self._pending)

    def take_pending(self, fitness: np.ndarray) -> np.ndarray:
        """The asked genomes, ending the pending ask (for ``_tell``); the first of the highest
        ``fitness`` becomes :meth:`center`."""
        assert self._pending is not None
        pending, self._pending = self._pending, None
        self._generation_best = pending[int(np.argmax(fitness))][None].copy()
        return pending

    def center(self) -> np.ndarray | None:
        """The best genome of the latest generation told (None before the first tell)."""
        return self._generation_best[0].copy() if len(self._generation_best) else None
