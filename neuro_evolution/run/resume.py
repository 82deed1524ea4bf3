"""Exact resume: ``resume_experiment(run_dir)`` continues a run from its latest usable checkpoint.

The resumed run is identical to an uninterrupted one: the optimizer (with its RNG states), hall
of fame, template (masks restored, not regenerated), novelty archive, generation counter, log and
wall time come from the checkpoint; episode seeds derive from (seed, generation, index).

Checks, in order, each a one-line :class:`ResumeError` or :class:`ResumeWarning`:
``training_status.json`` missing / not JSON / newer or unknown format version (refused);
library versions differ (warning each); latest checkpoint missing (refused); a corrupted
checkpoint (unreadable, wrong keys, SHA-256 mismatch) falls back to the previous one (warning);
``config.json`` changed against the checkpoint's resolved config (refused, listing the changed
keys; ``number_generations``, ``max_env_steps``, ``observers`` and the ``evaluation`` section
may change); the status file's config hash does not match (refused); the restored template
differs from a fresh one (warning).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.tree import (
    ExperimentConfig,
    config_to_dict,
    parse_config,
    parse_run_config,
)
from neuro_evolution.core.schema import flatten
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.run.checkpoint import (
    CHECKPOINT_DIR,
    STATE_PARTS,
    Checkpoint,
    CorruptCheckpoint,
    read_checkpoint,
)
from neuro_evolution.run.directory import CONFIG_FILE, LogRow, write_error
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.lock import RunLock
from neuro_evolution.run.status import (
    CONFIG_HASH_IGNORES,
    STATUS_FILE,
    read_status,
    run_config_hash,
    stored_config_hash,
    warn,
    warn_about_kernels,
    warn_about_versions,
)
from neuro_evolution.support.errors import ConfigError, ResumeError

Keep = Literal["keep"]
KEEP: Keep = "keep"  # an override left out: the run's own value stays


def changed_keys(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Dotted keys whose values differ, outside the sections a resume may change."""
    old, new = flatten(before), flatten(after)
    return sorted(
        key
        for key in old.keys() | new.keys()
        if key.split(".")[0] not in CONFIG_HASH_IGNORES and old.get(key) != new.get(key)
    )


def template_states_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two ``BrainTemplate.to_state()`` dicts hold the same values."""
    return a.keys() == b.keys() and all(
        np.array_equal(np.asarray(a[key]), np.asarray(b[key])) for key in a
    )


def load_latest_checkpoint(run_dir: Path, status: dict[str, Any]) -> tuple[Checkpoint, list[dict]]:
    """The newest usable checkpoint listed in the status, and the entries up to it."""
    entries = sorted(status["checkpoints"], key=lambda e: e.get("generation", -1))
    latest = run_dir / status["latest_checkpoint"]
    if not latest.is_file():
        raise ResumeError(
            f"{latest}: missing, but {STATUS_FILE} names it as the latest checkpoint; restore "
            "the file or start the run again"
        )
    problems = []
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        path = run_dir / entry["file"]
        try:
            checkpoint = read_checkpoint(path, entry.get("sha256"))
            if checkpoint.generation != entry.get("generation"):
                raise CorruptCheckpoint(
                    f"holds generation {checkpoint.generation}, the status says "
                    f"{entry.get('generation')}"
                )
        except CorruptCheckpoint as error:
            problems.append(f"{path.name}: {error}")
            if index > 0:
                warn(f"{path}: {error}; falling back to {entries[index - 1]['file']}")
            continue
        return checkpoint, entries[: index + 1]
    raise ResumeError(f"{run_dir}: no usable checkpoint ({'; '.join(problems)})")


def read_run_config(run_dir: Path) -> dict[str, Any]:
    """The run's ``config.json``, resolved (validated, every default filled in)."""
    path = run_dir / CONFIG_FILE
    try:
        return config_to_dict(parse_run_config(json.loads(path.read_text())))
    except FileNotFoundError:
        raise ResumeError(f"{path}: missing; the run directory is incomplete") from None
    except json.JSONDecodeError as error:
        raise ResumeError(f"{path}: invalid JSON at line {error.lineno}: {error.msg}") from None
    except ConfigError as error:
        raise ResumeError(f"{path}: {error}") from None


def resolved_stored_config(checkpoint: Checkpoint) -> dict[str, Any]:
    """The checkpoint's config resolved by this release: a field added since the checkpoint was
    written takes its default, as it does in ``config.json``."""
    try:
        return config_to_dict(parse_run_config(checkpoint.config))
    except ConfigError as error:
        raise ResumeError(f"{checkpoint.path}: its stored config: {error}") from None


