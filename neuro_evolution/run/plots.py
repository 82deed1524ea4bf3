"""The run's pictures: ``fitness.png`` (fitness and held-out validation per generation).

Drawn on matplotlib's headless Agg canvas; matplotlib is imported when a plot is drawn, not when
the module loads, so workers never pay for it.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neuro_evolution.support.atomic import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def fitness_figure(log: list[dict[str, Any]], title: str) -> Figure:
    """The fitness plot of ``log`` (headless Agg canvas): the legend sits right of the axes,
    never on the data, and generations are whole numbers on the x-axis."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    generations = [row["generation"] for row in log]
    figure = Figure(figsize=(8.5, 4), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    mean = np.array([row["fitness_mean"] for row in log])
    std = np.array([row["fitness_std"] for row in log])
    axes.fill_between(generations, mean - std, mean + std, alpha=0.2, label="mean ± std")
    axes.plot(generations, mean, label="mean")
    axes.plot(generations, [row["fitness_max"] for row in log], label="max")
    axes.plot(generations, [row["fitness_min"] for row in log], label="min", alpha=0.6)
    axes.plot(generations, [row["best_so_far"] for row in log], "k--", label="best so far")
    validated = [
        (row["generation"], row["validation_mean"])
        for row in log
        if row.get("validation_mean") is not None and not math.isnan(row["validation_mean"])
    ]
    if validated:
        x, y = zip(*validated)
        axes.plot(x, y, "o-", color="tab:red", label="validation (held-out)")
    axes.set_xlabel("generation")
    axes.set_ylabel("fitness")
    axes.set_title(title)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize="small")
    axes.grid(alpha=0.3)
    return figure


def plot_fitness(path: str | Path, log: list[dict[str, Any]], title: str) -> None:
    """Draw ``fitness.png`` from the log."""
    buffer = io.BytesIO()
    fitness_figure(log, title).savefig(buffer, format="png")

    atomic_write_bytes(path, buffer.getvalue())
