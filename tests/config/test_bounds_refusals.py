"""Bounds a run cannot keep, and an optimizer type in the wrong case, are refused as the config
is read: exit code 2, one line on stderr naming the field and the fix, no traceback, no run
directory. Real ``train`` processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import small_config

from neuro_evolution.config.tree import parse_config

CMA = {"type": "CMA_ES", "population_size": 6, "sigma": 0.4}


def refused(data: dict[str, Any], directory: Path) -> str:
    """The one stderr line of ``train`` on ``data``, which must exit 2 and write no run."""
    config = directory / "config.json"
    config.write_text(json.dumps(data))
    done = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", str(config), "--out", "run"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert not (directory / "run").exists() and not (directory / "runs").exists()
    return lines[0].removeprefix("neuro_evolution.train: error: ")


@pytest.mark.parametrize(
    ("optimizer", "line"),
    [
        (
            {**CMA, "center_init": 3, "bounds": {"low": -1, "high": 1}},
            "optimizer.center_init: the start point 3 lies outside optimizer.bounds [-1, 1]; set"
            " center_init within [-1, 1] or widen the bounds",
        ),
        (  # the old name is read as center_init, and named so
            {**CMA, "initial_centroid": -1.5, "bounds": {"low": -1, "high": 1}},
            "optimizer.center_init: the start point -1.5 lies outside optimizer.bounds [-1, 1];",
        ),
        (  # CMA's null start point is 0
            {**CMA, "bounds": {"low": 0.5, "high": 2}},
            "optimizer.center_init: the start point 0 lies outside optimizer.bounds [0.5, 2];",
        ),
        (
            {"type": "XNES", "center_init": 0.5, "bounds": {"low": [-1, 0.75, -1], "high": 2}},
            "optimizer.center_init: the start point 0.5 lies outside optimizer.bounds at gene 1"
            " [0.75, 2]; set center_init within [0.75, 2] or widen the bounds",
        ),
        (
            {"type": "SNES", "bounds": {"low": [0.5, -1], "high": [1, 0.25]}},
            "optimizer.center_init: the start point 0 lies outside optimizer.bounds at gene 0"
            " [0.5, 1]; no one value lies inside every gene's bounds: widen them",
        ),
    ],
)
def test_a_start_point_outside_the_bounds_is_refused(
    optimizer: dict[str, Any], line: str, tmp_path: Path
) -> None:
    """Every evaluated genome would be repaired while the method starts outside the box."""
    assert refused(small_config(optimizer=optimizer), tmp_path).startswith(line)


def test_a_start_point_on_a_bound_is_accepted() -> None:
    """The box is closed: center_init equal to a bound is inside."""
    bounds = {"low": -1, "high": 1}
    config = parse_config(small_config(optimizer={**CMA, "center_init": 1, "bounds": bounds}))
    assert config.optimizer.center_init == 1


@pytest.mark.parametrize(
    ("bounds", "line"),
    [
        (
            {"low": -1e999, "high": 1},
            "optimizer.bounds.low: must be a finite number, got -inf; give a finite value",
        ),
        (
            {"low": -1, "high": [1, 1e999]},
            "optimizer.bounds.high[1]: must be a finite number, got inf; give a finite value",
        ),
    ],
)
def test_an_infinite_bound_is_refused_as_not_finite(
    bounds: dict[str, Any], line: str, tmp_path: Path
) -> None:
    """JSON reads 1e999 as infinity: the line says a bound must be finite, not "float or
    tuple"."""
    assert refused(small_config(optimizer={**CMA, "bounds": bounds}), tmp_path) == line


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"optimizer": {"type": "xnes"}}, "optimizer.type: unknown optimizer type 'xnes'. Did you"
         " mean `XNES`? Known types: "),
        ({"optimizer": {"type": "cmaes"}}, "optimizer.type: unknown optimizer type 'cmaes'. Did"
         " you mean `CMA_ES`?"),
        ({"brain": {"type": "ctrnn"}}, "brain.type: unknown brain type 'ctrnn'. Did you mean"
         " `CTRNN`?"),
    ],
)  # fmt: skip
def test_a_type_in_the_wrong_case_gets_a_hint(
    changes: dict[str, Any], line: str, tmp_path: Path
) -> None:
    assert refused(small_config(**changes), tmp_path).startswith(line)
