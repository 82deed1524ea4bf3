"""A sweep says at once how many runs it makes, and refuses more than MAX_RUNS without --yes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import small_config

from neuro_evolution.sweep import cli as sweep_cli
from neuro_evolution.sweep.grid import MAX_RUNS, check_run_count, parse_seeds, parse_setting


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.json"
    path.write_text(json.dumps(small_config(number_generations=1)))
    return path


def test_a_sweep_of_100000_seeds_is_refused_at_once_in_one_line(tmp_path: Path) -> None:
    """``--seeds 1-100000``: exit 2 within seconds, one line with the count, the limit and
    --yes; no sweep folder is made."""
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.sweep", str(config_file(tmp_path))]
        + ["--seeds", "1-100000", "--out", str(tmp_path / "sweep")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"makes 100000 runs (100000 seeds x 1 setting), more than {MAX_RUNS}" in lines[0]
    assert "pass --yes" in lines[0]
    assert not (tmp_path / "sweep").exists()
    assert elapsed < 30, elapsed  # no config is built for a refused sweep


def test_the_count_multiplies_seeds_and_settings_and_yes_lifts_the_limit() -> None:
    """100 seeds x 3 x 4 values = 1200 runs: refused, then accepted with --yes (confirmed)."""
    seeds = parse_seeds("1-100")
    settings = [parse_setting("optimizer.sigma=0.1,0.2,0.3"), parse_setting("a.b=1,2,3,4")]
    with pytest.raises(Exception, match="makes 1200 runs \\(100 seeds x 12 settings\\)"):
        check_run_count(settings, seeds, confirmed=False)
    assert check_run_count(settings, seeds, confirmed=True) == 1200
    assert check_run_count(settings[:1], seeds, confirmed=False) == 300


def test_a_sweep_prints_its_run_count_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first line a sweep prints is how many runs it will make."""
    code = sweep_cli.main(
        [str(config_file(tmp_path)), "--seeds", "1-2", "--set", "brain.hidden_layers=[2],[3]"]
        + ["--out", str(tmp_path / "sweep"), "--handler", "sequential"]
    )
    assert code == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("sweep: 4 runs (2 seeds x 2 settings)"), first
