"""The PBT folder's two JSON files, each written atomically.

``pbt_state.json`` is the controller's state: the setup it belongs to (a hash), the intervals
completed, its generator's state, each run's current config, the copies decided at the end of
an interval and not yet made (``pending``), each interval's scores and settings, and the lineage.
It is written after every step, so a PBT killed at any moment continues where it was.

``lineage.json`` is what a person reads: for every run its seed, its start values and each copy
it made: when (generation), which run and checkpoint it copied, both scores, and what changed.
It holds no wall time, so the same config gives the same file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.support.atomic import atomic_write_json
from neuro_evolution.support.errors import UserError

STATE_FILE = "pbt_state.json"
LINEAGE_FILE = "lineage.json"
RUNS_DIR = "runs"
STATE_FORMAT_VERSION = 1


def setup_hash(experiment: dict[str, Any], section: dict[str, Any]) -> str:
    """What a PBT folder belongs to: the experiment (its evaluation and observers aside) and
    the resolved pbt section."""
    kept = {k: v for k, v in experiment.items() if k not in ("evaluation", "observers")}
    text = json.dumps({"experiment": kept, "pbt": section}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def generator_state(rng: np.random.Generator) -> dict[str, Any]:
    """A PCG64 generator's state as JSON data (exact: Python ints)."""
    return json.loads(json.dumps(rng.bit_generator.state))


def generator_from_state(state: dict[str, Any]) -> np.random.Generator:
    bit_generator = np.random.PCG64()
    bit_generator.state = state  # type: ignore[assignment]
    return np.random.Generator(bit_generator)


@dataclasses.dataclass
class PbtState:
    """The controller's state (see the module docstring)."""

    setup: str
    intervals_done: int
    generator: dict[str, Any]
    configs: dict[str, dict[str, Any]]  # run name -> its current config (resolved data)
    pending: list[dict[str, Any]] | None = None  # copies decided, not yet made
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    lineage: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        return {"format_version": STATE_FORMAT_VERSION, **dataclasses.asdict(self)}

    def write(self, folder: Path) -> None:
        """``pbt_state.json``, then ``lineage.json``."""
        atomic_write_json(folder / STATE_FILE, self.to_data())
        atomic_write_json(folder / LINEAGE_FILE, self.lineage)


def read_state(folder: Path) -> PbtState:
    """The state in ``folder`` (one-line UserErrors for a damaged or foreign file)."""
    path = folder / STATE_FILE
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise UserError(f"{path}: invalid JSON at line {error.lineno}: {error.msg}") from None
    except OSError as error:
        raise UserError(f"{path}: cannot read it ({error.strerror})") from None
    version = data.get("format_version") if isinstance(data, dict) else None
    if version != STATE_FORMAT_VERSION:
        raise UserError(f"{path}: unknown format_version {version!r}; it cannot be continued")
    fields = [field.name for field in dataclasses.fields(PbtState)]
    missing = [name for name in fields if name not in data]
    if missing:
        raise UserError(f"{path}: lacks {', '.join(missing)}; it cannot be continued")
    return PbtState(**{name: data[name] for name in fields})
