"""``pbt.png``: each run's held-out validation at every interval's end, and each explored
setting over the generations (a step per interval), one colour per run; a copy is marked where
it happened (a dot on the copied run's validation line at that generation)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuro_evolution.support.atomic import atomic_write_bytes

if TYPE_CHECKING:
    from neuro_evolution.pbt.space import ExploredSetting


def numeric(value: Any) -> float | None:
    """A setting's value as a number to draw (a list or string: None, drawn as its index)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def setting_points(
    history: list[dict[str, Any]], key: str, run: str, interval: int, labels: list[str]
) -> tuple[list[float], list[float]]:
    """(generations, values) of one run's setting as steps over the intervals; a value that is
    no number is drawn as its position in ``labels`` (which it joins)."""
    xs: list[float] = []
    ys: list[float] = []
    for entry in history:
        value = entry["settings"][run][key]
        number = numeric(value)
        if number is None:
            label = json.dumps(value)
            if label not in labels:
                labels.append(label)
            number = float(labels.index(label))
        xs += [entry["generation"] - interval, entry["generation"]]
        ys += [number, number]
    return xs, ys


def plot_pbt(
    path: Path,
    history: list[dict[str, Any]],
    lineage: dict[str, dict[str, Any]],
    space: tuple[ExploredSetting, ...],
) -> None:
    """Draw ``pbt.png`` (atomically) from the intervals recorded so far."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not history:
        return
    interval = history[0]["generation"]
    runs = list(history[0]["scores"])
    figure = Figure(figsize=(8.5, 3 + 2 * len(space)), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1 + len(space), 1, sharex=True, squeeze=False)[:, 0]
    colours = [f"C{index % 10}" for index in range(len(runs))]
    scores = panels[0]
    for run, colour in zip(runs, colours):
        points = [
            (e["generation"], e["scores"][run]) for e in history if e["scores"][run] is not None
        ]
        scores.plot([p[0] for p in points], [p[1] for p in points], "-o", color=colour, label=run)
        for copy in lineage[run]["copies"]:
            scores.plot([copy["generation"]], [copy["score"]], "x", color=colour, markersize=10)
    scores.set_ylabel("held-out validation")
    scores.set_title("PBT: validation at each interval's end (x: the run copied another)")
    scores.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    for panel, setting in zip(panels[1:], space):
        labels: list[str] = []
        for run, colour in zip(runs, colours):
            xs, ys = setting_points(history, setting.key, run, interval, labels)
            panel.plot(xs, ys, color=colour)
        if labels:
            panel.set_yticks(range(len(labels)), labels)
        if setting.log:
            panel.set_yscale("log")
        panel.set_ylabel(setting.key, fontsize="small")
    panels[-1].set_xlabel("generation")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    atomic_write_bytes(path, buffer.getvalue())
