"""A PBT's warnings are labelled as the PBT's and said once each, and a PBT that fails prints
its error alone: a 2-interval PBT extended to 3 whose runs' latest checkpoints were cut."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import pbt_config_data, write_json

from neuro_evolution.pbt import cli as pbt_cli


def cut(path: Path) -> None:
    """Cut ``path`` to half its bytes, as a full disk or a killed copy leaves it."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.fixture
def cut_pbt(tmp_path: Path) -> tuple[list[str], Path]:
    """(argv continuing it, folder) of a PBT trained 2 of 3 intervals, every run's checkpoint
    of generation 4 cut (its generation-2 one intact)."""
    config = write_json(tmp_path / "pbt.json", pbt_config_data())
    argv = [str(config), "--out", str(tmp_path / "out"), "--handler", "sequential", "--quiet"]
    assert pbt_cli.main([*argv, "--generations", "4"]) == 0
    for run_dir in sorted((tmp_path / "out" / "runs").iterdir()):
        cut(run_dir / "checkpoints" / "gen-000004.npz")
    return argv, tmp_path / "out"


def test_each_pbt_warning_is_labelled_pbt_and_said_once(cut_pbt, capsys: Any) -> None:
    """A donor's cut checkpoint warns when it is copied and again when the donor resumes: the
    line is printed once, as neuro_evolution.pbt's."""
    argv, _ = cut_pbt
    capsys.readouterr()
    assert pbt_cli.main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("neuro_evolution.pbt: warning: ") for line in lines)
    assert all("falling back to checkpoints/gen-000002.npz" in line for line in lines)
    assert len(lines) == len(set(lines))


def test_a_pbt_that_fails_prints_its_error_alone(cut_pbt, capsys: Any) -> None:
    """With every checkpoint of one run cut, the other runs' fallbacks are not printed: the
    one line is the error naming the run that cannot continue."""
    argv, folder = cut_pbt
    scores = json.loads((folder / "pbt_state.json").read_text())["history"][-1]["scores"]
    names = list(scores)
    ranked = sorted(names, key=lambda name: (-scores[name], names.index(name)))
    stuck = ranked[1]  # neither the donor (the best) nor the copy (the worst)
    cut(folder / "runs" / stuck / "checkpoints" / "gen-000002.npz")
    capsys.readouterr()
    assert pbt_cli.main(argv) != 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("neuro_evolution.pbt: error: ") and stuck in lines[0]


def test_a_copy_from_an_older_checkpoint_says_so_and_records_its_generation(
    cut_pbt, capsys: Any
) -> None:
    """The copies decided at generation 4 take their donor's generation-2 checkpoint (the one of
    generation 4 is cut): the lineage records that generation beside the copy's, and the copy
    line says it."""
    argv, folder = cut_pbt
    capsys.readouterr()
    assert pbt_cli.main([*argv[:-1]]) == 0  # not --quiet: the copy lines are printed
    lineage = json.loads((folder / "lineage.json").read_text())
    copies = [copy for run in lineage.values() for copy in run["copies"] if copy["generation"] == 4]
    assert copies, lineage
    assert all(copy["checkpoint"].endswith("gen-000002.npz") for copy in copies), copies
    assert all(copy["checkpoint_generation"] == 2 for copy in copies), copies
    said = [line for line in capsys.readouterr().out.splitlines() if " copies run-" in line]
    assert said and all(
        "at generation 4 (its checkpoint of generation 2: later ones are unreadable)" in line
        for line in said
    ), said
