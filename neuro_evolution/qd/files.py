"""A QD run's files: ``archive.npz`` (every elite, no pickle) and ``archive.png`` (its picture).

``archive.npz`` holds the archive's state (:meth:`Archive.to_state`: cells, fitness, descriptors,
genomes, generation and episode base seed of each elite, its observation scaler when
observations are normalized, the CVT centroids), the descriptor names, bounds and bins, the
archive kind and the template state (as ``hall_of_fame.npz`` does), written atomically.
``archive.png``: for two descriptors a heatmap of elite fitness over the cells (grid) or the
elites as points coloured by fitness (CVT); for one descriptor, fitness against it; for more,
the elites projected on the first two descriptors.

Every QD optimizer stores its elites as members (:class:`ArchiveMembers`): ``--elite K`` is row K
of ``archive.npz`` (cells ascending), ``--cell I,J`` the elite of grid cell I,J.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.optimizers.members import Member, StoredMembers, named_values, row_scaler
from neuro_evolution.qd.archive import Archive
from neuro_evolution.support.atomic import atomic_savez, atomic_write_bytes, load_npz
from neuro_evolution.support.errors import UserError

ARCHIVE_FILE = "archive.npz"
ARCHIVE_PLOT_FILE = "archive.png"
TEMPLATE_PREFIX = "template."


def save_archive(path: str | Path, archive: Archive, template: BrainTemplate) -> None:
    """Write ``archive.npz`` (see the module doc)."""
    arrays: dict[str, Any] = dict(archive.to_state(prefix=""))
    arrays.update(
        descriptor_names=np.array(archive.names),
        descriptor_low=archive.low,
        descriptor_high=archive.high,
        descriptor_bins=archive.bins,
        kind=np.array(archive.config.kind),
        total_cells=np.int64(archive.cells),
    )
    arrays.update({TEMPLATE_PREFIX + key: value for key, value in template.to_state().items()})
    atomic_savez(path, arrays)


def load_archive(path: str | Path) -> tuple[dict[str, np.ndarray], BrainTemplate]:
    """The arrays of ``archive.npz`` (template keys removed) and the template."""
    data = load_npz(path)
    template = BrainTemplate.from_state(
        {k[len(TEMPLATE_PREFIX) :]: v for k, v in data.items() if k.startswith(TEMPLATE_PREFIX)}
    )
    return {k: v for k, v in data.items() if not k.startswith(TEMPLATE_PREFIX)}, template


def archive_png(archive: Archive, title: str) -> bytes:
    """The PNG bytes of the archive's picture (headless Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.5, 5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    cells = archive.elite_cells()
    fitness = archive.fitness[cells]
    names = archive.names
    if len(names) == 2 and archive.config.kind == "grid":
        grid = np.full(archive.cells, np.nan)
        grid[cells] = fitness
        image = axes.imshow(
            grid.reshape(archive.shape).T,
            origin="lower",
            aspect="auto",
            extent=(archive.low[0], archive.high[0], archive.low[1], archive.high[1]),
            cmap="viridis",
            interpolation="nearest",
        )
        figure.colorbar(image, ax=axes, label="fitness")
        axes.set_xlabel(names[0])
        axes.set_ylabel(names[1])
    elif len(names) == 1:
        axes.plot(archive.measures[cells, 0], fitness, ".")
        axes.set_xlabel(names[0])
        axes.set_ylabel("fitness")
        axes.set_xlim(archive.low[0], archive.high[0])
    else:
        points = axes.scatter(
            archive.measures[cells, 0], archive.measures[cells, 1], c=fitness, s=8, cmap="viridis"
        )
        figure.colorbar(points, ax=axes, label="fitness")
        axes.set_xlabel(names[0])
        axes.set_ylabel(names[1])
        axes.set_xlim(archive.low[0], archive.high[0])
        axes.set_ylim(archive.low[1], archive.high[1])
    projection = "" if len(names) <= 2 else f" (projection on the first 2 of {len(names)})"
    axes.set_title(f"{title}: {len(cells)} of {archive.cells} cells{projection}")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def plot_archive(path: str | Path, archive: Archive, title: str) -> None:
    """Write ``archive.png`` atomically."""
    atomic_write_bytes(path, archive_png(archive, title))


