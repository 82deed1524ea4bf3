"""Connection masks (which weights exist) and the plan that pours a genome into weight matrices.

A mask is a read-only bool matrix drawn once per experiment by a template's ``from_config``;
the genome holds one value per True entry, in row-major mask order. Mask types (the CTRNN's
``v_mask``/``w_mask``/``t_mask`` with their ``*_param``):

- ``dense``: every entry (the param is ignored);
- ``random``: each entry independently with probability ``param`` (a density in [0, 1]);
- ``logarithmic``: along the mask's longer side, each line connects to the entries at offsets
  ±1, ±base, ±base², ... (floored) from its (pseudo-)diagonal, wrapping around; ``param`` is the
  base (>= 1.05). Every row and column gets entries (but in a 2 x 2 mask): drawn along its
  rows, a wide mask could leave rows empty (an input of V that reaches no neuron);
- ``learned``: dense in the genome, but after filling only the weights whose magnitude reaches
  the ``param``-th percentile (numpy's "higher" method) of the matrix's magnitudes are kept, with
  their signs. Each matrix is ranked alone: the CTRNN's bias is never pruned (a mask decides which
  connections exist, and a bias is no connection).

A :class:`Section` says where one stretch of the genome goes: ``target[index] = genome[part]``,
for a single brain's arrays and a batch brain's stacked arrays alike. Dense blocks use slices
(a plain copy); masked blocks use precomputed positions in the flattened target (one fancy
assignment on a flat view).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

import numpy as np

from neuro_evolution.core.schema import ConfigError
from neuro_evolution.support.frozen import FrozenClassMeta, frozen_dataclass, readonly

MaskType = Literal["dense", "random", "logarithmic", "learned"]
MASK_TYPES: tuple[str, ...] = ("dense", "random", "logarithmic", "learned")
MIN_LOG_BASE = 1.05


def check_mask_param(kind: str, param: float, path: str) -> None:
    """ConfigError (at ``path``, the ``*_param`` field) when ``param`` does not suit ``kind``."""
    if kind == "random" and not 0.0 <= param <= 1.0:
        raise ConfigError(path, f"a random mask's param is a density in [0, 1], got {param!r}")
    if kind == "logarithmic" and param < MIN_LOG_BASE:
        raise ConfigError(
            path, f"a logarithmic mask's param is a base >= {MIN_LOG_BASE} (e.g. 2), got {param!r}"
        )
    if kind == "learned" and not 0.0 <= param <= 100.0:
        raise ConfigError(
            path, f"a learned mask's param is a percentile in [0, 100], got {param!r}"
        )


def make_mask(
    kind: str, rows: int, cols: int, param: float, rng: np.random.Generator
) -> np.ndarray:
    """A read-only (rows, cols) bool mask of type ``kind``; only ``random`` draws from ``rng``."""
    if kind in ("dense", "learned"):
        mask = np.ones((rows, cols), dtype=bool)
    elif kind == "random":
        mask = rng.random((rows, cols)) < param
    elif kind == "logarithmic":
        mask = logarithmic_along_longer_side(rows, cols, param)
    else:
        raise ValueError(f"unknown mask type {kind!r}: use one of {', '.join(MASK_TYPES)}")
    mask.flags.writeable = False
    return mask


def logarithmic_along_longer_side(rows: int, cols: int, base: float) -> np.ndarray:
    """The ``logarithmic`` mask type: the pattern drawn with the longer side as its rows.

    A wide pattern (``cols > rows``) reaches its rows only through the stretched diagonal and can
    leave some empty (``logarithmic_mask(4, 6, 2)`` has no entry in row 3: as V, the 4th input
    would be ignored), so a wide mask is the transpose of the tall pattern; a square one is
    transposed too. For the CTRNN (neurons are V's and W's columns, T's rows) V and W are then
    drawn target x source whenever inputs <= N.
    """
    if cols >= rows:
        return np.ascontiguousarray(logarithmic_mask(cols, rows, base).T)
    return logarithmic_mask(rows, cols, base)


def logarithmic_mask(rows: int, cols: int, base: float) -> np.ndarray:
    """The logarithmic pattern: entries at offsets ±floor(base**k) along each row from a
    (pseudo-)diagonal, wrapping around.

    For a non-square matrix the diagonal is stretched over the longer side. Every row of a tall
    or square pattern gets entries (columns too, apart from 2 x 2); a wide pattern can leave rows
    empty, see :func:`logarithmic_along_longer_side`.
    """
    top = math.floor(math.log(max(rows, cols), base))
    offsets = sorted({math.floor(base**k) for k in range(top + 1)})
    if cols > rows:
        stretch = np.rint(np.arange(cols) * ((rows - 1) / cols)).astype(int)
        diagonal = zip(stretch.tolist(), range(cols))
    else:
        stretch = np.rint(np.arange(rows) * ((cols - 1) / rows)).astype(int)
        diagonal = zip(range(rows), stretch.tolist())
    mask = np.zeros((rows, cols), dtype=bool)
    for row, col in diagonal:
        for offset in offsets:
            mask[row, (col + offset) % cols] = True
            mask[row, (col - offset) % cols] = True
    return mask


def keep_largest(block: np.ndarray, percentile: float) -> None:
    """Zero, in place, the entries of the last two axes below the ``percentile`` of magnitudes.

    This is the ``learned`` mask: leading axes (a batch of brains) are handled independently.
    """
    magnitude = np.abs(block)
    threshold = np.percentile(magnitude, percentile, axis=(-2, -1), method="higher", keepdims=True)
    np.copyto(block, 0.0, where=magnitude < threshold)


@frozen_dataclass
class Section(metaclass=FrozenClassMeta):
    """``target[index] = scale * genome[part]`` reshaped to ``shape``, for one brain or a batch.

    ``index`` addresses one brain's array; a batch brain's arrays have a leading axis of P
    brains, which ``pour`` adds. With ``flat``, ``index`` is one array of positions in the
    flattened target (a masked block: one fancy assignment on a flat view, the fastest scatter).
    ``scale`` lets a brain store pre-multiplied weights (the CTRNN folds delta_t into its
    matrix); for slice indices the product is written straight into the target.
    """

    target: str
    index: tuple[Any, ...]
    part: slice
    shape: tuple[int, ...]
    scale: float = 1.0
    flat: bool = False
    batch_index: tuple[Any, ...] = dataclasses.field(init=False, repr=False, compare=False)
    is_view: bool = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "batch_index", (slice(None), *self.index))
        views = all(isinstance(i, slice | int) for i in self.index)
        object.__setattr__(self, "is_view", views)

    def pour(self, brain: Any, genome: np.ndarray) -> None:
        """Copy this section of ``genome`` (shape (G,) or (P, G)) into ``brain``'s array."""
        target = getattr(brain, self.target)
        if genome.ndim == 1:
            values = genome[self.part].reshape(self.shape)
            index = self.index
            if self.flat:
                target = target.reshape(-1)
        else:
            count = genome.shape[0]
            values = genome[:, self.part].reshape((count, *self.shape))
            index = self.batch_index
            if self.flat:
                target = target.reshape(count, -1)
        if self.scale == 1.0:
            target[index] = values
        elif self.is_view:
            np.multiply(values, self.scale, out=target[index])
        else:
            target[index] = values * self.scale


def block_sections(
    target: str, mask: np.ndarray, row0: int, width: int, start: int, scale: float = 1.0
) -> tuple[list[Section], int]:
    """Sections pouring a masked block whose genome values start at ``start``.

    The block's entry (r, c) lands at ``target[row0 + r, c]`` (times ``scale``) of a target with
    ``width`` columns. Returns the sections and the genome offset after the block.
    """
    rows, cols = mask.shape
    size = int(np.count_nonzero(mask))
    part = slice(start, start + size)
    if size == 0:
        return [], start
    if mask.all():
        index: tuple[Any, ...] = (slice(row0, row0 + rows), slice(0, cols))
        section = Section(target=target, index=index, part=part, shape=(rows, cols), scale=scale)
    else:
        r, c = np.nonzero(mask)  # row-major order, the genome's order
        index = (readonly((r + row0) * width + c),)
        section = Section(
            target=target, index=index, part=part, shape=(size,), scale=scale, flat=True
        )
    return [section], start + size


def merge_sections(sections: list[Section]) -> list[Section]:
    """Join consecutive dense blocks that continue each other in the genome and in the target
    (same columns, next rows): one copy instead of several, e.g. the CTRNN's V and W."""
    merged: list[Section] = []
    for section in sections:
        last = merged[-1] if merged else None
        if (
            last is not None
            and last.target == section.target
            and last.scale == section.scale
            and last.part.stop == section.part.start
            and len(last.shape) == len(section.shape) == 2
            and not last.flat
            and not section.flat
            and last.index[1] == section.index[1]
            and last.index[0].stop == section.index[0].start
        ):
            rows = slice(last.index[0].start, section.index[0].stop)
            merged[-1] = Section(
                target=section.target,
                index=(rows, section.index[1]),
                part=slice(last.part.start, section.part.stop),
                shape=(last.shape[0] + section.shape[0], section.shape[1]),
                scale=section.scale,
            )
        else:
            merged.append(section)
    return merged
