"""``sweep --set optimizer.type=A,B`` on a config written for A: each run of B drops the options
that B does not take (named once on stderr), so the shipped configs compare methods directly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import small_config, write_json

REPOSITORY = Path(__file__).resolve().parents[2]


def run_sweep(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neuro_evolution.sweep", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_a_type_sweep_on_the_shipped_cartpole_config_runs_every_type(tmp_path: Path) -> None:
    """configs/cartpole.json (PGPE with radius_init and max_speed) swept over PGPE and SNES:
    the SNES runs drop both PGPE options, with one warning line; each run is of its type."""
    out = tmp_path / "sweep"
    done = run_sweep(
        str(REPOSITORY / "configs" / "cartpole.json"),
        "--set",
        "optimizer.type=PGPE,SNES",
        "--generations",
        "1",
        "--handler",
        "sequential",
        "--out",
        str(out),
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "neuro_evolution.sweep: warning: optimizer.type=SNES: dropped radius_init, max_speed "
        "(PGPE keys that SNES does not take)"
    ]
    for name, kept in (("PGPE", "radius_init"), ("SNES", "stdev_init")):
        config = json.loads((out / f"optimizer.type={name}" / "seed-1" / "config.json").read_text())
        assert config["optimizer"]["type"] == name and kept in config["optimizer"]
        assert config["optimizer"]["population_size"] == 20  # a key both take stays


def test_a_key_given_with_the_type_is_kept_and_refused_where_a_type_lacks_it(
    tmp_path: Path,
) -> None:
    """An option given in the same command is kept for every type; a type without it refuses
    it in one line (exit 2), before any folder is made."""
    config = write_json(
        tmp_path / "pgpe.json",
        small_config(optimizer={"type": "PGPE", "population_size": 6, "radius_init": 2.0}),
    )
    done = run_sweep(
        str(config),
        "--set",
        "optimizer.type=SNES,CMA_ES",
        "--set",
        "optimizer.stdev_init=0.5",
        "--out",
        str(tmp_path / "sweep"),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "optimizer.stdev_init: unknown key for CmaEsConfig" in done.stderr.splitlines()[-1]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "sweep").exists()
