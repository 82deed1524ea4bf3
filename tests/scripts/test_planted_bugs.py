"""The planted-bug check stays applicable: every mutation's original text occurs exactly once in
its file, so a move or an edit of the code it targets fails here instead of silently turning the
mutation into a no-op. The check itself takes tens of minutes:
``python scripts/planted_bugs.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_planted_bug_still_applies() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/planted_bugs.py", "--list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("\n") >= 30, done.stdout
