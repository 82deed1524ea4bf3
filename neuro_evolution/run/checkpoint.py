"""Checkpoints: everything the next generation depends on, one ``.npz`` file each (no pickle).

Layout inside a run directory::

    training_status.json         the index, written last (see :mod:`training_status`)
    checkpoints/gen-000010.npz   the state after 10 generations (generation 10 runs next)

A checkpoint holds, as arrays under a ``<part>/`` prefix, the state of each part:
``optimizer/`` (``optimizer.state()``: population, strategy, its RNG states), ``hall_of_fame/``,
``template/`` (``template.to_state()``: masks are restored, never regenerated) and
``novelty/`` when the experiment has a ``novelty`` object (any attribute named in
:data:`STATE_PARTS` with ``state()``/``load_state()`` is saved and restored). Scalars of those
states and the rest go as JSON in the 0-d string array ``meta``: format version, generation,
wall time so far, the log so far, the resolved config. Episode seeds derive from (run seed,
generation, index), so no other random state exists. Files are written atomically and the
newest ``checkpoint.keep`` are kept.

No test switches live here: tests crash or pause a real train process by wrapping
``atomic_write_bytes`` / ``atomic_write_json`` of this module and ``install_checkpoints`` from
outside (``tests/fault_injection.py``).
"""

from __future__ import annotations

import copy as copy_module
import dataclasses
import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from neuro_evolution.config.tree import ExperimentConfig, config_to_dict
from neuro_evolution.run.status import (
    STATUS_FILE,
    ResumeError,
    run_config_hash,
    status_data,
)
from neuro_evolution.support.atomic import (
    atomic_write_bytes,
    atomic_write_json,
    load_npz,
    npz_bytes,
)

if TYPE_CHECKING:
    from neuro_evolution.brains.base import BrainTemplate
    from neuro_evolution.run.directory import LogRow, RunDirectory


class CheckpointedRun(Protocol):
    """What checkpoints read of a run: an :class:`~neuro_evolution.run.experiment.Experiment`
    (named by its shape, so the experiment may install its own checkpoints)."""

    config: ExperimentConfig
    template: BrainTemplate
    generation: int
    log: list[LogRow]
    run_directory: RunDirectory | None
    after_generation: list[Any]

    @property
    def wall_time(self) -> float: ...

    @property
    def done(self) -> bool: ...


CHECKPOINT_DIR = "checkpoints"
CHECKPOINT_FORMAT_VERSION = 2
# What changed in each format version, for the message that refuses an older checkpoint.
FORMAT_CHANGES = {
    2: "CMA_ES became the project's own CMA-ES (lazy eigendecomposition, new state and results); "
    "runs validate and log held-out scores, and may normalize observations",
}
# experiment attributes with state()/load_state()
STATE_PARTS = ("optimizer", "hall_of_fame", "novelty", "observation_statistics")
REQUIRED_PARTS = ("optimizer", "hall_of_fame", "template")
META_KEY = "meta"


class CorruptCheckpoint(Exception):
    """A checkpoint file cannot be used (unreadable, wrong keys, hash mismatch)."""


class TrainingStopped(Exception):
    """Raised after a generation when a stop was requested; the checkpoint is already written."""

    def __init__(self, generation: int, checkpoint: Path):
        super().__init__(f"stopped after generation {generation}; checkpoint {checkpoint}")
        self.generation = generation
        self.checkpoint = checkpoint


@dataclasses.dataclass
class Checkpoint:
    """What a checkpoint file holds, read back."""

    path: Path
    generation: int
    wall_time: float
    log: list[dict[str, Any]]
    config: dict[str, Any]
    config_hash: str
    parts: dict[str, dict[str, Any]]  # part name -> state (arrays and scalars)


def checkpoint_name(generation: int) -> str:
    """File name of the checkpoint after ``generation`` generations."""
    return f"gen-{generation:06d}.npz"


