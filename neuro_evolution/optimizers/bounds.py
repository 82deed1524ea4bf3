"""Box bounds on the genes an optimizer asks: ``optimizer.bounds`` {low, high, method}.

Every asked genome lies in [low, high] (finite scalars, or one value per gene), and so does the
genome the run stands behind (validated, saved as the candidate, replayed, exported): the
method's center brought in as an asked genome would be (``Optimizer.center_in_bounds``). The
method itself keeps its center where its update puts it. A start point ``center_init`` outside
the box is refused when the config is read. How a genome that the method drew outside is
brought in:

- ``clip``: each gene outside is set to the bound it crossed. Genes the distribution puts past a
  bound all land on it, so the bound gets a point mass and the search can sit on it.
- ``reflect``: each gene outside is mirrored back at the bound it crossed (folded as often as it
  takes), so x = high + d becomes high - d. No point mass; near a bound the evaluated density
  doubles back, so a gene whose sample runs past keeps moving inside.
- ``resample``: the rows with a gene outside are drawn again from the method's own sampling, up
  to ``max_resamples`` times, and any gene still outside is then clipped. The evaluated genomes
  follow the method's distribution truncated to the box; a distribution that sits mostly outside
  costs draws, and its truncation pulls the learned mean inside. A center cannot be redrawn, so
  the genome the run stands behind is the center clipped.

A distribution-based method (CMA-ES, SNES, xNES, ...) learns from the samples it drew, so with
clip and reflect it optimizes f(repair(x)) (as pycma's ``BoundTransform`` does); a population
method (GA, DE, PSO, CoSyNE) keeps the repaired genomes, the ones that were evaluated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from neuro_evolution.core.schema import ConfigBase, ConfigError, config_class, join, option

BoundsMethod = Literal["clip", "reflect", "resample"]


@config_class
class BoundsConfig(ConfigBase):
    """``optimizer.bounds``: the box every asked genome lies in, and how it is kept there."""

    low: float | tuple[float, ...] = option(
        doc="lowest value of every gene, or one per gene (finite)"
    )
    high: float | tuple[float, ...] = option(
        doc="highest value of every gene, or one per gene (finite)"
    )
    method: BoundsMethod = option(
        "clip", doc="clip, reflect or resample a genome drawn outside (docs/guide/optimizers.md)"
    )
    max_resamples: int = option(
        100, doc="resample: draws of a row before its genes still outside are clipped", ge=1
    )

    def validate(self, path: str) -> None:
        low, high = np.atleast_1d(self.low), np.atleast_1d(self.high)
        if len(low) > 1 and len(high) > 1 and len(low) != len(high):
            raise ConfigError(
                join(path, "high"),
                f"has {len(high)} values and low has {len(low)}; give one per gene in both,"
                " or a scalar",
            )
        low, high = np.broadcast_arrays(low, high)
        below = np.flatnonzero(~(low < high))
        if len(below):
            index = int(below[0])
            raise ConfigError(
                join(path, "high"),
                f"must be above low for every gene; gene {index} has low {low[index]:g} and"
                f" high {high[index]:g}",
            )


def check_start_inside(bounds: BoundsConfig, start: float, path: str) -> None:
    """Refuse a start point ``start`` (``center_init``: one value for every gene) outside
    ``bounds``, naming the range that every gene's bounds admit; ``path`` is the optimizer
    section's."""
    low, high = np.broadcast_arrays(np.atleast_1d(bounds.low), np.atleast_1d(bounds.high))
    outside = np.flatnonzero((start < low) | (start > high))
    if len(outside) == 0:
        return
    index = int(outside[0])
    gene = "" if len(low) == 1 else f" at gene {index}"
    lowest, highest = float(low.max()), float(high.min())
    fix = (
        f"set center_init within [{lowest:g}, {highest:g}] or widen the bounds"
        if lowest <= highest
        else "no one value lies inside every gene's bounds: widen them"
    )
    raise ConfigError(
        join(path, "center_init"),
        f"the start point {start:g} lies outside {join(path, 'bounds')}{gene}"
        f" [{low[index]:g}, {high[index]:g}]; {fix}",
    )


class GeneBounds:
    """A :class:`BoundsConfig` resolved for one genome size: (G,) arrays ``low`` and ``high``."""

    def __init__(self, config: BoundsConfig, genome_size: int):
        self.method: BoundsMethod = config.method
        self.max_resamples = config.max_resamples
        self.low = self._per_gene(config.low, genome_size, "low")
        self.high = self._per_gene(config.high, genome_size, "high")

    @staticmethod
    def _per_gene(value: float | tuple[float, ...], genome_size: int, name: str) -> np.ndarray:
        values = np.atleast_1d(np.asarray(value, dtype=np.float64))
        if len(values) == 1:
            return np.full(genome_size, values[0])
        if len(values) != genome_size:
            raise ConfigError(
                f"optimizer.bounds.{name}",
                f"has {len(values)} values but the genome has {genome_size} genes; give one per"
                " gene or a scalar",
            )
        return values

    def outside(self, genomes: np.ndarray) -> np.ndarray:
        """Indices of the rows with a gene outside [low, high]."""
        return np.flatnonzero(((genomes < self.low) | (genomes > self.high)).any(axis=1))

    def repair(self, genomes: np.ndarray) -> np.ndarray:
        """``genomes`` inside the box: reflected for ``reflect``, clipped otherwise (after
        ``resample`` only the rows that ran out of draws are left to clip)."""
        if self.method == "reflect":
            return reflect(genomes, self.low, self.high)
        return np.clip(genomes, self.low, self.high)

    def resample(
        self, genomes: np.ndarray, redraw: Callable[[np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """Redraw (``redraw(rows)`` returns the whole pending array) the rows outside, at most
        ``max_resamples`` times; the caller clips what is left."""
        for _ in range(self.max_resamples):
            rows = self.outside(genomes)
            if len(rows) == 0:
                break
            genomes = redraw(rows)
        return genomes


def reflect(genomes: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Each gene folded into [low, high] by mirroring at the bounds (period 2 (high - low))."""
    width = high - low
    offset = np.mod(genomes - low, 2 * width)
    folded = np.where(offset > width, 2 * width - offset, offset)
    inside = (genomes >= low) & (genomes <= high)
    return np.where(inside, genomes, low + folded)
