"""Bad inputs that can be seen at start-up are refused there: exit code 2, one line on stderr
naming what to fix, no traceback, and no run directory (or an unchanged one). Real ``train``
processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import small_config

CARTPOLE = Path(__file__).resolve().parents[1] / "configs" / "cartpole.json"


def train(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def refused(args: list[str], cwd: Path, timeout: float = 300) -> str:
    """The one stderr line of a ``train`` that exits 2 without a traceback."""
    done = train(args, cwd, timeout)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert lines[0].startswith("neuro_evolution.train: error: "), lines[0]
    return lines[0]


def write_config(directory: Path, data: dict[str, Any], name: str = "config.json") -> Path:
    path = directory / name
    path.write_text(json.dumps(data))
    return path


def test_a_lockstep_wave_that_cannot_fit_is_refused_before_the_run_directory_exists(
    tmp_path: Path,
) -> None:
    """200,000 individuals x 1,000 episodes in one lockstep wave (about 3 TiB of CartPole lanes)
    is refused at start-up on evaluation.max_lanes, with the numbers, before any directory is
    made; the same config in mp workers with vectorize (one chunk per worker) too."""
    data = json.loads(CARTPOLE.read_text())
    data["optimizer"]["population_size"] = 200_000
    data["episode_runner"] = {"number_fitness_runs": 1000}
    for evaluation, lanes in (
        ({"handler": "vectorized"}, "200,000,000 lanes (1000 episodes x 200,000 individuals)"),
        ({"handler": "mp", "vectorize": True, "workers": 2}, "100,000,000 lanes"),
    ):
        config = write_config(tmp_path, {**data, "evaluation": evaluation})
        line = refused([str(config), "--out", "run"], tmp_path)
        assert "evaluation.max_lanes: a lockstep wave of " + lanes in line
        assert "set max_lanes to at most" in line
        assert not (tmp_path / "run").exists() and not (tmp_path / "runs").exists()


def test_a_lockstep_wave_that_fits_is_not_refused(tmp_path: Path) -> None:
    """The check refuses only what cannot fit: 64 lanes of CartPole train as before."""
    data = small_config(number_generations=1)
    data["optimizer"] = {"type": "PGPE", "population_size": 32}
    data["episode_runner"] = {"number_fitness_runs": 2, "max_steps_per_run": 20}
    data["evaluation"] = {"handler": "vectorized"}
    config = write_config(tmp_path, data)
    done = train([str(config), "--out", "run", "--quiet"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "log.csv").is_file()
