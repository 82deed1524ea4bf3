"""The run directory: resolved config, per-generation log, hall of fame with template, plot.

Layout of ``runs/<config-name>-<timestamp>/``::

    config.json        the resolved config (every default filled in)
    log.csv            one row per generation (the fields of LogRow)
    hall_of_fame.npz   best genomes by raw fitness + the template state (no pickle)
    candidate.npz      the genome the run stands behind (distribution center, or the hall of
                       fame's best), its last held-out validation and observation scaler,
                       + the template state
    fitness.png        min / mean / max / best-so-far fitness and validation per generation
                       (drawn by :mod:`neuro_evolution.run.plots`)

Every file is written atomically, so a crash never leaves one half-written.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import tempfile
import time
import typing
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.normalization import ObservationScaler, scaler_arrays, scaler_from_arrays
from neuro_evolution.evaluation.episodes.validation import ValidationScore
from neuro_evolution.run.log_row import LOG_FIELDS, LogRow
from neuro_evolution.run.plots import BackgroundPlot, plot_fitness
from neuro_evolution.support.atomic import (
    atomic_savez,
    atomic_write_json,
    atomic_write_text,
    load_npz,
)
from neuro_evolution.support.errors import DamagedFileError, UserError

_INT_FIELDS = frozenset(
    name for name, hint in typing.get_type_hints(LogRow).items() if hint in (int, int | None)
)
CONFIG_FILE = "config.json"
LOG_FILE = "log.csv"
HALL_OF_FAME_FILE = "hall_of_fame.npz"
CANDIDATE_FILE = "candidate.npz"
PLOT_FILE = "fitness.png"
TEMPLATE_PREFIX = "template."


def write_error(path: Path) -> OSError | None:
    """None when this process can create a file in the directory ``path``, else the error (a
    read-only file system, missing permission): a real probe file, as root passes every mode
    check but not a read-only mount."""
    try:
        descriptor, probe = tempfile.mkstemp(prefix=".write-probe-", dir=path)
    except OSError as error:
        return error
    os.close(descriptor)
    os.unlink(probe)
    return None


def make_writable_directory(path: Path, what: str, advice: str) -> None:
    """Create ``path`` and check it takes files; else remove what was made, one-line UserError."""
    made = [parent for parent in (path, *path.parents) if not parent.exists()]
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"{what}: cannot create {path} ({error.strerror}); {advice}") from None
    unwritable = write_error(path)
    if unwritable is not None:
        for directory in made:  # innermost first
            try:
                directory.rmdir()
            except OSError:
                break
        raise UserError(f"{what}: cannot write in {path} ({unwritable.strerror}); {advice}")


def new_run_directory(config_path: str | Path | None, out: str | Path | None) -> Path:
    """``out`` if given, else ``runs/<config-name>-<timestamp>`` (made unique); created empty.
    A directory this process cannot write in is one UserError naming it, and nothing is left."""
    if out is not None:
        path = Path(out)
        if path.exists() and any(path.iterdir()):
            raise FileExistsError(f"--out {path}: directory exists and is not empty")
        make_writable_directory(path, "--out", "pass --out with a folder you can write in")
        return path
    name = Path(config_path).stem if config_path else "run"
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path("runs") / f"{name}-{stamp}"
    suffix = 1
    while path.exists():
        suffix += 1
        path = Path("runs") / f"{name}-{stamp}-{suffix}"
    make_writable_directory(
        path,
        "runs/ (the default run folder, under the working directory)",
        "run from a folder you can write in, or pass --out DIR",
    )
    return path


def log_to_csv(log: list[LogRow]) -> str:
    """CSV text of the log; floats keep full precision (shortest round-trip repr)."""
    buffer = io.StringIO()
    extra = [name for name, _ in log[0].metrics] if log else []
    writer = csv.DictWriter(buffer, fieldnames=[*LOG_FIELDS, *extra], lineterminator="\n")
    writer.writeheader()
    writer.writerows(row.to_dict() for row in log)
    return buffer.getvalue()


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Read ``log.csv`` back into dicts with ints, floats and None (empty cells)."""
    rows = []
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            rows.append(
                {
                    key: None if value == "" else int(value) if key in _INT_FIELDS else float(value)
                    for key, value in row.items()
                }
            )
    return rows


@dataclasses.dataclass(frozen=True)
class Candidate:
    """The genome a run stands behind, with what is needed to replay it as training saw it."""

    source: str  # "center" (the optimizer's distribution mean) or "hall_of_fame" (its best)
    genome: np.ndarray
    generation: int  # generations completed when it was taken
    scaler: ObservationScaler | None  # observation normalization it is evaluated with
    score: ValidationScore | None = None  # its held-out validation, when one was taken

    def with_score(self, score: ValidationScore | None) -> Candidate:
        return dataclasses.replace(self, score=score)


def save_candidate(path: str | Path, candidate: Candidate, template: BrainTemplate) -> None:
    """``candidate.npz``: genome, source, validation returns, scaler and template state."""
    score = candidate.score
    arrays: dict[str, Any] = {
        "genome": candidate.genome,
        "source": np.array(candidate.source),
        "generation": np.int64(candidate.generation),
        "validation_returns": np.array(score.returns if score else (), dtype=np.float64),
        "validation_steps": np.int64(score.steps if score else 0),
        **scaler_arrays(candidate.scaler),
    }
    arrays.update({TEMPLATE_PREFIX + key: value for key, value in template.to_state().items()})
    atomic_savez(path, arrays)


