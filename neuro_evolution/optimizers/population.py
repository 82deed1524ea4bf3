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
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from neuro_evolution.core.schema import ConfigError, join, option
from neuro_evolution.optimizers.base import Optimizer, OptimizerState
from neuro_evolution.optimizers.rng import (
    generator_load_state,
    generator_to_state,
    owned_generator,
    state_array,
    state_scalar,
)
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


class PopulationSearch(Optimizer):
    """Ask/tell over an explicit population of ``population_size`` genomes.

    State: the pending ask's genomes, the generator, and what :meth:`_extra_state` adds (the
    method's population, fitness, bests).
    """

    NAME: ClassVar[str]
    REDRAWS = True
    CANDIDATE_SOURCE = "generation_best"

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

    @abstractmethod
    def _extra_state(self) -> dict[str, Any]:
        """The method's state beyond the pending ask and the generator."""

    @abstractmethod
    def _load_extra_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`_extra_state` returned."""

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

    def state(self) -> OptimizerState:
        """The pending ask, the generator and the method's state."""
        return {
            "optimizer": self.NAME,
            "generation": self.generation,
            "has_asked": self._pending is not None,
            "asked_genomes": (
                self._pending.copy()
                if self._pending is not None
                else np.zeros((0, self.genome_size))
            ),
            **generator_to_state(self._rng, "generator"),
            "generation_best": self._generation_best.copy(),
            **self._extra_state(),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`state` of an optimizer with the same config and genome size."""
        if str(state_scalar(state, "optimizer")) != self.NAME:
            raise ValueError(
                f"optimizer state is for {state_scalar(state, 'optimizer')!r}, not {self.NAME}"
            )
        has_asked = bool(state_scalar(state, "has_asked"))
        rows = self.population_size if has_asked else 0
        pending = state_array(state, "asked_genomes", np.float64, (rows, self.genome_size))
        generator_load_state(self._rng, state, "generator")
        self._generation_best = generation_best(state, self.genome_size)
        self._load_extra_state(state)
        self.generation = int(state_scalar(state, "generation"))
        self._pending = pending if has_asked else None

    def population_array(self, state: Mapping[str, Any], key: str) -> np.ndarray:
        """The (0 or P, G) array under ``key`` (0 rows before the first tell)."""
        value = state_array(state, key, np.float64, (None, self.genome_size))
        if len(value) not in (0, self.population_size):
            raise ValueError(
                f"optimizer state {key!r} has {len(value)} rows; the config's population_size"
                f" is {self.population_size}"
            )
        return value


def generation_best(state: Mapping[str, Any], genome_size: int) -> np.ndarray:
    """The (0 or 1, G) ``generation_best`` of ``state`` (none in a state saved before the
    candidate was kept: the run then stands behind its hall of fame until the next tell)."""
    if "generation_best" not in state:
        return np.zeros((0, genome_size))
    value = state_array(state, "generation_best", np.float64, (None, genome_size))
    if len(value) > 1:
        raise ValueError(f"optimizer state 'generation_best' has {len(value)} rows, not 0 or 1")
    return value
