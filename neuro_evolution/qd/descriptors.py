"""The config of a QD optimizer: behaviour descriptors (measures with bounds and bins) and archive.

Descriptors live inside the optimizer section (``optimizer.descriptors``), not in a top-level
section: they mean nothing to an optimizer that keeps no archive, and a run whose optimizer is
not QD keeps its resolved config (and so its checkpoints and config hash) unchanged.
"""

from __future__ import annotations

from typing import Literal

from neuro_evolution.core.schema import ConfigBase, ConfigError, config_class, join, option
from neuro_evolution.measures.base import MeasureConfig, check_measures
from neuro_evolution.optimizers.base import OptimizerConfig


@config_class
class DescriptorConfig(MeasureConfig):
    """A behaviour descriptor: a per-episode measure, its bounds and (grid) its bins."""

    low: float = option(doc="lower bound of the descriptor (values below fall in the first bin)")
    high: float = option(doc="upper bound (values above fall in the last bin)")
    bins: int = option(10, doc="grid archive: cells along this descriptor", ge=1)

    def validate(self, path: str) -> None:
        MeasureConfig.validate(self, path)  # (slotted dataclass: no zero-argument super)
        if not self.low < self.high:
            raise ConfigError(
                join(path, "high"), f"must be > low ({self.low:g}), got {self.high:g}"
            )


@config_class
class ArchiveConfig(ConfigBase):
    """The archive of elites: a grid (descriptor bins) or a CVT (Voronoi cells)."""

    kind: Literal["grid", "cvt"] = option("grid", doc="grid: bins per descriptor; cvt: Voronoi")
    cells: int = option(1000, doc="cvt: number of cells (centroids)", ge=1)
    cvt_samples: int = option(50_000, doc="cvt: uniform samples that k-means clusters", ge=1)
    cvt_iterations: int = option(20, doc="cvt: Lloyd iterations of k-means", ge=1)
    cvt_seed: int = option(0, doc="cvt: seed of the samples (the centroids are saved)", ge=0)

    def validate(self, path: str) -> None:
        if self.kind == "cvt" and self.cvt_samples < self.cells:
            raise ConfigError(
                join(path, "cvt_samples"),
                f"must be >= cells ({self.cells}), got {self.cvt_samples}",
            )


@config_class
class QdConfig(OptimizerConfig):
    """Options every QD optimizer shares: its descriptors, archive and QD score offset."""

    descriptors: tuple[DescriptorConfig, ...] = option(
        doc="behaviour descriptors: [{name, source, index, reduce, low, high, bins, ...}]"
    )
    archive: ArchiveConfig = option(ArchiveConfig(), doc="grid or CVT archive of elites")
    qd_score_offset: float = option(
        0.0,
        doc="QD score = sum over elites of (fitness - offset); set it below every fitness",
    )
    same_seeds_every_generation: bool = option(
        False,
        doc="every generation trains on generation 0's episode seeds: elites of all generations "
        "face the same episodes (one fixed scenario, as pyribs' lunar lander tutorial); "
        "validation keeps its held-out seeds",
    )

    def validate(self, path: str) -> None:
        where = join(path, "descriptors")
        if not self.descriptors:
            raise ConfigError(where, "needs at least one descriptor")
        check_measures(self.descriptors, where)
        if self.archive.kind == "grid":
            cells = 1
            for descriptor in self.descriptors:
                cells *= descriptor.bins
            if cells > 10_000_000:
                raise ConfigError(where, f"a grid of {cells:,} cells is too large (max 10M)")
