"""A warning when a descriptor's bounds miss its values: every elite then sits in an edge cell.

A grid archive puts a value below ``low`` in the first bin and one at or above ``high`` in the
last, so when every value of a generation lies outside ``[low, high]`` for one descriptor, the
whole archive is one edge row or column (e.g. coverage 0.0036 of a 50 x 50 grid), and nothing
but ``archive.png`` shows it. Each descriptor warns once per run, with the values' range.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neuro_evolution.qd.descriptors import DescriptorConfig


def bounds_missed(
    descriptors: Sequence[DescriptorConfig], measures: np.ndarray, generation: int
) -> list[tuple[int, str]]:
    """(descriptor index, one-line message) for every descriptor all of whose values in
    ``measures`` (one row per evaluation) lie outside its ``[low, high]``."""
    missed = []
    for index, descriptor in enumerate(descriptors):
        values = measures[:, index]
        if len(values) == 0:
            continue
        outside = (values < descriptor.low) | (values > descriptor.high)
        if outside.all():
            missed.append(
                (
                    index,
                    f"optimizer.descriptors[{index}] ({descriptor.name}): all {len(values)} "
                    f"values of generation {generation} lie outside [low, high] = "
                    f"[{descriptor.low:g}, {descriptor.high:g}] (they range from "
                    f"{float(values.min()):.4g} to {float(values.max()):.4g}), so every elite "
                    "sits in an edge cell; set low and high to the range the values take",
                )
            )
    return missed
