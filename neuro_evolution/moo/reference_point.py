"""A warning when no front member beats NSGA2's reference point: the hypervolume is then 0.

The hypervolume counts only members better than ``reference_point`` in every objective, so a
reference point nobody beats (a sign mistaken for a minimized objective, a bound beyond the
task's range) leaves the ``hypervolume`` column at 0 with nothing else to say why. The first
generation whose hypervolume is 0 says so once, with the front's best value per objective.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def unbeaten_reference_line(
    raw_front: np.ndarray,
    reference_point: Sequence[float],
    senses: Sequence[str],
    names: Sequence[str],
) -> str:
    """The one-line warning for a front (raw units, one row per member) that does not beat
    ``reference_point`` in every objective."""
    best = [
        float(np.max(column) if sense == "maximize" else np.min(column))
        for column, sense in zip(raw_front.T, senses, strict=True)
    ]
    shown = ", ".join(
        f"{name} {value:.4g} ({'max' if sense == 'maximize' else 'min'})"
        for name, value, sense in zip(names, best, senses, strict=True)
    )
    reference = ", ".join(f"{value:g}" for value in reference_point)
    return (
        f"optimizer.reference_point: no front member beats [{reference}] in every objective, "
        f"so the hypervolume is 0 (the front's best: {shown}); choose a reference point the "
        "front can beat, each value worse than what members reach"
    )
