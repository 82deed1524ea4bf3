"""``python -m neuro_evolution.pbt``: a PBT stopped mid-interval and run again ends identical to
one that went straight through, on a process pool and on Dask; its folder holds the lineage,
``pbt.png`` and run directories that ``compare`` reads."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import pbt_config_data, pbt_run_files, stopped_then_resumed, write_json

from neuro_evolution import compare
from neuro_evolution.pbt import cli as pbt_cli


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(config, folder, printed lines) of the tiny PBT run straight through, sequentially."""
    folder = tmp_path_factory.mktemp("pbt")
    config = write_json(folder / "pbt.json", pbt_config_data())
    out = folder / "straight"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert pbt_cli.main([str(config), "--out", str(out), "--handler", "sequential"]) == 0
    return config, out, printed.getvalue()


def test_a_pbt_stopped_mid_interval_resumes_to_a_straight_runs_lineage_and_logs(
    tmp_path: Path, straight: tuple[Path, Path, str], capsys: Any
) -> None:
    """4 runs x 3 intervals on an mp pool (2 workers), stopped mid-interval and continued: the
    lineage (bytes), every run's log (wall time aside), config and optimizer state equal a
    straight sequential PBT's."""
    config, reference, printed = straight
    assert "pbt: 4 runs x 3 intervals of 2 generations ended; 2 copies" in printed
    assert printed.count(" copies run-") == 2
    stopped = tmp_path / "stopped"
    stopped_then_resumed(config, stopped, ["--handler", "mp", "--workers", "2"])
    assert pbt_run_files(stopped) == pbt_run_files(reference)


def test_a_pbt_on_dask_stopped_mid_interval_resumes_to_a_straight_run(
    tmp_path: Path, straight: tuple[Path, Path, str]
) -> None:
    """The same on a Dask LocalCluster of 2 workers (both sessions)."""
    config, reference, _ = straight
    stopped = tmp_path / "stopped"
    stopped_then_resumed(config, stopped, ["--handler", "dask", "--workers", "2"])
    assert pbt_run_files(stopped) == pbt_run_files(reference)


def test_the_lineage_names_each_copy_and_compare_reads_the_folder(
    straight: tuple[Path, Path, str], capsys: Any
) -> None:
    """After each interval but the last, the bottom run (quantile 0.25 of 4) copied a top run:
    lineage.json names the generation, the donor's checkpoint file and both held-out scores;
    pbt.png is drawn; ``compare`` reads the folder's run directories."""
    _, folder, _ = straight
    lineage = json.loads((folder / "lineage.json").read_text())
    copies = sorted(
        (copy for run in lineage.values() for copy in run["copies"]), key=lambda c: c["generation"]
    )
    assert [copy["generation"] for copy in copies] == [2, 4]
    for copy in copies:
        assert copy["score"] <= copy["donor_score"]
        checkpoint = folder / copy["checkpoint"]
        assert checkpoint.name == f"gen-{copy['generation']:06d}.npz"
        assert checkpoint.parts[-3] == copy["copied"]
    assert (folder / "pbt.png").stat().st_size > 10_000
    assert compare.main([str(folder)]) == 0
    assert (folder / "comparison.md").is_file()
