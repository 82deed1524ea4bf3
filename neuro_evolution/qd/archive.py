"""The archive of elites: one genome per behaviour cell, the best raw fitness that reached it.

- Grid: descriptor d's range [low, high) is cut into ``bins`` equal bins; a value outside falls in
  the first or last bin (pyribs' GridArchive does the same); cell = row-major index of the bins.
- CVT (Vassiliades et al. 2017): ``cells`` centroids from k-means (Lloyd, ``cvt_iterations``) on
  ``cvt_samples`` uniform samples of the descriptor box drawn from ``cvt_rng(cvt_seed)``; cell =
  the nearest centroid (lowest index on ties). The centroids are saved with the archive and
  loaded, never recomputed, by resume and replay.
- Insertion runs in submission order, one solution at a time: a solution enters an empty cell
  (status NEW, value f) or replaces a worse elite (status IMPROVED, value f - f_old); otherwise
  status NOT_ADDED, value f - f_old. Results come back in submission order from every handler,
  so the archive is the same whichever handler or worker count ran the generation.
- A solution whose fitness or descriptors are not finite is never added.

Every elite keeps its genome, fitness, descriptors, the generation and episode base seed of its
evaluation (so replay can rerun exactly that evaluation) and, with observation normalization,
the frozen observation scaler it was evaluated with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.qd.descriptors import ArchiveConfig, DescriptorConfig
from neuro_evolution.support.seeds import cvt_rng

NOT_ADDED, IMPROVED, NEW = 0, 1, 2
_CHUNK = 4096  # samples per block of the k-means distance matrix


def nearest(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Index of the nearest centroid of every point (lowest index on ties), block by block."""
    result = np.empty(len(points), dtype=np.int64)
    squared = np.einsum("ij,ij->i", centroids, centroids)
    for start in range(0, len(points), _CHUNK):
        block = points[start : start + _CHUNK]
        distances = squared[None, :] - 2.0 * block @ centroids.T
        result[start : start + _CHUNK] = np.argmin(distances, axis=1)
    return result