class ArchiveWriter:
    """The run directory's writer of both files: the npz when the archive changed, the picture
    when the run directory says pictures are due."""

    def __init__(self, folder: Path, archive_of: Any, template: BrainTemplate, title: str):
        self.folder = folder
        self.archive_of = archive_of  # () -> the optimizer's archive now (it may be replaced)
        self.template = template
        self.title = title
        self._written: tuple[int, int] | None = None  # (id, changes) of the archive on disk

    def __call__(self, plot: bool) -> None:
        archive = self.archive_of()
        key = (id(archive), archive.changes)
        if key != self._written:
            save_archive(self.folder / ARCHIVE_FILE, archive, self.template)
            self._written = key
        if plot:
            plot_archive(self.folder / ARCHIVE_PLOT_FILE, archive, self.title)


@dataclasses.dataclass(frozen=True)
class ArchiveElite(Member):
    """An elite of ``archive.npz``: its row, cell, generation and the descriptor names."""

    row: int
    cell: int
    generation: int
    names: tuple[str, ...]

    def replay_line(self, fitness: float, measures: np.ndarray) -> str:
        """Fitness and descriptors, each next to the archived value."""
        names, archived = self.names, self.stored_fitness
        return (
            f"elite {self.row} (cell {self.cell}, generation {self.generation}, base seed "
            f"{self.seed}): fitness {fitness:.10g} (archived {archived:.10g}); descriptors "
            f"{named_values(names, measures)} (archived "
            f"{named_values(names, self.stored_measures)})"
        )


class ArchiveMembers(StoredMembers):
    """The elites of a QD run's ``archive.npz``: ``--elite K`` (row K, cells ascending; export
    also takes ``--elite I,J``) or ``--cell I,J`` (a grid archive's cell)."""

    flags = ("--elite", "--cell")

    def __init__(self, run_dir: Path, descriptors: tuple[MeasureConfig, ...]):
        self.path = run_dir / ARCHIVE_FILE
        self.descriptors = descriptors

    def member(self, flag: str, value: str) -> ArchiveElite:
        if not self.path.is_file():
            raise UserError(
                f"{self.path}: missing; --elite/--cell replay elites of a QD run's archive"
            )
        data, template = load_archive(self.path)
        by_cell = flag == "--cell" or "," in value  # export's --elite I,J names a cell too
        row = cell_row(data, value) if by_cell else elite_row(data, value)
        return ArchiveElite(
            genome=np.array(data["genomes"][row], dtype=np.float64),
            seed=int(data["seeds"][row]),
            scaler=row_scaler(data, row),
            template=template,
            measures=self.descriptors,
            stored_fitness=float(data["fitness"][row]),
            stored_measures=data["measures"][row],
            label=f"elite {row}",
            description=f"archive elite {row} (cell {int(data['cells'][row])})",
            row=row,
            cell=int(data["cells"][row]),
            generation=int(data["generations"][row]),
            names=tuple(str(name) for name in data["descriptor_names"]),
        )


def elite_row(data: dict[str, np.ndarray], value: str) -> int:
    """The row of ``--elite K``."""
    try:
        elite = int(value)
    except ValueError:
        raise UserError(f"--elite must be an index K or a cell I,J, got {value!r}") from None
    count = len(data["cells"])
    if not 0 <= elite < count:
        raise UserError(f"--elite must be in 0..{count - 1}, got {elite}")
    return elite


def cell_row(data: dict[str, np.ndarray], cell: str) -> int:
    """The row of the elite of grid cell ``I,J,...``."""
    if str(data["kind"]) != "grid":
        raise UserError("--cell: this run's archive is a CVT; name the elite with --elite K")
    try:
        position = tuple(int(part) for part in cell.split(","))
    except ValueError:
        raise UserError(f"--cell must be integers I,J,..., got {cell!r}") from None
    shape = tuple(int(b) for b in data["descriptor_bins"])
    if len(position) != len(shape) or not all(0 <= p < n for p, n in zip(position, shape)):
        raise UserError(f"--cell {cell}: not a cell of the {'x'.join(map(str, shape))} grid")
    rows = np.flatnonzero(data["cells"] == int(np.ravel_multi_index(position, shape)))
    if not len(rows):
        raise UserError(f"--cell {cell}: that cell holds no elite ({len(data['cells'])} cells do)")
    return int(rows[0])
