"""The README's Python example is real: it runs as a script (a real mp pool, which imports the
script again: hence its ``__main__`` guard), trains the shipped CartPole config with the fields it
changes, and prints the held-out validation. The front pages show the same example; the README
keeps its set-up commands and example near the top."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def python_blocks(text: str) -> list[str]:
    """The ``python`` code blocks of a Markdown text."""
    return re.findall(r"^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


@pytest.mark.slow
def test_the_readme_example_trains_cartpole_as_a_script(tmp_path: Path) -> None:
    (example,) = python_blocks(README.read_text())
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    script = tmp_path / "example.py"
    script.write_text(example)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first, last = done.stdout.strip().splitlines()[-2:]
    assert first.startswith("generation 0 mean fitness ")
    assert re.fullmatch(r"held-out validation [\d.]+ solved: (True|False)", last), last
    assert (tmp_path / "runs" / "cartpole-8-neurons" / "log.csv").is_file()


def test_the_site_shows_the_readme_example_and_the_readme_is_a_front_page() -> None:
    """Home page and getting started show the README's example unchanged; the README has at most
    200 lines, its two set-up commands in the first 25 and its example in the first 100."""
    (example,) = python_blocks(README.read_text())
    for page in ("docs/index.md", "docs/getting-started.md"):
        assert example in python_blocks((ROOT / page).read_text()), page
    lines = README.read_text().splitlines()
    assert len(lines) <= 200
    head = "\n".join(lines[:25])
    assert "pip install -e . && python -m neuro_evolution.train configs/cartpole.json" in head
    assert 'pip install -e ".[test]" && python -m pytest' in head
    assert "```python" in "\n".join(lines[:100])


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install --quiet --disable-pip-version-check -e ".[test]"' in ci
    assert "python -m pytest -q" in ci
