"""Exploit: a run takes another run's exact checkpoint, with its own explored settings.

The rule for how a changed setting reaches a copied run: its optimizer (and every other part
of its state) is built from the new config and then given the donor's state, as a resume does.
A setting read every generation (a learning rate, a mutation power, a population size drawn
anew each generation, a novelty weight, an env kwarg) therefore takes effect at once, and the
state is the donor's exactly. A setting that also sets state entries at the start (CMA-ES's
``sigma`` sets its step size, OPENAI_ES's ``sigma`` its fixed stdev) puts the new config's start
values into those entries, and only those.

Which entries a setting sets is found at start-up: the run's parts are built with each value the
setting can take and their states compared. A setting is refused when it changes the brain's
template, the entries or shapes of a state (also after 2 made-up generations: MU_ES's ``mu``
sizes the parents it keeps), sets an entry to values that are not one constant (drawn values or
a generator state, which a copied run would lose), or when one value's optimizer cannot continue
another's running state.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.config.tree import ExperimentConfig, config_to_dict, parse_config
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.optimizers.base import Evaluations, Optimizer
from neuro_evolution.optimizers.factory import make_optimizer
from neuro_evolution.pbt.space import ExploredSetting, spec_error, with_values
from neuro_evolution.run.checkpoint import (
    CHECKPOINT_DIR,
    BoundaryState,
    checkpoint_name,
    encode_state,
    experiment_parts,
)
from neuro_evolution.run.directory import CONFIG_FILE
from neuro_evolution.run.experiment import Experiment, build_template
from neuro_evolution.run.lock import LOCK_FILE, RunLock
from neuro_evolution.run.resume import load_latest_checkpoint, template_states_equal
from neuro_evolution.run.status import STATUS_FILE, read_status, status_data
from neuro_evolution.support.atomic import atomic_write_bytes, atomic_write_json
from neuro_evolution.support.seeds import optimizer_seed

# part -> the state entries an explored setting sets at the start
SeededEntries = dict[str, tuple[str, ...]]


def fresh_parts(config: ExperimentConfig) -> dict[str, dict[str, Any]]:
    """The state of every part of a new run of ``config`` (nothing is evaluated)."""
    experiment = Experiment(config, handler=SequentialHandler())
    try:
        return experiment_parts(experiment)
    finally:
        experiment.close()


def template_genome_size(config: ExperimentConfig) -> int:
    return build_template(config).genome_size


def told(optimizer: Optimizer, generations: int = 2) -> Optimizer:
    """``optimizer`` after ``generations`` asks, each told a made-up fitness (its rank)."""
    for _ in range(generations):
        genomes = optimizer.ask()
        fitness = np.arange(len(genomes), dtype=np.float64)
        hall_of_fame = HallOfFame(3, optimizer.genome_size)
        hall_of_fame.update(genomes, fitness, optimizer.generation, None)
        seeds = np.zeros(len(genomes), dtype=np.int64)
        optimizer.tell(Evaluations(fitness, hall_of_fame, None, seeds, optimizer.generation))
    return optimizer


def running_optimizer(config: ExperimentConfig, genome_size: int) -> Optimizer | None:
    """An optimizer of ``config`` that has run 2 made-up generations; None when it cannot run
    them without real evaluations (e.g. it needs per-episode measures)."""
    optimizer = make_optimizer(config.optimizer, genome_size, optimizer_seed(config.random_seed))
    try:
        return told(optimizer)
    except Exception:
        return None


def check_running_states(
    key: str, configs: list[ExperimentConfig], genome_size: int, seeded: tuple[str, ...]
) -> None:
    """A copied run's optimizer must continue the donor's *running* state: the states after a
    few generations have the same entries and shapes for every value of setting ``key``, and
    each value's optimizer continues the first value's state (its ``seeded`` entries set)."""
    running = [running_optimizer(config, genome_size) for config in configs]
    if running[0] is None or any(optimizer is None for optimizer in running):
        return
    donor = running[0].state()
    for config, optimizer in zip(configs[1:], running[1:]):
        assert optimizer is not None
        check_shapes(key, donor, optimizer.state())
        state = dict(donor)
        fresh = make_optimizer(config.optimizer, genome_size, optimizer_seed(config.random_seed))
        state.update({entry: fresh.state()[entry] for entry in seeded})
        try:
            fresh.load_state(state)
            told(fresh, 1)
        except Exception as error:
            raise spec_error(
                key,
                f"a run with {key} changed cannot continue the donor's optimizer state "
                f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}); "
                "explore another setting",
            ) from None


def constant(value: Any) -> bool:
    """Whether ``value`` is a scalar or an array holding one value throughout."""
    array = np.asarray(value)
    return array.size <= 1 or bool(np.all(array == array.flat[0]))


def check_shapes(key: str, donor: Mapping[str, Any], other: Mapping[str, Any]) -> None:
    """Refuse setting ``key`` when the optimizer states of two of its values, after running,
    differ in their entries or in an entry's shape."""
    if donor.keys() != other.keys():
        changed = sorted(donor.keys() ^ other.keys())[0]
        raise spec_error(
            key,
            f"changes which entries a running optimizer's state holds ({changed!r}), so a copied "
            "run cannot keep the donor's state; explore another setting",
        )
    for entry in donor:
        a, b = np.asarray(donor[entry]), np.asarray(other[entry])
        if a.shape != b.shape:
            raise spec_error(
                key,
                f"changes the shape of a running optimizer's state {entry!r} ({a.shape} vs "
                f"{b.shape}), so a copied run cannot keep the donor's state; explore another "
                "setting",
            )


