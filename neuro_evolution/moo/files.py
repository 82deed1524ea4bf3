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

An NSGA2 run with objectives stores its front as members (:class:`FrontMembers`): ``--front K``
is row K of ``pareto.npz``.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.moo.nsga2 import NSGA2
from neuro_evolution.moo.objectives import raw_values
from neuro_evolution.moo.pareto import crowded_order
from neuro_evolution.optimizers.members import Member, StoredMembers, named_values, row_scaler
from neuro_evolution.support.atomic import atomic_savez, atomic_write_bytes, load_npz
from neuro_evolution.support.errors import UserError

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


@dataclasses.dataclass(frozen=True)
class FrontMember(Member):
    """Member K of the front in ``pareto.npz``, with the front's size, its generation and the
    objective names."""

    row: int
    front_size: int
    generation: int
    names: tuple[str, ...]

    def replay_line(self, fitness: float, measures: np.ndarray) -> str:
        """Objectives next to the saved ones, then the fitness (the file keeps none)."""
        names = self.names
        return (
            f"front member {self.row} of {self.front_size} (generation {self.generation}, base "
            f"seed {self.seed}): objectives {named_values(names, measures)} (saved "
            f"{named_values(names, self.stored_measures)}); fitness {fitness:.10g}"
        )


class FrontMembers(StoredMembers):
    """The Pareto front of an NSGA2 run's ``pareto.npz``: ``--front K`` is its row K."""

    flags = ("--front",)

    def __init__(self, run_dir: Path, objectives: tuple[MeasureConfig, ...]):
        self.path = run_dir / PARETO_FILE
        self.objectives = objectives

    def member(self, flag: str, value: str) -> FrontMember:
        if not self.path.is_file():
            raise UserError(f"{self.path}: missing; --front replays a front member of an NSGA2 run")
        data, template = load_pareto(self.path)
        size = int(data["front_size"])
        try:
            row = int(value)
        except ValueError:
            raise UserError(f"--front must be an index K, got {value!r}") from None
        if not 0 <= row < size:
            raise UserError(f"--front must be in 0..{size - 1}, got {row}")
        return FrontMember(
            genome=np.array(data["genomes"][row], dtype=np.float64),
            seed=int(data["seeds"][row]),
            scaler=row_scaler(data, row),
            template=template,
            measures=self.objectives,
            stored_fitness=None,
            stored_measures=np.asarray(data["objectives"][row], dtype=np.float64),
            label=f"front {row}",
            description=f"Pareto front member {row}",
            row=row,
            front_size=size,
            generation=int(data["generations"][row]),
            names=tuple(str(name) for name in data["objective_names"]),
        )
