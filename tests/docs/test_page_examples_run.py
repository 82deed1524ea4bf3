"""The README's examples work as written: every ``python`` block runs as a script, every
``sweep`` and ``train`` command it (or a docs page) shows names settings its config has, and
shell blocks marked runnable run.

Conventions a page follows (README.md and docs/*.md):

- A fenced ```` ```python ```` block of README.md is saved as a script in an empty folder that
  holds a copy of ``configs/`` and run there with ``python SCRIPT`` (so a multiprocessing run needs
  its ``if __name__ == "__main__":`` guard); it must exit 0 within :data:`BUDGET_SECONDS`. A block
  that is a fragment, not a program, has ``<!-- no-run -->`` on the line before its fence. In
  docs/*.md a python block runs only when marked ``<!-- run -->``.
- A fenced ```` ```bash ````, ```` ```sh ```` or ```` ```console ```` block runs only when the line
  before its fence is ``<!-- run -->``: each command (``\\`` continuations joined, a leading
  ``$ `` prompt removed, ``#`` comments and a console block's output lines left out) runs with
  bash in the same kind of folder and must exit 0.
- Every ``python -m neuro_evolution.sweep ...`` and ``python -m neuro_evolution.train
  configs/...`` command anywhere on a page (fenced or indented) is parsed with the program's own
  parser and its runs' configs are built and validated, without training.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neuro_evolution.cli import apply_overrides
from neuro_evolution.config.tree import load_config
from neuro_evolution.sweep import cli as sweep_cli
from neuro_evolution.train import build_parser as train_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
BUDGET_SECONDS = 300
RUN, NO_RUN = "<!-- run -->", "<!-- no-run -->"
SHELLS = ("bash", "sh", "console", "shell")


@dataclasses.dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    marker: str  # the line before the fence, stripped

    @property
    def label(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """Every fenced code block of ``page`` with its language and the line before it."""
    lines = page.read_text().splitlines()
    blocks, index = [], 0
    while index < len(lines):
        match = re.match(r"^```([\w-]*)\s*$", lines[index])
        if not match:
            index += 1
            continue
        start = index
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"{page}:{start + 1}: a code fence is never closed"
        marker = lines[start - 1].strip() if start else ""
        text = "\n".join(lines[start + 1 : end]) + "\n"
        blocks.append(Block(page, start + 1, match.group(1), text, marker))
        index = end + 1
    return blocks


def python_blocks() -> list[Block]:
    return [
        block
        for page in PAGES
        for block in fenced_blocks(page)
        if block.language == "python"
        and (block.marker == RUN or (page == README and block.marker != NO_RUN))
    ]


def shell_blocks() -> list[Block]:
    return [
        block
        for page in PAGES
        for block in fenced_blocks(page)
        if block.language in SHELLS and block.marker == RUN
    ]


def commands(text: str, console: bool = False) -> list[str]:
    """The commands of a shell block: continuations joined, prompts and comments removed."""
    found, pending = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending:
            if console and not line.startswith("$ "):
                continue  # a console block's output
            line = line.removeprefix("$ ")
            if not line or line.startswith("#"):
                continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        found.append((pending + line).strip())
        pending = ""
    return found


def program_commands(program: str) -> list[tuple[str, str]]:
    """(where, command) of every ``python -m PROGRAM ...`` line on the pages, continuations
    joined, whether fenced or indented."""
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        for number, raw in enumerate(lines):
            line = raw.strip().removeprefix("$ ")
            start = line.find(f"python -m {program} ")  # also after `pip install ... &&`
            if start < 0 or (start > 0 and not line[:start].rstrip().endswith("&&")):
                continue
            command = line[start:]
            following = number
            while command.endswith("\\") and following + 1 < len(lines):
                following += 1
                command = command[:-1] + " " + lines[following].strip()
            command = command.split(" #")[0].strip()
            found.append((f"{page.relative_to(ROOT)}:{number + 1}", command))
    return found


def example_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "example"
    folder.mkdir()
    shutil.copytree(ROOT / "configs", folder / "configs")
    return folder


@pytest.mark.parametrize("block", python_blocks(), ids=lambda block: block.label)
def test_a_python_block_runs_as_a_script(block: Block, tmp_path: Path) -> None:
    """Saved as a script and run as ``python SCRIPT``: exit 0 within the budget, no
    traceback, and no half-made run directory (one holding only its config)."""
    folder = example_folder(tmp_path)
    script = folder / "example.py"
    script.write_text(block.text)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=BUDGET_SECONDS,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, (
        f"{block.label}: the example fails as a script:\n{done.stderr[-3000:]}"
    )
    for config in folder.glob("runs/*/config.json"):  # a run it makes is a whole run
        assert (config.parent / "log.csv").is_file(), f"{block.label}: {config.parent} is half made"


def test_the_readme_has_a_python_example() -> None:
    assert any(block.page == README for block in python_blocks())


@pytest.mark.parametrize("block", shell_blocks(), ids=lambda block: block.label)
def test_a_shell_block_marked_runnable_runs(block: Block, tmp_path: Path) -> None:
    folder = example_folder(tmp_path)
    for command in commands(block.text, console=block.language == "console"):
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=BUDGET_SECONDS,
        )
        assert done.returncode == 0, f"{block.label}: `{command}` failed:\n{done.stderr[-3000:]}"


def arguments(command: str, program: str) -> list[str]:
    words = shlex.split(command)
    return words[words.index(program) + 1 :]


def runnable_commands() -> set[tuple[str, ...]]:
    """The commands of the shell blocks marked runnable (run for real, so checked there)."""
    return {
        tuple(shlex.split(command))
        for block in shell_blocks()
        for command in commands(block.text, console=block.language == "console")
    }


# a sweep command of a runnable block may name files an earlier command of the block writes
SWEEPS = [
    (where, command)
    for where, command in program_commands("neuro_evolution.sweep")
    if tuple(shlex.split(command)) not in runnable_commands()
]
TRAINS = [
    (where, command)
    for where, command in program_commands("neuro_evolution.train")
    if re.search(r"neuro_evolution\.train configs/\S+\.json", command) and "<" not in command
]


def test_the_pages_show_a_sweep_and_the_readme_a_train_command() -> None:
    """The command checks below have something to check: the README's train command, and the
    sweep commands of the docs pages."""
    assert SWEEPS
    assert any(where.startswith("README.md") for where, _ in TRAINS)


@pytest.mark.parametrize(("where", "command"), SWEEPS, ids=[w for w, _ in SWEEPS])
def test_a_sweep_command_names_settings_its_config_has(
    where: str, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run of the shown grid is a valid config (each --set key exists in the config)."""
    monkeypatch.chdir(ROOT)
    args = sweep_cli.build_parser().parse_args(arguments(command, "neuro_evolution.sweep"))
    plans = sweep_cli.plans_from_arguments(args)
    assert plans, f"{where}: `{command}` plans no run"


@pytest.mark.parametrize(("where", "command"), TRAINS, ids=[w for w, _ in TRAINS])
def test_a_train_command_loads_its_config(
    where: str, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    args = train_parser().parse_args(arguments(command, "neuro_evolution.train"))
    apply_overrides(load_config(args.config), args)