def part_entries(
    key: str, part: str, base: Mapping[str, Any], other: Mapping[str, Any]
) -> tuple[str, ...]:
    """The entries of state ``part`` whose start values differ between two values of setting
    ``key``; a ConfigError when a copied run could not keep the donor's state."""
    if base.keys() != other.keys():
        changed = sorted(base.keys() ^ other.keys())[0]
        raise spec_error(
            key,
            f"changes which entries the {part} state holds ({changed!r}), so a copied run "
            "cannot keep the donor's state; explore another setting",
        )
    entries = []
    for entry in base:
        a, b = np.asarray(base[entry]), np.asarray(other[entry])
        if a.shape != b.shape or a.dtype != b.dtype:
            raise spec_error(
                key,
                f"changes the shape of the {part} state {entry!r} ({a.shape} vs {b.shape}), so a "
                "copied run cannot keep the donor's state; explore another setting",
            )
        if np.array_equal(a, b):
            continue
        if not (constant(a) and constant(b)):
            raise spec_error(
                key,
                f"sets the {part} state {entry!r} to drawn values at the start, which a copied "
                "run would lose; explore another setting",
            )
        entries.append(entry)
    return tuple(entries)


def seeded_entries(setting: ExploredSetting, data: dict[str, Any]) -> SeededEntries:
    """The state entries ``setting`` sets at the start, over every value it can take."""
    configs = [parse_config(with_values(data, {setting.key: v})) for v in setting.candidates()]
    parts = [fresh_parts(config) for config in configs]
    found: dict[str, set[str]] = {}
    base = parts[0]
    for other in parts[1:]:
        if base.keys() != other.keys():
            raise spec_error(setting.key, "adds or removes a part of the run's state")
        if not template_states_equal(base["template"], other["template"]):
            raise spec_error(
                setting.key,
                "changes the brain's template (genome layout or masks), so a copied run "
                "cannot keep the donor's genomes; explore another setting",
            )
        for part in base:
            if part != "template":
                found.setdefault(part, set()).update(
                    part_entries(setting.key, part, base[part], other[part])
                )
    seeded = {part: tuple(sorted(entries)) for part, entries in found.items() if entries}
    check_running_states(
        setting.key, configs, template_genome_size(configs[0]), seeded.get("optimizer", ())
    )
    return seeded


def merge_entries(all_entries: list[SeededEntries]) -> SeededEntries:
    """The union of several settings' seeded entries."""
    merged: dict[str, set[str]] = {}
    for entries in all_entries:
        for part, names in entries.items():
            merged.setdefault(part, set()).update(names)
    return {part: tuple(sorted(names)) for part, names in sorted(merged.items())}


def donor_files(donor: Path) -> list[Path]:
    """The donor's result files a copy takes (its checkpoints and status are written anew)."""
    skipped = {LOCK_FILE, STATUS_FILE, CONFIG_FILE, CHECKPOINT_DIR}
    return sorted(
        path
        for path in donor.rglob("*")
        if path.is_file()
        and path.relative_to(donor).parts[0] not in skipped
        and not path.name.endswith(".tmp")
    )


def clear_run(path: Path) -> None:
    """Delete what run directory ``path`` holds, its lock file aside."""
    for entry in path.iterdir():
        if entry.name == LOCK_FILE:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def copied_state(
    donor: Path, config: ExperimentConfig, seeded: SeededEntries
) -> tuple[BoundaryState, Path]:
    """The donor's latest checkpointed state with the ``seeded`` entries set by ``config``'s
    start values, and the donor's checkpoint file."""
    checkpoint, _ = load_latest_checkpoint(donor, read_status(donor))
    parts = {part: dict(state) for part, state in checkpoint.parts.items()}
    if seeded:
        fresh = fresh_parts(config)
        for part, entries in seeded.items():
            for entry in entries:
                parts[part][entry] = fresh[part][entry]
    state = BoundaryState(checkpoint.generation, checkpoint.wall_time, checkpoint.log, parts)
    return state, checkpoint.path


def copy_run(
    donor: Path, recipient: Path, config: ExperimentConfig, seeded: SeededEntries
) -> tuple[Path, int]:
    """Make run directory ``recipient`` the donor's run at its latest readable checkpoint,
    continuing with ``config`` (the donor's config with explored settings); returns the donor's
    checkpoint and its generation.
    Every file is written atomically; repeating a copy that was cut short gives the same files."""
    state, source = copied_state(donor, config, seeded)
    data = encode_state(config, state)
    lock = RunLock.acquire(recipient, "neuro_evolution.pbt")
    try:
        clear_run(recipient)
        for path in donor_files(donor):
            target = recipient / path.relative_to(donor)
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, path.read_bytes())
        (recipient / CHECKPOINT_DIR).mkdir(exist_ok=True)
        name = f"{CHECKPOINT_DIR}/{checkpoint_name(state.generation)}"
        atomic_write_bytes(recipient / name, data)
        entry = {
            "file": name,
            "generation": state.generation,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "wall_time": state.wall_time,
        }
        atomic_write_json(recipient / CONFIG_FILE, config_to_dict(config))
        status = status_data(config, state.generation, state.wall_time, [entry])
        atomic_write_json(recipient / STATUS_FILE, status)  # last: it names a complete run
    finally:
        lock.release()
    return source, state.generation


def same_data(a: Any, b: Any) -> bool:
    """Whether two JSON-like values are equal as JSON."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
