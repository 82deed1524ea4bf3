"""The default output folders of ``sweep``, ``pbt`` and ``scripts/reproduce.py`` are ignored at
the repository's root only: the package's and the tests' own ``pbt``/``sweep`` folders are not."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ignored(path: str) -> bool:
    done = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, check=False)
    return done.returncode == 0


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout"
)
def test_output_folders_are_ignored_at_the_root_and_package_folders_are_not() -> None:
    """pbt/, sweeps/ and reproductions/ at the root are ignored; a new module of
    neuro_evolution/pbt or a new test of tests/pbt or tests/sweep is not."""
    for path in ("pbt/run/log.csv", "sweeps/a/log.csv", "reproductions/ars/x.json"):
        assert ignored(path), path
    for path in ("neuro_evolution/pbt/new.py", "tests/pbt/test_new.py", "tests/sweep/test_new.py"):
        assert not ignored(path), path