def load_candidate(path: str | Path) -> tuple[Candidate, BrainTemplate]:
    """The candidate and template saved by :func:`save_candidate` (a file without its arrays
    is a one-line DamagedFileError)."""
    data = load_npz(path)
    lacking = sorted({"genome", "source", "generation", "validation_returns"} - data.keys())
    if lacking:
        raise DamagedFileError(f"{path}: damaged, it lacks {', '.join(lacking)}; write it again")
    template = BrainTemplate.from_state(
        {k[len(TEMPLATE_PREFIX) :]: v for k, v in data.items() if k.startswith(TEMPLATE_PREFIX)}
    )
    generation = int(data["generation"])
    returns = tuple(float(x) for x in data["validation_returns"])
    score = ValidationScore(generation, returns, int(data["validation_steps"])) if returns else None
    candidate = Candidate(
        source=str(data["source"]),
        genome=np.array(data["genome"], dtype=np.float64),
        generation=generation,
        scaler=scaler_from_arrays(data),
        score=score,
    )
    return candidate, template


def save_hall_of_fame(path: str | Path, hall_of_fame: HallOfFame, template: BrainTemplate) -> None:
    """Hall of fame arrays plus the template state, so replay rebuilds the exact brains."""
    arrays: dict[str, Any] = dict(hall_of_fame.state())
    arrays.update({TEMPLATE_PREFIX + key: value for key, value in template.to_state().items()})
    atomic_savez(path, arrays)


def load_hall_of_fame(path: str | Path) -> tuple[HallOfFame, BrainTemplate]:
    """The hall of fame and the template saved by :func:`save_hall_of_fame`."""
    data = load_npz(path)
    template_state = {
        key[len(TEMPLATE_PREFIX) :]: value
        for key, value in data.items()
        if key.startswith(TEMPLATE_PREFIX)
    }
    template = BrainTemplate.from_state(template_state)
    hall_of_fame = HallOfFame(
        len(data["fitness"]), template.genome_size, HallOfFame.observation_size_of(data)
    )
    hall_of_fame.load_state(data)
    return hall_of_fame, template


class RunDirectory:
    """Writes a run's results as it goes; the plot is refreshed at most every ``plot_every`` s,
    the first time after ``plot_every`` s (a plot of the first generation is not worth its
    drawing time), in a background thread while the next generation runs, and at the end
    (:meth:`finish`)."""

    def __init__(self, path: Path, title: str, plot_every: float = 5.0):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.title = title
        self.plot_every = plot_every
        self._last_plot = time.monotonic()  # the first drawing waits plot_every s (or the end)
        self._plotted_rows = 0
        self._background = BackgroundPlot(self.path / PLOT_FILE, title)
        self._hall_of_fame_written: tuple[HallOfFame, int] | None = None  # (it, changes) on disk
        # more files an optimizer writes: writer(plot) after each generation, plot=True when the
        # pictures are due (with fitness.png) and at the end
        self.writers: list[Callable[[bool], None]] = []

    def write_config(self, resolved: dict[str, Any]) -> None:
        """Write ``config.json``."""
        atomic_write_json(self.path / CONFIG_FILE, resolved)

    def write_generation(
        self,
        log: list[LogRow],
        hall_of_fame: HallOfFame,
        template: BrainTemplate,
        candidate: Candidate | None = None,
    ) -> None:
        """Rewrite log, hall of fame (when it changed) and (when given) the candidate; refresh
        the plot when due (the last drawing is :meth:`finish`'s)."""
        atomic_write_text(self.path / LOG_FILE, log_to_csv(log))
        written = self._hall_of_fame_written
        if written is None or written[0] is not hall_of_fame or written[1] != hall_of_fame.changes:
            save_hall_of_fame(self.path / HALL_OF_FAME_FILE, hall_of_fame, template)
            self._hall_of_fame_written = (hall_of_fame, hall_of_fame.changes)
        if candidate is not None:
            save_candidate(self.path / CANDIDATE_FILE, candidate, template)
        self._background.check()
        # due, and no drawing still running (else the next generation draws)
        due = time.monotonic() - self._last_plot >= self.plot_every and not self._background.busy
        for writer in self.writers:
            writer(due)
        if due:
            self._background.start([row.to_dict() for row in log])
            self._last_plot = time.monotonic()
            self._plotted_rows = len(log)

    def plot(self, log: list[LogRow]) -> None:
        """Draw ``fitness.png`` now (after a background drawing still running)."""
        self._background.wait()
        plot_fitness(self.path / PLOT_FILE, [row.to_dict() for row in log], self.title)
        self._last_plot = time.monotonic()
        self._plotted_rows = len(log)

    def finish(self, log: list[LogRow]) -> None:
        """Draw the plot if generations were logged since the last drawing: the end of a run
        (``Experiment.close``), or a run that stopped or failed (its last completed generation)."""
        self._background.wait()
        if len(log) > self._plotted_rows:
            for writer in self.writers:
                writer(True)
            self.plot(log)