def cvt_centroids(config: ArchiveConfig, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """(cells, d) centroids: k-means on seeded uniform samples of the box [low, high]."""
    rng = cvt_rng(config.cvt_seed)
    samples = rng.uniform(low, high, size=(config.cvt_samples, len(low)))
    centroids = samples[: config.cells].copy()
    for _ in range(config.cvt_iterations):
        labels = nearest(samples, centroids)
        counts = np.bincount(labels, minlength=config.cells)
        sums = np.zeros_like(centroids)
        np.add.at(sums, labels, samples)
        filled = counts > 0
        centroids[filled] = sums[filled] / counts[filled, None]
    return centroids


class Archive:
    """Elites per cell, dense arrays over all cells (``occupied`` says which hold one)."""

    def __init__(
        self,
        config: ArchiveConfig,
        descriptors: Sequence[DescriptorConfig],
        genome_size: int,
        observation_size: int = 0,
        centroids: np.ndarray | None = None,
    ):
        self.config = config
        self.names = tuple(d.name for d in descriptors)
        self.low = np.array([d.low for d in descriptors], dtype=np.float64)
        self.high = np.array([d.high for d in descriptors], dtype=np.float64)
        self.bins = np.array([d.bins for d in descriptors], dtype=np.int64)
        self.genome_size = genome_size
        self.observation_size = observation_size
        if config.kind == "cvt":
            self.centroids = (
                cvt_centroids(config, self.low, self.high) if centroids is None else centroids
            )
            self.cells = len(self.centroids)
            self.shape: tuple[int, ...] = (self.cells,)
        else:
            self.centroids = np.zeros((0, len(self.names)))
            self.shape = tuple(int(b) for b in self.bins)
            self.cells = int(np.prod(self.bins))
        cells, width = self.cells, len(self.names)
        self.occupied = np.zeros(cells, dtype=bool)
        self.fitness = np.full(cells, -np.inf)
        self.measures = np.zeros((cells, width))
        self.genomes = np.zeros((cells, genome_size))
        self.generations = np.zeros(cells, dtype=np.int64)
        self.seeds = np.zeros(cells, dtype=np.int64)
        self.observation_mean = np.zeros((cells, observation_size))
        self.observation_scale = np.zeros((cells, observation_size))
        self.observation_clip = np.zeros(cells)
        self.changes = 0  # insertions so far (a writer skips an unchanged archive)

    # --- cells ---------------------------------------------------------------------------------
    def index_of(self, measures: np.ndarray) -> np.ndarray:
        """The cell of every row of ``measures`` (P, d)."""
        measures = np.asarray(measures, dtype=np.float64)
        if self.config.kind == "cvt":
            return nearest(measures, self.centroids)
        scaled = (measures - self.low) / (self.high - self.low) * self.bins
        bins = np.clip(np.floor(np.nan_to_num(scaled)).astype(np.int64), 0, self.bins - 1)
        return np.ravel_multi_index(tuple(bins.T), self.shape).astype(np.int64)

    def cell_of_grid(self, position: Sequence[int]) -> int:
        """The cell index of grid position ``(i, j, ...)`` (a one-line ValueError when off)."""
        if self.config.kind != "grid":
            raise ValueError("a CVT archive has no grid positions: name the elite by --elite K")
        if len(position) != len(self.shape) or any(
            not 0 <= p < s for p, s in zip(position, self.shape)
        ):
            raise ValueError(f"cell {tuple(position)} is not in the grid {self.shape}")
        return int(np.ravel_multi_index(tuple(position), self.shape))

    # --- insertion -----------------------------------------------------------------------------
    def add(
        self,
        genomes: np.ndarray,
        fitness: np.ndarray,
        measures: np.ndarray,
        generation: int,
        seeds: np.ndarray,
        scaler: ObservationScaler | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Offer solutions in submission order; (status, value) per solution (module doc)."""
        count = len(fitness)
        measures = np.asarray(measures, dtype=np.float64).reshape(count, len(self.names))
        status = np.zeros(count, dtype=np.int64)
        value = np.zeros(count)
        if self.observation_size and scaler is None:
            raise ValueError("this archive keeps observation scalers: pass the scaler")
        cells = self.index_of(measures)
        for i in range(count):
            f = float(fitness[i])
            if not (np.isfinite(f) and np.all(np.isfinite(measures[i]))):
                value[i] = -np.inf
                continue
            cell = int(cells[i])
            if not self.occupied[cell]:
                status[i], value[i] = NEW, f
            else:
                value[i] = f - self.fitness[cell]
                if f <= self.fitness[cell]:
                    continue
                status[i] = IMPROVED
            self.occupied[cell] = True
            self.fitness[cell] = f
            self.measures[cell] = measures[i]
            self.genomes[cell] = genomes[i]
            self.generations[cell] = generation
            self.seeds[cell] = int(seeds[i])
            if scaler is not None and self.observation_size:
                self.observation_mean[cell] = scaler.mean
                self.observation_scale[cell] = scaler.scale
                self.observation_clip[cell] = scaler.clip
            self.changes += 1
        return status, value

    # --- reading -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.occupied.sum())

    def elite_cells(self) -> np.ndarray:
        """Cells holding an elite, ascending: elite K of ``--elite K`` is ``elite_cells()[K]``."""
        return np.flatnonzero(self.occupied)

    def best_cell(self) -> int | None:
        """The cell of the highest fitness (lowest cell on ties); None when empty."""
        if not self.occupied.any():
            return None
        return int(np.argmax(np.where(self.occupied, self.fitness, -np.inf)))

    def scaler(self, cell: int) -> ObservationScaler | None:
        """The observation scaler the elite of ``cell`` was evaluated with (None: off)."""
        if not self.observation_size:
            return None
        return ObservationScaler(
            mean=self.observation_mean[cell].copy(),
            scale=self.observation_scale[cell].copy(),
            clip=float(self.observation_clip[cell]),
        )

    def metrics(self, offset: float) -> dict[str, float]:
        """coverage (filled fraction), qd_score (sum of fitness - offset), qd_best (max)."""
        filled = self.fitness[self.occupied]
        return {
            "coverage": float(len(filled) / self.cells),
            "qd_score": float(np.sum(filled - offset)) if len(filled) else 0.0,
            "qd_best": float(filled.max()) if len(filled) else float("nan"),
        }

    # --- state ---------------------------------------------------------------------------------
    def to_state(self, prefix: str = "archive_") -> dict[str, Any]:
        """The elites only (cells ascending), the centroids and the insertion count."""
        cells = self.elite_cells()
        state: dict[str, Any] = {
            f"{prefix}cells": cells.astype(np.int64),
            f"{prefix}fitness": self.fitness[cells],
            f"{prefix}measures": self.measures[cells],
            f"{prefix}genomes": self.genomes[cells],
            f"{prefix}generations": self.generations[cells],
            f"{prefix}seeds": self.seeds[cells],
            f"{prefix}centroids": self.centroids.copy(),
            f"{prefix}changes": self.changes,
        }
        if self.observation_size:
            state[f"{prefix}observation_mean"] = self.observation_mean[cells]
            state[f"{prefix}observation_scale"] = self.observation_scale[cells]
            state[f"{prefix}observation_clip"] = self.observation_clip[cells]
        return state

    def load_state(self, state: Mapping[str, Any], prefix: str = "archive_") -> None:
        """Restore :meth:`to_state` into an archive of the same config (centroids included)."""
        centroids = np.array(state[f"{prefix}centroids"], dtype=np.float64)
        if self.config.kind == "cvt":
            if centroids.shape != self.centroids.shape:
                raise ValueError(
                    f"archive state has {centroids.shape} centroids, this archive "
                    f"{self.centroids.shape}"
                )
            self.centroids = centroids
        cells = np.array(state[f"{prefix}cells"], dtype=np.int64)
        if cells.size and (cells.min() < 0 or cells.max() >= self.cells):
            raise ValueError(f"archive state names cells outside 0..{self.cells - 1}")
        has_scalers = f"{prefix}observation_mean" in state
        if has_scalers != bool(self.observation_size):
            raise ValueError("archive state and this run disagree on observation normalization")
        self.occupied[:] = False
        self.fitness[:] = -np.inf
        self.occupied[cells] = True
        self.fitness[cells] = np.asarray(state[f"{prefix}fitness"], dtype=np.float64)
        self.measures[cells] = np.asarray(state[f"{prefix}measures"], dtype=np.float64)
        self.genomes[cells] = np.asarray(state[f"{prefix}genomes"], dtype=np.float64)
        self.generations[cells] = np.asarray(state[f"{prefix}generations"], dtype=np.int64)
        self.seeds[cells] = np.asarray(state[f"{prefix}seeds"], dtype=np.int64)
        if has_scalers:
            self.observation_mean[cells] = np.asarray(state[f"{prefix}observation_mean"])
            self.observation_scale[cells] = np.asarray(state[f"{prefix}observation_scale"])
            self.observation_clip[cells] = np.asarray(state[f"{prefix}observation_clip"])
        self.changes = int(np.asarray(state[f"{prefix}changes"]).item())
