"""``training_status.json``: the versioned index of a run's checkpoints, written after each one.

It sits at the run directory's root and is always written *last* (after the checkpoint it names
is in place), so it never points at a file that is not complete. Fields::

    format_version     STATUS_FORMAT_VERSION; a newer or unknown one is refused on resume
    versions           neuro_evolution, numpy, deap, gymnasium and Python versions that wrote it;
                       a difference on resume is a one-line warning each
    kernels            numpy's dispatched kernels and the BLAS core type of the process that
                       wrote it (support/kernels.py); other kernels on resume, replay or export
                       are a one-line warning (absent in files of earlier releases)
    config_hash        SHA-256 of the resolved config without CONFIG_HASH_IGNORES (the evaluation
                       section: every handler gives identical results; number_generations: a run
                       may be extended, and so may its budgets max_env_steps and max_evaluations;
                       observers: they only read the log)
    generation         generations completed at the latest checkpoint
    number_generations the run's target when the status was written
    finished           whether the run had reached number_generations
    wall_time          seconds trained so far, over all sessions
    latest_checkpoint  path of the newest checkpoint, relative to the run directory
    checkpoints        every kept checkpoint, oldest first: file, generation, sha256, bytes,
                       wall_time
"""

from __future__ import annotations

import json
import platform
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import neuro_evolution
from neuro_evolution.config.tree import ExperimentConfig, config_hash, data_hash
from neuro_evolution.support.errors import ResumeError, ResumeWarning
from neuro_evolution.support.kernels import kernel_set, other_kernels_line

STATUS_FILE = "training_status.json"
STATUS_FORMAT_VERSION = 1
CONFIG_HASH_IGNORES = (
    "evaluation",
    "number_generations",
    "max_env_steps",
    "max_evaluations",
    "observers",
)
STATUS_FIELDS = (
    "format_version",
    "versions",
    "config_hash",
    "generation",
    "latest_checkpoint",
    "checkpoints",
)


def warn(message: str) -> None:
    """Issue a one-line :class:`ResumeWarning` (the train command prints it as ``warning:``)."""
    warnings.warn(message, ResumeWarning, stacklevel=3)


def library_versions() -> dict[str, str]:
    """Versions of everything a run's numbers depend on."""
    versions = {"neuro_evolution": neuro_evolution.__version__}
    for name in ("numpy", "deap", "gymnasium"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    versions["python"] = platform.python_version()
    return versions


def run_config_hash(config: ExperimentConfig) -> str:
    """The config hash stored in the status file (evaluation and number_generations ignored)."""
    return config_hash(config, ignore=CONFIG_HASH_IGNORES)


def stored_config_hash(data: dict[str, Any]) -> str:
    """:func:`run_config_hash` of a config as a checkpoint stored it: the hash it was written
    with, even when a later release added fields (resolving it would fill them in)."""
    return data_hash(data, ignore=CONFIG_HASH_IGNORES)


def status_data(
    config: ExperimentConfig, generation: int, wall_time: float, checkpoints: list[dict[str, Any]]
) -> dict[str, Any]:
    """The content of ``training_status.json``."""
    return {
        "format_version": STATUS_FORMAT_VERSION,
        "versions": library_versions(),
        "kernels": kernel_set(),
        "config_hash": run_config_hash(config),
        "generation": generation,
        "number_generations": config.number_generations,
        "finished": generation >= config.number_generations,
        "wall_time": wall_time,
        "latest_checkpoint": checkpoints[-1]["file"],
        "checkpoints": checkpoints,
    }


def read_status(run_dir: Path) -> dict[str, Any]:
    """Read and check ``training_status.json``; every problem is a one-line :class:`ResumeError`."""
    path = run_dir / STATUS_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ResumeError(
            f"{path}: missing, so there is no checkpoint to resume from (the run stopped before "
            "its first checkpoint, or this is not a run directory): start the run again"
        ) from None
    except OSError as error:
        raise ResumeError(f"{path}: cannot read it ({error.strerror})") from None
    try:
        status = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResumeError(
            f"{path}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    if not isinstance(status, dict):
        raise ResumeError(f"{path}: must hold a JSON object, got {type(status).__name__}")
    version = status.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ResumeError(f"{path}: unknown format_version {version!r}; it cannot be resumed")
    if version > STATUS_FORMAT_VERSION:
        raise ResumeError(
            f"{path}: format_version {version} is newer than this neuro_evolution "
            f"{neuro_evolution.__version__} reads ({STATUS_FORMAT_VERSION}): upgrade "
            "neuro_evolution to resume this run"
        )
    missing = [field for field in STATUS_FIELDS if field not in status]
    if missing:
        raise ResumeError(f"{path}: lacks {', '.join(missing)}; it cannot be resumed")
    checkpoints = status["checkpoints"]
    if (
        not isinstance(checkpoints, list)
        or not checkpoints
        or not all(
            isinstance(entry, dict) and isinstance(entry.get("file"), str) for entry in checkpoints
        )
    ):
        raise ResumeError(f"{path}: 'checkpoints' must be a non-empty list of {{file: ...}}")
    if not isinstance(status["latest_checkpoint"], str):
        raise ResumeError(f"{path}: 'latest_checkpoint' must be a file name")
    return status


def warn_about_versions(status: dict[str, Any]) -> None:
    """One warning per library whose version differs from the one that wrote the run."""
    recorded = status.get("versions")
    if not isinstance(recorded, dict):
        warn(f"{STATUS_FILE}: no library versions recorded; results may differ")
        return
    for name, current in library_versions().items():
        then = recorded.get(name)
        if then != current:
            warn(
                f"{STATUS_FILE}: the run was written with {name} {then}, this is {current}; "
                "the resumed run may not match an uninterrupted one"
            )


def warn_about_kernels(status: dict[str, Any], what: str) -> None:
    """One warning where ``what`` (the run) was trained with other kernels than this process
    runs (none where the status file records no kernels)."""
    line = other_kernels_line(status.get("kernels"), what)
    if line is not None:
        warn(line)
