"""A sweep's grid: seeds x settings, each run a validated config with a directory name.

``--seeds 1-3,7`` and ``--set optimizer.sigma=0.1,0.3`` (repeatable) expand to every combination.
Each value is read as JSON where it parses (``0.1``, ``true``, ``[4, 4]``, ``null``) and as a
plain string otherwise (``tanh``), put at its dotted key of the config file's data, and the whole
config is validated like the file, so a wrong key or value is one line naming the field.
A value ``@FILE.json`` is the JSON in that file, and names its directory by the file's stem: with
``--set optimizer=@pgpe.json,@snes.json`` each run's whole optimizer section is one of the files,
each with its own options (``optimizer=pgpe/seed-3``).
A run's directory is ``<settings>/seed-<n>`` under the sweep directory, named by the settings
that take more than one value, e.g. ``optimizer.sigma=0.1/seed-3`` (``base/seed-3`` when none
does). Inline JSON objects are named by what tells them apart: their ``type`` where it alone
does (``--set 'optimizer={"type": "SNES"},{"type": "PGPE"}'`` gives ``optimizer=SNES``), else
each leaf that differs (``optimizer=sigma=0.1+bounds.low=-1``). A run directory an earlier release
named by the object's JSON text is resumed where it is.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
import re
from pathlib import Path
from typing import Any

from neuro_evolution.config.overrides import (  # noqa: F401 (re-exported: the sweep's names)
    Setting,
    file_value,
    parse_setting,
    parse_value,
    read_config_data,
    set_dotted,
    split_values,
    value_text,
    with_settings,
)
from neuro_evolution.config.tree import ExperimentConfig, parse_config
from neuro_evolution.support.console import plural
from neuro_evolution.support.errors import ConfigError, UserError

BASE_NAME = "base"  # the settings directory of a sweep without --set
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+,\[\]\-]")


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """One run of a sweep: its name (directory relative to the sweep) and its config."""

    name: str
    settings: tuple[tuple[str, Any], ...]  # (key, value) of every --set, in command order
    seed: int
    config: ExperimentConfig
    legacy_name: str = ""  # the directory an earlier release gave this run, where it differs


def parse_seeds(text: str) -> list[int]:
    """``"1-3,7"`` -> ``[1, 2, 3, 7]`` (order kept, duplicates refused)."""
    seeds: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if match is None:
            raise UserError(f"--seeds: {part.strip()!r} is not N or N-M (e.g. --seeds 1-10,15)")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            raise UserError(f"--seeds: {part.strip()!r} runs backwards; write {last}-{first}")
        seeds.extend(range(first, last + 1))
    duplicated = sorted(seed for seed, n in collections.Counter(seeds).items() if n > 1)
    if duplicated:
        raise UserError(f"--seeds: seed {duplicated[0]} is given twice")
    return seeds


def settings_name(settings: tuple[tuple[str, str], ...]) -> str:
    """The directory of a combination of settings (key, value as text), e.g.
    ``optimizer.sigma=0.1``."""
    if not settings:
        return BASE_NAME
    text = ",".join(f"{key}={value}" for key, value in settings)
    return _UNSAFE.sub("_", text)


def parse_grid_config(
    run: dict[str, Any], settings: list[Setting], varying: tuple[tuple[str, str], ...]
) -> ExperimentConfig:
    """One run's config; a refusal names the run's settings, and where a ``--set X.type``
    leaves the section's other keys behind, how to give each type its own section."""
    try:
        return parse_config(run)
    except ConfigError as error:
        message = error.message
        if varying:
            message += f" (the run {settings_name(varying)})"
        for setting in settings:
            section, _, last = setting.key.rpartition(".")
            if last == "type" and section and error.path.startswith(section + "."):
                message += (
                    f"; to compare types each with its own options, give whole sections: "
                    f"--set {section}=@first.json,@second.json (docs/guide/sweeps.md)"
                )
        raise ConfigError(error.path, message) from None


def old_names(settings: list[Setting], indices: tuple[int, ...]) -> tuple[tuple[str, str], ...]:
    """The varying settings as an earlier release named them (inline JSON objects verbatim)."""
    return tuple((s.key, s.legacy_name(i)) for s, i in zip(settings, indices) if len(s.values) > 1)


def in_existing_directories(plans: list[RunPlan], directory: Path) -> list[RunPlan]:
    """``plans``, each run whose directory an earlier release named otherwise kept there (so
    the sweep's command, run again, resumes it)."""
    return [
        dataclasses.replace(plan, name=plan.legacy_name)
        if plan.legacy_name
        and (directory / plan.legacy_name).is_dir()
        and not (directory / plan.name).exists()
        else plan
        for plan in plans
    ]


def expand_grid(data: dict[str, Any], settings: list[Setting], seeds: list[int]) -> list[RunPlan]:
    """Every (settings, seed) run of the grid, each config validated (ConfigError on a bad one)."""
    keys = [s.key for s in settings]
    if len(set(keys)) != len(keys):
        raise UserError("--set: a key is given twice; list its values in one --set KEY=V1,V2")
    plans = []
    for indices in itertools.product(*(range(len(s.values)) for s in settings)):
        chosen = tuple((s.key, s.values[i]) for s, i in zip(settings, indices))
        varying = tuple((s.key, s.name(i)) for s, i in zip(settings, indices) if len(s.values) > 1)
        for seed in seeds:
            run = with_settings(data, chosen)
            run["random_seed"] = seed
            config = parse_grid_config(run, settings, varying)
            name = f"{settings_name(varying)}/seed-{seed}"
            legacy = f"{settings_name(old_names(settings, indices))}/seed-{seed}"
            plans.append(RunPlan(name, chosen, seed, config, "" if legacy == name else legacy))
    counts = collections.Counter(plan.name for plan in plans)
    clash = next((name for name, n in counts.items() if n > 1), None)
    if clash is not None:
        raise UserError(f"--set: two settings give the same directory name {clash!r}")
    return plans


MAX_RUNS = 1000  # a sweep of more runs needs --yes


def run_count(settings: list[Setting], seeds: list[int]) -> int:
    """How many runs the grid makes: seeds x the product of the settings' value counts."""
    return len(seeds) * math.prod(len(setting.values) for setting in settings)


def check_run_count(settings: list[Setting], seeds: list[int], confirmed: bool) -> int:
    """The run count; a UserError past :data:`MAX_RUNS` unless ``confirmed`` (``--yes``)."""
    count = run_count(settings, seeds)
    if count > MAX_RUNS and not confirmed:
        combinations = count // len(seeds)
        raise UserError(
            f"--seeds/--set: this sweep makes {count} runs ({plural(len(seeds), 'seed')} x "
            f"{plural(combinations, 'setting')}), more than {MAX_RUNS}; pass --yes to make them "
            "all, or narrow --seeds or --set"
        )
    return count
