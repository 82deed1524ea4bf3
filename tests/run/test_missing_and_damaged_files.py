"""A run file that is missing or damaged, an exported model that is not one, and an export
that cannot be written: each is one line on stderr, exit code 2, no traceback, nothing written.
Real ``replay`` and ``export`` processes on a real run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import read_only, require, small_config

from neuro_evolution import train


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run with a held-out validation (so a candidate.npz)."""
    folder = tmp_path_factory.mktemp("trained")
    config = folder / "small.json"
    config.write_text(json.dumps(small_config(number_generations=2)))
    assert train.main([str(config), "--out", str(folder / "run"), "--quiet"]) == 0
    return folder / "run"


@pytest.fixture
def run_dir(trained: Path, tmp_path: Path) -> Path:
    """A copy of the trained run this test may damage."""
    return Path(shutil.copytree(trained, tmp_path / "run"))


def command(module: str, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", f"neuro_evolution.{module}", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MPLBACKEND": "Agg", "SDL_VIDEODRIVER": "dummy"},
    )


def refused(result: subprocess.CompletedProcess) -> str:
    """The one stderr line of a refusal (exit code 2, no traceback)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ("replay", "{run}", "--episodes", "1"),
        ("replay", "{run}", "--validation"),
        ("export", "{run}", "--format", "numpy", "--out", "{tmp}/policy.py"),
    ],
    ids=["replay", "replay-validation", "export"],
)
def test_a_missing_candidate_is_refused_not_replaced_by_the_hall_of_fame(
    run_dir: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Without candidate.npz, replay, replay --validation and export refuse in one line naming
    the file and the option that picks a hall-of-fame entry instead; nothing is exported."""
    (run_dir / "candidate.npz").unlink()
    filled = [a.format(run=run_dir, tmp=tmp_path) for a in args]
    line = refused(command(filled[0], *filled[1:], cwd=tmp_path))
    assert f"{run_dir / 'candidate.npz'}: missing" in line, line
    assert ("--hall-of-fame N" if filled[0] == "export" else "--rank N") in line, line
    assert not (tmp_path / "policy.py").exists() and not (tmp_path / "policy.npz").exists()


def test_the_hall_of_fame_is_still_replayed_when_asked_for(run_dir: Path, tmp_path: Path) -> None:
    """``--rank 0`` replays the hall of fame's best with no candidate on disk."""
    (run_dir / "candidate.npz").unlink()
    result = command("replay", run_dir, "--rank", "0", "--episodes", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "hall-of-fame rank 0" in result.stdout


@pytest.mark.parametrize("name", ["candidate.npz", "hall_of_fame.npz"])
def test_a_truncated_run_file_is_refused_in_one_line_naming_it(
    run_dir: Path, tmp_path: Path, name: str
) -> None:
    """export and replay of a run whose candidate or hall of fame is cut in half: one line
    naming the damaged file (not zipfile.BadZipFile's traceback)."""
    path = run_dir / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    out = tmp_path / "policy.py"
    line = refused(command("export", run_dir, "--format", "numpy", "--out", out, cwd=tmp_path))
    assert line.endswith("restore it from a copy, or write it again"), line
    assert f"{path}: damaged" in line, line
    assert not out.exists()
    line = refused(command("replay", run_dir, "--episodes", "1", cwd=tmp_path))
    assert f"{path}: damaged" in line, line


def test_an_onnx_file_of_random_bytes_is_refused_in_one_line(run_dir: Path, tmp_path: Path) -> None:
    """``replay --exported`` with random bytes named .onnx: one line naming the file."""
    require("export")
    fake = tmp_path / "fake.onnx"
    fake.write_bytes(os.urandom(4096))
    result = command("replay", run_dir, "--validation", "--exported", fake, cwd=tmp_path)
    line = refused(result)
    assert f"{fake}: not a loadable exported policy" in line and "export it again" in line, line


def test_a_damaged_numpy_policy_is_refused_in_one_line(run_dir: Path, tmp_path: Path) -> None:
    """An exported numpy policy whose .npz is cut in half: one line naming the policy."""
    out = tmp_path / "policy.py"
    assert (
        command("export", run_dir, "--format", "numpy", "--out", out, cwd=tmp_path).returncode == 0
    )
    npz = out.with_suffix(".npz")
    npz.write_bytes(npz.read_bytes()[:100])
    line = refused(command("replay", run_dir, "--validation", "--exported", out, cwd=tmp_path))
    assert f"{out}: not a loadable exported policy" in line, line


def test_an_export_into_a_read_only_folder_is_one_line_naming_the_folder(
    run_dir: Path, tmp_path: Path
) -> None:
    """The atomic writer's failure to create its temporary file is one line naming the folder
    and the fix; the folder stays empty."""
    with read_only(tmp_path / "locked") as locked:
        out = locked / "policy.py"
        line = refused(command("export", run_dir, "--format", "numpy", "--out", out, cwd=tmp_path))
        assert list(locked.iterdir()) == []
    assert line.startswith(f"neuro_evolution.export: error: {locked}: cannot write "), line
    assert "make the folder writable" in line, line


@pytest.mark.parametrize("format, suffix", [("onnx", ".onnx"), ("numpy", ".py")])
def test_an_out_without_a_suffix_gets_the_formats_and_replays(
    run_dir: Path, tmp_path: Path, format: str, suffix: str
) -> None:
    """``--out policy`` writes ``policy.onnx`` (numpy: ``policy.py`` + ``policy.npz``), says
    so, and ``replay --exported`` plays what was written; no suffix-less file is left."""
    if format == "onnx":
        require("export")
    result = command("export", run_dir, "--format", format, "--out", "policy", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = tmp_path / f"policy{suffix}"
    assert f"wrote policy{suffix} (" in result.stdout, result.stdout
    assert written.is_file() and not (tmp_path / "policy").exists()
    replayed = command("replay", run_dir, "--validation", "--exported", written.name, cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert "exported policy" in replayed.stdout


def test_an_onnx_export_named_with_another_suffix_is_refused(run_dir: Path, tmp_path: Path) -> None:
    """``--format onnx --out policy.bin``: one line naming the .onnx name to use; no file."""
    require("export")
    result = command("export", run_dir, "--format", "onnx", "--out", "policy.bin", cwd=tmp_path)
    line = refused(result)
    assert "name a .onnx file (e.g. policy.onnx)" in line, line
    assert not (tmp_path / "policy.bin").exists()
