"""The guide docs/writing-a-brain.md: its worked example is real, registered and correct."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import small_config

from neuro_evolution.brains import BrainTemplate, brain_types, make_template
from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.run.experiment import Experiment

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "writing-a-brain.md"
EXAMPLE = ROOT / "tests" / "examples" / "elman_brain.py"
MODULE = "examples.elman_brain"  # tests/ is on sys.path under pytest


def guide_block(marker: str, language: str) -> str:
    """The first ```language block after ``marker`` in the guide."""
    text = GUIDE.read_text()
    start = text.index(marker) if marker else 0
    match = re.compile(rf"```{language}\n(.*?)```", re.S).search(text, start)
    assert match, f"no {language} block after {marker!r} in {GUIDE}"
    return match.group(1)


def test_guide_shows_the_example_file_verbatim() -> None:
    """The guide's worked example and tests/examples/elman_brain.py cannot drift apart."""
    assert guide_block("<!-- example: tests/examples/elman_brain.py -->", "python") == (
        EXAMPLE.read_text()
    )


def test_the_export_pages_export_step_is_the_examples() -> None:
    """docs/export.md shows the example's export_step as it is in tests/examples/elman_brain.py
    (indented as a method there)."""
    page = (ROOT / "docs" / "export.md").read_text()
    start = page.index("## A brain type's export step")
    match = re.compile(r"```python\n(.*?)```", re.S).search(page, start)
    assert match and match.group(1).startswith("def export_step(")
    method = "".join(
        f"    {line}" if line.strip() else line for line in match.group(1).splitlines(True)
    )
    assert method in EXAMPLE.read_text()


def elman_reference(genome: np.ndarray, sizes: tuple[int, int, int], inputs: list) -> list:
    """The documented Elman update with explicit sums, for a list of flat observations."""
    n_in, hidden, n_out = sizes
    values = iter(float(v) for v in genome)
    w_in = [[next(values) for _ in range(n_in)] for _ in range(hidden)]
    w_rec = [[next(values) for _ in range(hidden)] for _ in range(hidden)]
    b = [next(values) for _ in range(hidden)]
    w_out = [[next(values) for _ in range(hidden)] for _ in range(n_out)]
    assert next(values, None) is None
    h = [0.0] * hidden
    outputs = []
    for x in inputs:
        h = [
            math.tanh(
                sum(w_in[r][k] * x[k] for k in range(n_in))
                + sum(w_rec[r][k] * h[k] for k in range(hidden))
                + b[r]
            )
            for r in range(hidden)
        ]
        outputs.append(
            [math.tanh(sum(w_out[o][k] * h[k] for k in range(hidden))) for o in range(n_out)]
        )
    return outputs


def test_example_brain_registers_and_steps_cartpole_like_its_reference() -> None:
    """Importing the example registers "Elman"; on CartPole it computes the documented outputs
    (to 1e-12) and their argmax, and a template restored from its state behaves the same."""
    __import__(MODULE)
    assert "Elman" in brain_types()
    env = gym.make("CartPole-v1")
    try:
        config = parse_brain_config({"type": "Elman", "hidden_size": 5}, "brain")
        template = make_template(
            config, env.observation_space, env.action_space, np.random.default_rng(0)
        )
        genome = np.random.default_rng(1).normal(0.0, 1.0, template.genome_size)
        brain = template.build(genome)
        restored = BrainTemplate.from_state(template.to_state()).build(genome)
        observation, _ = env.reset(seed=3)
        brain.reset(np.random.default_rng(0))
        restored.reset(np.random.default_rng(0))
        seen, actions = [], []
        for _ in range(100):
            seen.append([float(v) for v in observation])
            action = brain.step(observation)
            assert restored.step(observation) == action
            actions.append(action)
            observation, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    finally:
        env.close()
    expected = elman_reference(genome, (4, 5, 2), seen)
    assert len(actions) > 10 and actions == [int(np.argmax(out)) for out in expected]
    # the raw outputs, through a [-1, 1] float64 Box action space (action == output)
    box = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float64)
    raw = make_template(config, env.observation_space, box, np.random.default_rng(0)).build(genome)
    raw.reset(np.random.default_rng(0))
    outputs = np.array([raw.step(np.array(x, dtype=np.float32)) for x in seen])
    assert np.max(np.abs(outputs - np.array(expected))) <= 1e-12


def test_example_brain_trains_through_the_imports_key() -> None:
    """The guide's config (imports + brain section) trains for two generations unchanged."""
    snippet = json.loads(guide_block("## Using it", "json"))
    assert snippet["brain"]["type"] == "Elman" and snippet["imports"]
    assert parse_config({**snippet, "imports": [MODULE]}).brain.type_name() == "Elman"
    data = small_config(imports=[MODULE], brain=snippet["brain"], number_generations=2)
    experiment = Experiment(parse_config(data))
    summary = experiment.run()
    assert summary.generations == 2
    assert experiment.template.config.type_name() == "Elman"


def test_unknown_brain_type_names_get_a_did_you_mean() -> None:
    """A misspelt type name names the field and the closest registered type."""
    __import__(MODULE)
    with pytest.raises(
        ConfigError, match=r"^brain\.type: unknown brain type 'Elmann'\. Did you mean `Elman`\?"
    ):
        parse_brain_config({"type": "Elmann"}, "brain")
    with pytest.raises(ConfigError, match=r"imports\[0\]: cannot import module 'no_such_brains'"):
        parse_config(small_config(imports=["no_such_brains"]))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_shared_brain_checks_run_on_an_external_brain_module(tmp_path: Path) -> None:
    """What the guide says works: a brain module outside the package, on PYTHONPATH, named in
    NEURO_EVOLUTION_TEST_IMPORTS, gets every shared check of tests/brains/test_brains.py."""
    tests = Path(__file__).resolve().parents[1]
    outside = tmp_path / "my_brains"
    outside.mkdir()
    (outside / "__init__.py").write_text("")
    (outside / "elman.py").write_text((tests / "examples" / "elman_brain.py").read_text())
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        "NEURO_EVOLUTION_TEST_IMPORTS": "my_brains.elman",
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "Elman"]
        + [str(tests / "brains" / "test_brains.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=280,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    passed = re.search(r"(\d+) passed", result.stdout)
    assert passed and int(passed[1]) >= 8, result.stdout[-2000:]