# --- encoding --------------------------------------------------------------------------------
def _split_state(part: str, state: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Arrays go to the npz under ``part/``; scalars go to JSON (exact for any int size)."""
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, Any] = {}
    for key, value in state.items():
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                raise TypeError(
                    f"{part} state {key!r}: object arrays cannot be saved without pickle"
                )
            arrays[f"{part}/{key}"] = value
        elif isinstance(value, np.generic):
            scalars[key] = value.item()
        elif value is None or isinstance(value, bool | int | float | str):
            scalars[key] = value
        else:
            raise TypeError(
                f"{part} state {key!r}: {type(value).__name__} is neither an array nor a scalar"
            )
    return arrays, scalars


def experiment_parts(experiment: CheckpointedRun) -> dict[str, dict[str, Any]]:
    """The state of every part of ``experiment`` that a checkpoint saves."""
    parts = {"template": dict(experiment.template.to_state())}
    for name in STATE_PARTS:
        owner = getattr(experiment, name, None)
        if owner is not None:
            parts[name] = dict(owner.state())
    return parts


@dataclasses.dataclass(frozen=True)
class BoundaryState:
    """What a checkpoint of one generation boundary holds, before it is encoded."""

    generation: int
    wall_time: float
    log: list[dict[str, Any]]
    parts: dict[str, dict[str, Any]]


def boundary_state(
    experiment: CheckpointedRun, wall_time: float, copy: bool = False
) -> BoundaryState:
    """``experiment``'s state now (between generations); ``copy``: deep copies, so that the next
    generation (``ask`` mutates optimizer state in place) cannot change what was captured."""
    parts = experiment_parts(experiment)
    if copy:  # the template never changes during a run: no need to copy its arrays
        parts = {k: v if k == "template" else copy_module.deepcopy(v) for k, v in parts.items()}
    log = [row.to_dict() for row in experiment.log]
    return BoundaryState(experiment.generation, wall_time, log, parts)


def encode_state(config: ExperimentConfig, state: BoundaryState) -> bytes:
    """The bytes of the checkpoint of ``state`` for a run of ``config``."""
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for part, part_state in state.parts.items():
        part_arrays, scalars[part] = _split_state(part, part_state)
        arrays.update(part_arrays)
    meta = {
        "format_version": CHECKPOINT_FORMAT_VERSION,
        "generation": state.generation,
        "wall_time": state.wall_time,
        "config_hash": run_config_hash(config),
        "config": config_to_dict(config),
        "scalars": scalars,
        "log": state.log,
    }
    arrays[META_KEY] = np.array(json.dumps(meta))
    return npz_bytes(arrays)


def encode_checkpoint(experiment: CheckpointedRun, wall_time: float) -> bytes:
    """The bytes of a checkpoint of ``experiment`` as it is now (between generations)."""
    return encode_state(experiment.config, boundary_state(experiment, wall_time))


def read_checkpoint(path: Path, sha256: str | None = None) -> Checkpoint:
    """Read a checkpoint; any problem is a :class:`CorruptCheckpoint` saying what is wrong."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CorruptCheckpoint(f"cannot read it ({error.strerror})") from None
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise CorruptCheckpoint("its SHA-256 does not match training_status.json")
    try:
        arrays = load_npz(io.BytesIO(data))
        meta = json.loads(str(arrays.pop(META_KEY)))
        check_format_version(path, meta["format_version"])
        parts: dict[str, dict[str, Any]] = {
            part: dict(values) for part, values in meta["scalars"].items()
        }
        for key, value in arrays.items():
            part, _, name = key.partition("/")
            parts.setdefault(part, {})[name] = value
        missing = [part for part in REQUIRED_PARTS if part not in parts]
        if missing:
            raise CorruptCheckpoint(f"lacks the {', '.join(missing)} state")
        return Checkpoint(
            path=path,
            generation=int(meta["generation"]),
            wall_time=float(meta["wall_time"]),
            log=list(meta["log"]),
            config=dict(meta["config"]),
            config_hash=str(meta["config_hash"]),
            parts=parts,
        )
    except (CorruptCheckpoint, ResumeError):
        raise
    except Exception as error:  # zip, npy, JSON and key errors all mean "unusable"
        raise CorruptCheckpoint(f"unreadable ({type(error).__name__}: {error})") from None


def check_format_version(path: Path, version: Any) -> None:
    """Refuse a checkpoint of an older format in one line saying what changed (a resume would
    not continue the same run); an unknown or newer one is corrupt for this version."""
    if isinstance(version, int) and 0 < version < CHECKPOINT_FORMAT_VERSION:
        changes = "; ".join(
            FORMAT_CHANGES[v] for v in range(version + 1, CHECKPOINT_FORMAT_VERSION + 1)
        )
        raise ResumeError(
            f"{path}: checkpoint format_version {version} is older than this neuro_evolution's"
            f" ({CHECKPOINT_FORMAT_VERSION}): {changes}; this run cannot be resumed, start it"
            " again"
        )
    if version != CHECKPOINT_FORMAT_VERSION:
        raise CorruptCheckpoint(f"unknown checkpoint format_version {version!r}")


# --- writing ---------------------------------------------------------------------------------
class Checkpointer:
    """The after-generation hook that writes checkpoints and the status file, and stops on request.

    ``checkpoints`` are the entries already listed in the status file (when resuming).
    ``should_stop`` is polled after every generation; when true a checkpoint is written and
    :class:`TrainingStopped` raised, which ends ``Experiment.run`` at a generation boundary.

    After a generation that is not checkpointed, the hook keeps a copy of the state at that
    boundary in memory, so that :meth:`save_completed` can write it when the next generation
    fails: a failed generation never loses a completed one.
    """

    def __init__(
        self,
        experiment: CheckpointedRun,
        checkpoints: list[dict[str, Any]] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ):
        if experiment.run_directory is None:
            raise ValueError("checkpoints need a run directory: attach one first")
        self.config = experiment.config
        self.run_dir = experiment.run_directory.path
        self.directory = self.run_dir / CHECKPOINT_DIR
        self.every = experiment.config.checkpoint.every_generations
        self.keep = experiment.config.checkpoint.keep
        self.entries: list[dict[str, Any]] = list(checkpoints or [])
        self.should_stop = should_stop or (lambda: False)
        self._unsaved: BoundaryState | None = None  # the last boundary, when not on disk

    def __call__(self, experiment: CheckpointedRun) -> None:
        stop = self.should_stop()
        if stop or experiment.done or experiment.generation % self.every == 0:
            self.write(experiment)
        else:
            self._unsaved = boundary_state(experiment, experiment.wall_time, copy=True)
        if stop and not experiment.done:  # a finished run ends normally
            raise TrainingStopped(experiment.generation, self.run_dir / self.entries[-1]["file"])

    def write(self, experiment: CheckpointedRun) -> Path:
        """Write the checkpoint of the current generation, then the status, then prune."""
        return self._write(boundary_state(experiment, experiment.wall_time))

    def save_completed(self) -> Path | None:
        """The checkpoint of the last completed generation, written now if it was not yet
        (call it when a generation failed); None when no generation was ever completed."""
        if self._unsaved is not None:
            self._write(self._unsaved)
        return self.latest

    @property
    def latest(self) -> Path | None:
        """The newest checkpoint file listed in the status file, if any."""
        return self.run_dir / self.entries[-1]["file"] if self.entries else None

    def _write(self, state: BoundaryState) -> Path:
        self.directory.mkdir(exist_ok=True)
        generation = state.generation
        data = encode_state(self.config, state)
        path = self.directory / checkpoint_name(generation)
        atomic_write_bytes(path, data)
        entry = {
            "file": f"{CHECKPOINT_DIR}/{path.name}",
            "generation": generation,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "wall_time": state.wall_time,
        }
        kept = [e for e in self.entries if e.get("generation") != generation] + [entry]
        kept.sort(key=lambda e: e["generation"])
        self.entries = kept[-self.keep :]
        status = status_data(self.config, generation, state.wall_time, self.entries)
        atomic_write_json(self.run_dir / STATUS_FILE, status)
        self.prune()
        self._unsaved = None
        return path

    def prune(self) -> None:
        """Delete checkpoint files that the status file no longer lists."""
        listed = {Path(e["file"]).name for e in self.entries}
        for path in self.directory.glob("gen-*.npz"):
            if path.name not in listed:
                path.unlink(missing_ok=True)


def checkpointer_of(experiment: CheckpointedRun) -> Checkpointer | None:
    """The :class:`Checkpointer` installed on ``experiment`` (None without checkpoints)."""
    for hook in experiment.after_generation:
        if isinstance(hook, Checkpointer):
            return hook
    return None


def install_checkpoints(
    experiment: CheckpointedRun,
    checkpoints: list[dict[str, Any]] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Checkpointer:
    """Make ``experiment`` checkpoint into its run directory after its generations; a
    Checkpointer already installed (``attach_run_directory`` installs one) is replaced in its
    place, so a run never writes each checkpoint twice."""
    checkpointer = Checkpointer(experiment, checkpoints, should_stop)
    hooks = experiment.after_generation
    index = next((i for i, hook in enumerate(hooks) if isinstance(hook, Checkpointer)), None)
    if index is None:
        hooks.append(checkpointer)
    else:
        hooks[index] = checkpointer
    return checkpointer
