"""A user's own optimizer plugs in through the optimizer interface alone: the QD variant in
``tests/examples/ledger_map_elites.py`` is imported by its config, trained from the command
line, resumed exactly, writes its own file and log column, and its elites replay, with no edit
to the package."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import QD_DESCRIPTORS, assert_identical, small_config

from neuro_evolution.qd.files import ARCHIVE_FILE

TESTS = Path(__file__).resolve().parents[1]
PLUGIN = "examples.ledger_map_elites"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m neuro_evolution.ARGS`` in a fresh interpreter that can import tests/examples."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=240
    )


def plugin_config(tmp_path: Path) -> Path:
    data = small_config(
        imports=[PLUGIN],
        optimizer={"type": "LEDGER_MAP_ELITES", "descriptors": QD_DESCRIPTORS, "sigma": 0.5},
        episode_runner={"number_fitness_runs": 2, "max_steps_per_run": 60},
        number_generations=6,
        checkpoint={"every_generations": 3, "keep": 2},
        validation={"every_generations": 2, "episodes": 2},
    )
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(data))
    return path


def ledger_rows(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "ledger.csv").open() as file:
        return list(csv.DictReader(file))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The plugin's run straight through, and the same run stopped after 3 generations and
    extended to 6 with --resume, each in its own ``train`` process."""
    tmp_path = tmp_path_factory.mktemp("plugin")
    config = plugin_config(tmp_path)
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    for args in (
        ("neuro_evolution.train", str(config), "--out", str(straight), "--quiet"),
        ("neuro_evolution.train", str(config), "--out", str(resumed), "--generations", "3"),
        ("neuro_evolution.train", "--resume", str(resumed), "--generations", "6", "--quiet"),
    ):
        done = cli(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    return straight, resumed


def test_the_plugin_writes_its_own_file_and_log_column(runs: tuple[Path, Path]) -> None:
    """ledger.csv has one row per generation, and its new cells add up to the archive's elites;
    log.csv's last column is the plugin's new_cells, equal to the ledger's."""
    straight, _ = runs
    rows = ledger_rows(straight)
    assert [int(r["generation"]) for r in rows] == list(range(6))
    elites = len(np.load(straight / ARCHIVE_FILE, allow_pickle=False)["cells"])
    assert sum(int(r["new_cells"]) for r in rows) == elites > 3
    with (straight / "log.csv").open() as file:
        log = list(csv.DictReader(file))
    assert list(log[0])[-4:] == ["coverage", "qd_score", "qd_best", "new_cells"]
    assert [float(r["new_cells"]) for r in log] == [float(r["new_cells"]) for r in rows]


def test_the_plugin_resumes_exactly_with_its_own_state(runs: tuple[Path, Path]) -> None:
    """Stopped after 3 generations and extended to 6, the run ends with the log, optimizer state
    (archive and ledger) and hall of fame of the straight run, and the same ledger.csv."""
    straight, resumed = runs
    assert_identical(resumed, straight, extended_from=3)
    assert ledger_rows(resumed) == ledger_rows(straight)


def test_the_plugins_elites_replay_to_their_archived_fitness(runs: tuple[Path, Path]) -> None:
    """replay --elite reruns an elite of the plugin's archive to its archived fitness."""
    straight, _ = runs
    fitness = np.load(straight / ARCHIVE_FILE, allow_pickle=False)["fitness"]
    done = cli("neuro_evolution.replay", str(straight), "--elite", "0", cwd=straight)
    assert done.returncode == 0, done.stderr
    assert f"(archived {fitness[0]:.10g})" in done.stdout
    assert f"fitness {fitness[0]:.10g}" in done.stdout