def resumed_config(
    run_dir: Path,
    checkpoint: Checkpoint,
    status: dict[str, Any],
    number_generations: int | None,
    evaluation: Mapping[str, Any] | None,
    max_env_steps: int | None | Keep = KEEP,
    max_evaluations: int | None | Keep = KEEP,
) -> ExperimentConfig:
    """The run's config after checking it against the checkpoint, with the allowed overrides."""
    data = read_run_config(run_dir)
    changed = changed_keys(resolved_stored_config(checkpoint), data)
    if changed:
        raise ResumeError(
            f"{run_dir / CONFIG_FILE}: changed since the checkpoint ({', '.join(changed)}); a "
            "resume may only change number_generations (--generations), max_env_steps, "
            "max_evaluations, observers and the evaluation section (--handler, --workers, "
            "...): undo the change or start a new run"
        )
    if number_generations is not None:
        data["number_generations"] = number_generations
    if max_env_steps != KEEP:
        data["max_env_steps"] = max_env_steps
    if max_evaluations != KEEP:
        data["max_evaluations"] = max_evaluations
    data["evaluation"] = {**data["evaluation"], **(evaluation or {})}
    config = parse_config(data)
    written_with = {run_config_hash(config), stored_config_hash(checkpoint.config)}
    if status["config_hash"] not in written_with:
        raise ResumeError(
            f"{run_dir / STATUS_FILE}: its config_hash does not match {CONFIG_FILE} (was the "
            "status file edited or copied from another run?)"
        )
    if config.number_generations < checkpoint.generation:
        raise ResumeError(
            f"number_generations {config.number_generations} is below the "
            f"{checkpoint.generation} generations already run: pass --generations "
            f">= {checkpoint.generation}"
        )
    return config


def restore(experiment: Experiment, checkpoint: Checkpoint) -> None:
    """Put the checkpoint's state into a freshly constructed experiment."""
    restored = BrainTemplate.from_state(checkpoint.parts["template"])
    fresh = experiment.template
    if restored.genome_size != fresh.genome_size:
        raise ResumeError(
            f"{checkpoint.path}: its template has genome size {restored.genome_size}, this "
            f"config builds {fresh.genome_size}; the brain code changed, start a new run"
        )
    if not template_states_equal(restored.to_state(), fresh.to_state()):
        warn(
            f"{checkpoint.path}: the saved template differs from a freshly built one for this "
            "config (brain code changed?); continuing with the saved template"
        )
    experiment.template = restored
    for name in STATE_PARTS:
        owner = getattr(experiment, name, None)
        state = checkpoint.parts.get(name)
        if (owner is None) != (state is None):
            has, lacks = (
                ("checkpoint", "experiment") if owner is None else ("experiment", "checkpoint")
            )
            raise ResumeError(f"{checkpoint.path}: the {has} has {name} state, the {lacks} none")
        if owner is not None:
            owner.load_state(state)
    experiment.generation = checkpoint.generation
    experiment.log = [LogRow.from_dict(row) for row in checkpoint.log]
    experiment.elapsed_before = checkpoint.wall_time


def remove_stale_temporaries(run_dir: Path) -> None:
    """Delete temporary files a crash left half-written (they are never read)."""
    for pattern in (f"{CHECKPOINT_DIR}/.gen-*.npz.*.tmp", f".{STATUS_FILE}.*.tmp"):
        for path in run_dir.glob(pattern):
            path.unlink(missing_ok=True)


def resume_experiment(
    run_dir: str | Path,
    number_generations: int | None = None,
    handler: EvaluationHandler | None = None,
    evaluation: Mapping[str, Any] | None = None,
    quiet: bool = True,
    should_stop: Callable[[], bool] | None = None,
    max_env_steps: int | None | Keep = KEEP,
    max_evaluations: int | None | Keep = KEEP,
) -> Experiment:
    """An experiment continuing ``run_dir`` exactly where its latest usable checkpoint left it.

    ``number_generations`` extends (or sets) the run's end, ``max_env_steps`` and
    ``max_evaluations`` its budgets (None: none; default: the run's own); ``evaluation``
    overrides fields of the evaluation section (or pass a ready ``handler``). The experiment
    writes into ``run_dir`` and checkpoints as before; ``experiment.done`` is already true for
    a finished run.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ResumeError(f"{run_dir}: no such run directory")
    unwritable = write_error(run_dir)
    if unwritable is not None:  # a run continues in its own directory: nothing would be saved
        raise ResumeError(
            f"{run_dir}: cannot write in the run directory ({unwritable.strerror}); make it "
            "writable (e.g. remount read-write), or copy it to a writable folder and resume "
            "the copy"
        )
    lock = RunLock.acquire(run_dir)  # before anything is read: one writer per run
    try:
        return continue_run(
            run_dir,
            lock,
            number_generations,
            handler,
            evaluation,
            quiet,
            should_stop,
            max_env_steps,
            max_evaluations,
        )
    except BaseException:
        lock.release()
        raise


def continue_run(
    run_dir: Path,
    lock: RunLock,
    number_generations: int | None,
    handler: EvaluationHandler | None,
    evaluation: Mapping[str, Any] | None,
    quiet: bool,
    should_stop: Callable[[], bool] | None,
    max_env_steps: int | None | Keep = KEEP,
    max_evaluations: int | None | Keep = KEEP,
) -> Experiment:
    """:func:`resume_experiment` once ``run_dir`` is locked (``lock`` goes to the experiment)."""
    status = read_status(run_dir)
    warn_about_versions(status)
    warn_about_kernels(status, f"{run_dir}")
    checkpoint, entries = load_latest_checkpoint(run_dir, status)
    config = resumed_config(
        run_dir, checkpoint, status, number_generations, evaluation, max_env_steps, max_evaluations
    )
    experiment = Experiment(config, handler=handler, quiet=quiet)
    try:
        restore(experiment, checkpoint)
        remove_stale_temporaries(run_dir)
        experiment.attach_run_directory(
            run_dir, should_stop=should_stop, resumed=entries, lock=lock
        )
        assert experiment.run_directory is not None
        experiment.run_directory.write_generation(
            experiment.log, experiment.hall_of_fame, experiment.template
        )
    except BaseException:
        experiment.close()
        raise
    return experiment
