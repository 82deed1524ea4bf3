"""docs/export.md's script runs as printed: only onnxruntime and Gymnasium, an exported CTRNN
stepped with its state fed back, no warning on stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from helpers import require, small_config

from neuro_evolution import train
from neuro_evolution.export import export_run

require("export")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "export.md"


def page_script() -> str:
    text = PAGE.read_text()
    block = text.split("<!-- example: balance -->", 1)[1]
    match = re.search(r"```python\n(.*?)```", block, re.DOTALL)
    assert match, "docs/export.md: no python block after <!-- example: balance -->"
    return match.group(1)


def test_the_pages_script_imports_only_onnxruntime_and_gymnasium() -> None:
    imports = [line for line in page_script().splitlines() if line.startswith(("import", "from"))]
    assert imports == ["import gymnasium as gym", "import onnxruntime as ort"]
    assert len(page_script().strip().splitlines()) <= 15


def test_the_pages_script_steps_an_exported_ctrnn(tmp_path: Path) -> None:
    """A 3-generation CartPole CTRNN run with normalization, exported as cartpole.onnx: the
    script plays one episode and prints its return (an episode of the held-out kind: the
    tutorial's solved run prints 500)."""
    config = small_config(
        brain={"type": "CTRNN", "number_neurons": 4},
        optimizer={"type": "PGPE", "population_size": 8},
        observation_normalization={},
    )
    path = tmp_path / "cartpole.json"
    path.write_text(json.dumps(config))
    assert train.main([str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    export_run(tmp_path / "run", "onnx", tmp_path / "cartpole.onnx")
    (tmp_path / "balance.py").write_text(page_script())
    done = subprocess.run(
        [sys.executable, "balance.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"return \d+\.0\n", done.stdout), done.stdout
    assert done.stderr == ""
