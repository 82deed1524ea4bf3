"""What a run directory says about kernels: whether it asks for the portable kernels, and the
one line where it was trained with other kernels than this process runs (support/kernels.py).

Both read the run's files leniently: a missing or unreadable file says nothing here, since the
command that reads the run reports it in its own line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neuro_evolution.run.directory import CONFIG_FILE
from neuro_evolution.run.status import STATUS_FILE
from neuro_evolution.support.kernels import kernel_text, other_kernels_line


def read_json(path: Path) -> Any:
    """The JSON in ``path``, or None where it cannot be read."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def stored_portable(run_dir: Path) -> bool:
    """Whether the run's config.json sets ``evaluation.portable_kernels``."""
    config = read_json(run_dir / CONFIG_FILE)
    evaluation = config.get("evaluation") if isinstance(config, dict) else None
    return isinstance(evaluation, dict) and evaluation.get("portable_kernels") is True


def recorded_kernels(run_dir: Path) -> dict[str, Any] | None:
    """The kernels training_status.json records (None: no status, or an earlier release's)."""
    status = read_json(run_dir / STATUS_FILE)
    kernels = status.get("kernels") if isinstance(status, dict) else None
    return kernels if isinstance(kernels, dict) else None


def run_kernels_line(run_dir: Path) -> str | None:
    """The line saying the run was trained with other kernels than this process runs."""
    return other_kernels_line(recorded_kernels(run_dir), str(run_dir))


def mixed_kernels_line(run_dirs: Iterable[Path]) -> str | None:
    """The line saying that the runs were trained with more than one kernel set (how many runs
    with each), or None where they all record one (or none)."""
    counts: dict[str, int] = {}
    for run_dir in run_dirs:
        kernels = recorded_kernels(run_dir)
        if kernels is not None:
            text = kernel_text(kernels)
            counts[text] = counts.get(text, 0) + 1
    if len(counts) < 2:
        return None
    sets = "; ".join(f"{count} with {text}" for text, count in counts.items())
    return (
        f"the runs were trained with {len(counts)} kernel sets ({sets}): runs of one config and "
        "seed may differ between them (docs/architecture.md#across-machines)"
    )
