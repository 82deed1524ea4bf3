"""``train --set KEY=VALUE``: the sweep's settings on one run. A new ``optimizer.type`` drops the
options the new type does not take and names them in one warning line; options given in the
same command are kept; bad input is one line and exit 2, with no run directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import small_config, write_json

from neuro_evolution import train
from neuro_evolution.run.directory import read_log

CMA = {"type": "CMA_ES", "population_size": 6, "sigma": 0.4, "weights": "equal"}


def run_train(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def logged(run_dir: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "wall_time"} for row in read_log(run_dir)]


def test_set_optimizer_type_drops_the_other_types_keys_and_names_them(tmp_path: Path) -> None:
    """CMA_ES -> PGPE: sigma and weights are dropped (one stderr line naming both), the
    population size both take stays, radius_init given in the command is kept; the run trains
    as a config written for PGPE does."""
    config = write_json(tmp_path / "cma.json", small_config(number_generations=2, optimizer=CMA))
    done = run_train(
        str(config),
        "--out",
        str(tmp_path / "switched"),
        "--quiet",
        "--set",
        "optimizer.type=PGPE",
        "--set",
        "optimizer.radius_init=2.0",
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "neuro_evolution.train: warning: optimizer.type=PGPE: dropped sigma, weights (CMA_ES "
        "keys that PGPE does not take)"
    ]
    optimizer = json.loads((tmp_path / "switched" / "config.json").read_text())["optimizer"]
    assert (optimizer["type"], optimizer["population_size"], optimizer["radius_init"]) == (
        "PGPE",
        6,
        2.0,
    )
    pgpe = {"type": "PGPE", "population_size": 6, "radius_init": 2.0}
    written = write_json(tmp_path / "pgpe.json", small_config(number_generations=2, optimizer=pgpe))
    assert train.main([str(written), "--out", str(tmp_path / "written"), "--quiet"]) == 0
    assert logged(tmp_path / "switched" / "log.csv") == logged(tmp_path / "written" / "log.csv")


def test_set_without_a_type_change_drops_nothing(tmp_path: Path, capsys: Any) -> None:
    """The same type again changes nothing and warns nothing."""
    config = write_json(tmp_path / "cma.json", small_config(number_generations=1, optimizer=CMA))
    out = tmp_path / "run"
    args = [str(config), "--out", str(out), "--quiet", "--set", "optimizer.type=CMA_ES"]
    assert train.main([*args, "--set", "optimizer.sigma=0.3"]) == 0
    assert "warning" not in capsys.readouterr().err
    optimizer = json.loads((out / "config.json").read_text())["optimizer"]
    assert (optimizer["sigma"], optimizer["weights"]) == (0.3, "equal")


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            ["--set", "optimizer.type=PGPE,SNES"],
            "--set optimizer.type: train takes one value per key; to train several, use "
            "python -m neuro_evolution.sweep",
        ),
        (["--set", "optimizer.sigmaa=0.3"], "optimizer.sigmaa: unknown key for CmaEsConfig."),
        (
            ["--set", "optimizer.type=PGPE", "--set", "optimizer.sigma=0.3"],
            "optimizer.sigma: unknown key for PgpeConfig.",
        ),
        (["--set", "optimizer.sigma"], "--set 'optimizer.sigma': write KEY=VALUE"),
    ],
)
def test_a_bad_set_is_one_line_exit_2_and_no_run_directory(
    tmp_path: Path, setting: list[str], message: str
) -> None:
    """Several values, an unknown key, a key the new type refuses (given explicitly, so kept),
    a setting without a value: one line naming the key, exit 2, nothing written."""
    config = write_json(tmp_path / "cma.json", small_config(number_generations=1, optimizer=CMA))
    done = run_train(str(config), "--out", str(tmp_path / "run"), "--quiet", *setting)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0], done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()


def test_set_is_refused_with_resume(tmp_path: Path) -> None:
    """A resumed run keeps its config: --set with --resume is a usage error (exit 2)."""
    config = write_json(tmp_path / "tiny.json", small_config(number_generations=1))
    assert train.main([str(config), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    done = run_train("--resume", str(tmp_path / "run"), "--set", "optimizer.radius_init=2")
    assert done.returncode == 2
    assert "--set cannot be used with --resume" in done.stderr.splitlines()[-1]
