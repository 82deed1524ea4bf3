"""Novelty search: a behaviour measure, distances, an archive, and a fitness-shaping step.

- A behaviour is one recorder (:class:`~neuro_evolution.measures.behavior.Behavior`, made by
  :meth:`NoveltyConfig.behavior`) that every episode loop calls: sampled every
  ``behavioral_interval`` steps from ``behavior_source`` (the action, the observation, or
  ``env.unwrapped.state``), over the evaluation's episodes in order, and capped at
  ``behavioral_max_length`` samples; a fixed-size float vector, zero-padded to the cap, so an
  early ending is part of the behaviour.
- The novelty of an individual is its mean distance to its ``novelty_nearest_k`` nearest
  neighbours among the archive and the rest of the current population.
- The archive keeps behaviours (never individuals to re-evaluate): each generation the
  ``recorded_behaviors_per_generation`` most novel behaviours are added; beyond
  ``max_recorded_behaviors`` the oldest are dropped.
- Novelty is a fitness-shaping step (:class:`NoveltyShaping`, a
  :class:`~neuro_evolution.optimizers.shaping.ShapingStep`): the fitness the optimizer is told
  combines ranks, ``(1 - w) * rank(fitness) + w * rank(novelty)``, both ranks scaled to [0, 1]
  (ties share their mean rank) with ``w = novelty_weight``. The hall of fame and the log keep
  the raw fitness.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from neuro_evolution.core.schema import ConfigBase, config_class, option
from neuro_evolution.measures.behavior import Behavior
from neuro_evolution.optimizers.shaping import ShapingStep, unit_ranks


@config_class
class NoveltyConfig(ConfigBase):
    """Novelty search options (the section is optional; absent: pure fitness)."""

    novelty_weight: float = option(
        0.5, doc="w in (1-w)*rank(fitness) + w*rank(novelty)", ge=0.0, le=1.0
    )
    behavior_source: Literal["action", "observation", "state"] = option(
        "observation", doc="what is recorded: the action, the observation, or env.unwrapped.state"
    )
    behavioral_interval: int = option(1, doc="record every N env steps", ge=1)
    behavioral_max_length: int = option(100, doc="at most this many samples per behaviour", ge=1)
    distance: Literal["euclidean", "ncd"] = option(
        "euclidean", doc="euclidean, or ncd (normalized compression distance, zlib)"
    )
    novelty_nearest_k: int = option(10, doc="k nearest neighbours for the novelty score", ge=1)
    max_recorded_behaviors: int = option(500, doc="archive size limit (oldest dropped)", ge=1)
    recorded_behaviors_per_generation: int = option(
        5, doc="most novel behaviours added to the archive each generation", ge=0
    )

    def behavior(self) -> Behavior:
        """The behaviour recorder every episode loop calls."""
        return Behavior(
            source=self.behavior_source,
            interval=self.behavioral_interval,
            max_length=self.behavioral_max_length,
        )


# Elements of one block of row differences (64 MB of float64): long behaviours (MinAtar
# observations, 400 values a sample) against a full archive would otherwise need gigabytes.
DIFFERENCE_BLOCK = 2**23


def euclidean_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) euclidean distances between rows, computed in blocks of rows of at most
    :data:`DIFFERENCE_BLOCK` differences (each distance is the same sum whatever the blocks)."""
    width = max(a.shape[1], 1)
    columns = max(1, min(len(b), DIFFERENCE_BLOCK // width))
    rows = max(1, DIFFERENCE_BLOCK // (width * columns))
    result = np.empty((len(a), len(b)))
    for i in range(0, len(a), rows):
        for j in range(0, len(b), columns):
            difference = a[i : i + rows, None, :] - b[None, j : j + columns, :]
            result[i : i + rows, j : j + columns] = np.sqrt(
                np.einsum("ijk,ijk->ij", difference, difference)
            )
    return result


def _compressed_size(data: bytes) -> int:
    return len(zlib.compress(data, 9))


def ncd_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Normalized compression distance between rows (float32 bytes, zlib level 9)."""
    a_bytes = [row.astype(np.float32).tobytes() for row in a]
    b_bytes = [row.astype(np.float32).tobytes() for row in b]
    a_sizes = [_compressed_size(x) for x in a_bytes]
    b_sizes = [_compressed_size(y) for y in b_bytes]
    result = np.empty((len(a), len(b)))
    for i, (x, cx) in enumerate(zip(a_bytes, a_sizes)):
        for j, (y, cy) in enumerate(zip(b_bytes, b_sizes)):
            result[i, j] = (_compressed_size(x + y) - min(cx, cy)) / max(cx, cy)
    return result


class NoveltyArchive:
    """The archive of behaviours and the novelty computation of one run."""

    def __init__(self, config: NoveltyConfig):
        self.config = config
        self.behaviors = np.zeros((0, 0))

    def distances(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Pairwise distances with the configured metric."""
        if self.config.distance == "ncd":
            return ncd_distances(a, b)
        return euclidean_distances(a, b)

    def novelty(self, population: np.ndarray) -> np.ndarray:
        """Mean distance of each behaviour to its k nearest among archive + the others."""
        count = len(population)
        within = self.distances(population, population)
        np.fill_diagonal(within, np.inf)  # an individual is not its own neighbour
        if len(self.behaviors):
            within = np.concatenate([within, self.distances(population, self.behaviors)], axis=1)
        neighbours = min(self.config.novelty_nearest_k, within.shape[1] - 1 if count else 0)
        neighbours = max(neighbours, 1)
        nearest = np.sort(within, axis=1)[:, :neighbours]
        nearest = np.where(np.isinf(nearest), 0.0, nearest)
        return nearest.mean(axis=1)

    def update(self, population: np.ndarray, novelty: np.ndarray) -> None:
        """Add the generation's most novel behaviours; drop the oldest beyond the limit."""
        take = min(self.config.recorded_behaviors_per_generation, len(population))
        if take == 0:
            return
        chosen = population[np.argsort(-novelty, kind="stable")[:take]]
        stacked = chosen if not len(self.behaviors) else np.concatenate([self.behaviors, chosen])
        self.behaviors = stacked[-self.config.max_recorded_behaviors :]

    def selection_fitness(self, fitness: np.ndarray, behaviors: np.ndarray) -> np.ndarray:
        """Combine ranks of fitness and novelty, then update the archive."""
        novelty = self.novelty(behaviors)
        weight = self.config.novelty_weight
        combined = (1.0 - weight) * unit_ranks(fitness) + weight * unit_ranks(novelty)
        self.update(behaviors, novelty)
        return combined

    def state(self) -> dict[str, np.ndarray]:
        """The archive, for checkpoints."""
        return {"behaviors": self.behaviors}

    def load_state(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state` returned."""
        self.behaviors = np.array(state["behaviors"], dtype=np.float64)


class NoveltyShaping(ShapingStep):
    """Novelty search as the fitness-shaping step between the evaluations and the optimizer: the
    shaped fitness combines fitness and novelty ranks (:meth:`NoveltyArchive.selection_fitness`)
    and updates the archive; its state is the archive's (checkpoints)."""

    def __init__(self, config: NoveltyConfig):
        self.archive = NoveltyArchive(config)

    def shaped(self, fitness: np.ndarray, results: Sequence[Any]) -> np.ndarray:
        behaviors = []
        for result in results:
            if result.behavior is None:
                raise RuntimeError("novelty search is on, but an evaluation recorded no behaviour")
            behaviors.append(result.behavior)
        return self.archive.selection_fitness(fitness, np.stack(behaviors))

    def state(self) -> dict[str, np.ndarray]:
        return self.archive.state()

    def load_state(self, state: dict[str, np.ndarray]) -> None:
        self.archive.load_state(state)
