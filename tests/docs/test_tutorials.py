"""The tutorials in docs/tutorials/ run: each notebook is executed top to bottom by a real Jupyter
kernel (nbclient), in a temporary working directory, and a cell that raises fails the test.

The committed notebooks keep their outputs (the documentation site shows them) and executing them
here never writes them back. ``python tests/docs/test_tutorials.py [NAME ...]`` re-executes
notebooks and saves their outputs; it prints each one's run time.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "docs" / "tutorials"
NOTEBOOKS = sorted(TUTORIALS.glob("*.ipynb"))
# Notebooks that take more than about 30 s on 2 cores: the fast loop (-m "not slow") skips them.
SLOW = {
    "03_memory",
    "04_quality_diversity",
    "05_multi_objective",
    "06_scaling_out",
    "07_sweeps_and_compare",
    "10_comparing_optimizers",
}
CELL_TIMEOUT = 240  # seconds one cell may run before the notebook fails
NOTEBOOK_TIMEOUT = 300  # seconds for the whole notebook (pytest-timeout)
# The cell that writes the worked example of docs/writing-a-brain.md into the working directory.
ELMAN_CELL = "%%writefile my_brains/elman.py\n"
ELMAN_EXAMPLE = ROOT / "tests" / "examples" / "elman_brain.py"


def execute(path: Path, workdir: Path) -> nbformat.NotebookNode:
    """The notebook at ``path`` executed top to bottom with ``workdir`` as its working directory
    (a cell that raises raises :class:`nbclient.exceptions.CellExecutionError` here)."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()
    return notebook


def notebook_params() -> list:
    """One pytest parameter per notebook, ``slow`` where it is in :data:`SLOW`."""
    return [
        pytest.param(path, id=path.stem, marks=[pytest.mark.slow] if path.stem in SLOW else [])
        for path in NOTEBOOKS
    ]


def code_cells(path: Path) -> list[nbformat.NotebookNode]:
    """The code cells of the committed notebook at ``path``."""
    return [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


def test_there_are_the_tutorials_the_index_lists() -> None:
    """docs/tutorials/index.md links every notebook, and every notebook it links exists."""
    linked = set(re.findall(r"\]\(([^)]+\.ipynb)\)", (TUTORIALS / "index.md").read_text()))
    assert linked == {path.name for path in NOTEBOOKS}
    assert len(NOTEBOOKS) >= 8


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_committed_notebook_keeps_the_outputs_of_one_clean_run(path: Path) -> None:
    """Every code cell of the committed notebook ran, in order, in one session, without an error
    output; the outputs name no temporary directory of the machine that ran them."""
    cells = code_cells(path)
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    for cell in cells:
        for output in cell.outputs:
            assert output.output_type != "error", f"{path.name}: {output.get('ename')}"
            text = output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
            assert not re.search(r"/tmp/|pytest-of-", text), f"{path.name}: {text[:200]}"


def test_every_tutorial_shows_a_picture() -> None:
    """Each notebook has at least one PNG output: the plot it is about."""
    for path in NOTEBOOKS:
        outputs = [output for cell in code_cells(path) for output in cell.outputs]
        assert any("image/png" in output.get("data", {}) for output in outputs), path.name


def test_the_brain_tutorial_writes_the_guides_worked_example_verbatim() -> None:
    """The Elman brain written by 02_writing_a_brain is tests/examples/elman_brain.py (which the
    guide shows verbatim and tests/docs/test_writing_a_brain.py checks)."""
    sources = [cell.source for cell in code_cells(TUTORIALS / "02_writing_a_brain.ipynb")]
    written = [source for source in sources if source.startswith(ELMAN_CELL)]
    assert len(written) == 1
    assert written[0][len(ELMAN_CELL) :] + "\n" == ELMAN_EXAMPLE.read_text()


def command_helper(path: Path) -> Callable[..., None]:
    """The ``python_m`` helper the notebook at ``path`` defines in its first code cell."""
    setup = code_cells(path)[0].source
    namespace: dict = {}
    exec(compile(setup[setup.index("def python_m(") :], path.name, "exec"), IMPORTS, namespace)
    return namespace["python_m"]


IMPORTS = {"shlex": shlex, "subprocess": subprocess, "sys": sys}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_its_commands_through_the_kernels_interpreter(path: Path) -> None:
    """No cell runs a shell command (``!``, whose interpreter is whatever ``python`` the PATH
    finds and whose failure does not fail the cell); the commands go through ``python_m``."""
    sources = [cell.source for cell in code_cells(path)]
    assert not [line for source in sources for line in source.splitlines() if line.startswith("!")]
    assert "def python_m(" in sources[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_command_helper_fails_the_cell_on_a_failed_command(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The notebook's ``python_m`` runs ``sys.executable -m ...``, prints the command's output and
    raises when the command exits non-zero."""
    python_m = command_helper(path)
    with pytest.raises(subprocess.CalledProcessError) as failed:
        python_m("neuro_evolution.train", Path("no such config.json"), "--quiet")
    assert failed.value.cmd == [sys.executable, "-m", "neuro_evolution.train"] + [
        "no such config.json",
        "--quiet",
    ]
    assert "no such config.json" in capsys.readouterr().out


@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
@pytest.mark.parametrize("path", notebook_params())
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path) -> None:
    """The notebook runs without an error in a fresh kernel in an empty working directory, and the
    committed file is left as it was."""
    before = path.read_bytes()
    notebook = execute(path, tmp_path)
    assert path.read_bytes() == before
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors


def scrub(notebook: nbformat.NotebookNode, workdir: Path) -> None:
    """Replace the temporary working directory in text outputs by ``.`` (the outputs are read by
    people who ran the notebook somewhere else)."""
    names = sorted({str(workdir), os.path.realpath(workdir)}, key=len, reverse=True)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                for name in names:
                    output["text"] = output["text"].replace(name, ".")


def write_outputs(names: list[str]) -> None:
    """Execute the named notebooks (all when empty) and save them with their outputs."""
    for path in NOTEBOOKS:
        if names and path.stem not in names:
            continue
        with tempfile.TemporaryDirectory() as workdir:
            started = time.perf_counter()
            notebook = execute(path, Path(workdir))
            seconds = time.perf_counter() - started
            scrub(notebook, Path(workdir))
        nbformat.write(notebook, path)
        print(f"{path.stem}: {seconds:.1f} s", flush=True)


if __name__ == "__main__":
    write_outputs(sys.argv[1:])
