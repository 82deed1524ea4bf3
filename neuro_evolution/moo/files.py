"""A multi-objective run's files: ``pareto.npz`` (the front and population, no pickle) and
``pareto.png`` (their picture).

``pareto.npz`` holds NSGA2's survivors, the Pareto front first (front member K is row K, in
the order of :meth:`NSGA2.front`; ``front_size`` rows), then the others by (rank, crowding
descending, index): ``genomes``, ``objectives`` in raw units (minimized ones not negated),
``ranks``, ``seeds`` and ``generations`` of their evaluations (replay reruns them), their
observation scalers when observations are normalized; the objective names and senses, the
reference point, the front's ``hypervolume``, the
generation, and the template state (as ``hall_of_fame.npz`` does), written atomically.
``pareto.png``: the population and the front in the first two objectives (a projection for
three or more, the values against rank for one); the reference point is named in the legend,
not drawn (it would squash the axes).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.moo.nsga2 import NSGA2
from neuro_evolution.moo.objectives import raw_values
from neuro_evolution.moo.pareto import crowded_order
from neuro_evolution.support.atomic import atomic_savez, atomic_write_bytes, load_npz

PARETO_FILE = "pareto.npz"
PARETO_PLOT_FILE = "pareto.png"
TEMPLATE_PREFIX = "template."


def pareto_arrays(optimizer: NSGA2) -> dict[str, Any]:
    """The arrays of ``pareto.npz`` (template aside) for ``optimizer`` (see the module doc)."""
    state = optimizer.state()
    config = optimizer.config
    records = optimizer.front_records()
    front = records["survivors"]
    ranks = np.asarray(state["parent_ranks"])
    crowding = np.asarray(state["parent_crowding"])
    rest = [i for i in crowded_order(ranks, crowding) if ranks[i] != 0]
    order = np.concatenate([front, np.array(rest, dtype=np.int64)]).astype(np.int64)
    maximized = np.asarray(state["parent_objectives"])
    arrays: dict[str, Any] = {
        "genomes": np.asarray(state["parent_genomes"])[order],
        "objectives": raw_values(maximized[order], optimizer.senses),
        "ranks": ranks[order],
        "front_size": np.int64(len(front)),
        "objective_names": np.array([o.name for o in config.objectives]),
        "objective_senses": np.array(optimizer.senses),
        "reference_point": np.array(config.reference_point, dtype=np.float64),
        "hypervolume": np.float64(optimizer.log_metrics().get("hypervolume", np.nan)),
        "generation": np.int64(state["generation"]),
    }
    for key in ("seeds", "generations", "observation_mean", "observation_scale"):
        if f"parent_{key}" in state:
            arrays[key] = np.asarray(state[f"parent_{key}"])[order]
    if "parent_observation_clip" in state:
        arrays["observation_clip"] = np.asarray(state["parent_observation_clip"])[order]
    return arrays


def save_pareto(path: str | Path, optimizer: NSGA2, template: BrainTemplate) -> None:
    """Write ``pareto.npz`` (see the module doc)."""
    arrays = pareto_arrays(optimizer)
    arrays.update({TEMPLATE_PREFIX + key: value for key, value in template.to_state().items()})
    atomic_savez(path, arrays)


def load_pareto(path: str | Path) -> tuple[dict[str, np.ndarray], BrainTemplate]:
    """The arrays of ``pareto.npz`` (template keys removed) and the template."""
    data = load_npz(path)
    template = BrainTemplate.from_state(
        {k[len(TEMPLATE_PREFIX) :]: v for k, v in data.items() if k.startswith(TEMPLATE_PREFIX)}
    )
    return {k: v for k, v in data.items() if not k.startswith(TEMPLATE_PREFIX)}, template


def pareto_png(arrays: dict[str, Any], title: str) -> bytes:
    """The PNG bytes of the front's picture (headless Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.5, 5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    values, size = arrays["objectives"], int(arrays["front_size"])
    names = [f"{n} ({s})" for n, s in zip(arrays["objective_names"], arrays["objective_senses"])]
    reference = arrays["reference_point"]
    shown = ", ".join(f"{value:g}" for value in reference)
    if len(names) == 1:
        axes.plot(values[size:, 0], arrays["ranks"][size:], ".", color="0.6", label="population")
        axes.plot(values[:size, 0], arrays["ranks"][:size], "o", color="C3", label="front")
        axes.set_xlabel(names[0])
        axes.set_ylabel("Pareto rank")
    else:
        axes.plot(values[size:, 0], values[size:, 1], ".", color="0.6", label="population")
        axes.plot(values[:size, 0], values[:size, 1], "o-", color="C3", label="front")
        axes.set_xlabel(names[0])
        axes.set_ylabel(names[1])
    axes.plot([], [], " ", label=f"hypervolume reference ({shown})")  # off the axes' scale
    axes.legend(loc="best", fontsize="small")
    projection = "" if len(names) <= 2 else f" (projection on the first 2 of {len(names)})"
    axes.set_title(
        f"{title}: front of {size} after generation {int(arrays['generation'])}, hypervolume "
        f"{float(arrays['hypervolume']):.4g}{projection}",
        fontsize="medium",
    )
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


class ParetoWriter:
    """The run directory's writer of both files: the npz after every generation that changed
    the survivors, the picture when the run directory says pictures are due."""

    def __init__(self, folder: Path, optimizer: NSGA2, template: BrainTemplate, title: str):
        self.folder = folder
        self.optimizer = optimizer
        self.template = template
        self.title = title
        self._written = -1  # the optimizer generation on disk

    def __call__(self, plot: bool) -> None:
        generation = self.optimizer.generation
        if generation == 0:
            return
        if generation != self._written:
            save_pareto(self.folder / PARETO_FILE, self.optimizer, self.template)
            self._written = generation
        if plot:
            arrays = pareto_arrays(self.optimizer)
            atomic_write_bytes(self.folder / PARETO_PLOT_FILE, pareto_png(arrays, self.title))
