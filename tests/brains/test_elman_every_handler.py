"""A user's brain type reaches every handler and the export with no edit inside the package.

The guide's Elman brain (tests/examples/elman_brain.py, copied outside the package as
``my_brains/elman.py`` on PYTHONPATH and named under ``imports``, as docs/writing-a-brain.md
says) trains from the command line: on the sequential, mp, dask and vectorized handlers with
identical logs; on the jax handler (float64, JAX_ENABLE_X64) with the log of the vectorized
handler's numpy batch brains on the same gymnax env, fitness within 1e-9 as
tests/evaluation/jax/test_jax_handler.py compares them. ``python -m neuro_evolution.export`` writes
its ONNX model, and onnxruntime steps it to the numpy brain's actions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import require, without_time

from neuro_evolution import train
from neuro_evolution.run.directory import CANDIDATE_FILE, load_candidate, read_log

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "elman_brain.py"
CONFIG: dict[str, Any] = {
    "imports": ["my_brains.elman"],
    "environment": {"id": "CartPole-v1"},
    "random_seed": 5,
    "number_generations": 2,
    "optimizer": {"type": "MU_ES", "mu": 4, "lambda_": 8},
    "brain": {"type": "Elman", "hidden_size": 3},
    "episode_runner": {"number_fitness_runs": 2, "max_steps_per_run": 60},
    "validation": {"every_generations": 2, "episodes": 2},
}
GYMNAX = {"id": "CartPole-v1", "backend": "gymnax"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the package holding the user's module ``my_brains/elman.py``."""
    folder = tmp_path_factory.mktemp("user")
    (folder / "my_brains").mkdir()
    (folder / "my_brains" / "__init__.py").write_text("")
    (folder / "my_brains" / "elman.py").write_text(EXAMPLE.read_text())
    return folder


def user_env(workdir: Path, **extra: str) -> dict[str, str]:
    """The environment of a command as the user runs it: the user's folder on PYTHONPATH."""
    path = os.pathsep.join([str(workdir), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


def start(workdir: Path, name: str, evaluation: dict[str, Any], **changes: Any) -> Any:
    """A ``python -m neuro_evolution.train`` process of the Elman config on ``evaluation``."""
    config = workdir / f"{name}.json"
    config.write_text(json.dumps({**CONFIG, "evaluation": evaluation, **changes}))
    args = [sys.executable, "-m", "neuro_evolution.train", config.name, "--out", name, "--quiet"]
    x64 = {"JAX_ENABLE_X64": "1"} if changes.get("environment") == GYMNAX else {}
    return subprocess.Popen(
        args, cwd=workdir, env=user_env(workdir, **x64), stderr=subprocess.PIPE, text=True
    )


def finish(workdir: Path, name: str, process: Any) -> list[dict[str, Any]]:
    """The run's log without wall time, once its process exited 0 without a fallback."""
    _, err = process.communicate(timeout=240)
    assert process.returncode == 0, err
    assert "falls back" not in err, err  # the vectorized handler used the batch form
    return without_time(read_log(workdir / name / "log.csv"))


@pytest.fixture(scope="module")
def numpy_logs(workdir: Path) -> dict[str, list[dict[str, Any]]]:
    """The logs of the runs on the handlers that promise identical results."""
    handlers = {
        "sequential": {"handler": "sequential"},
        "mp": {"handler": "mp", "workers": 2},
        "dask": {"handler": "dask", "workers": 2},
        "vectorized": {"handler": "vectorized"},
    }
    logs = {}
    for name, evaluation in handlers.items():  # one at a time: mp and dask use both cores
        logs[name] = finish(workdir, name, start(workdir, name, evaluation))
    return logs


def test_the_users_brain_trains_identically_on_every_numpy_handler(numpy_logs) -> None:
    """Same config and seed: the sequential, mp, dask and vectorized (batch form) logs are
    identical, validation included."""
    reference = numpy_logs["sequential"]
    assert len(reference) == 2 and reference[-1]["validation_mean"] is not None
    for name, log in numpy_logs.items():
        assert log == reference, name


def test_the_users_brain_on_the_jax_handler_logs_what_its_numpy_batch_brain_logs(
    workdir: Path,
) -> None:
    """On a gymnax CartPole in float64 the jax handler (the template's JAX form) gives the
    lockstep run's log (numpy batch brains stepping the same env): the same env steps in every
    generation and fitness within 1e-9."""
    require("jax")
    handlers = {
        "jax": {"handler": "jax", "precision": "float64"},
        "lockstep": {"handler": "vectorized"},
    }
    logs = {
        name: finish(workdir, name, start(workdir, name, evaluation, environment=GYMNAX))
        for name, evaluation in handlers.items()
    }
    assert len(logs["jax"]) == len(logs["lockstep"]) == 2
    for got, expected in zip(logs["jax"], logs["lockstep"]):
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value, abs=1e-9), key
            else:
                assert got[key] == value, key


def test_the_users_brain_exports_to_onnx_that_acts_as_its_numpy_brain(
    workdir: Path, numpy_logs
) -> None:
    """``export`` of the sequential run's candidate through the template's export step: the
    ONNX model, stepped by onnxruntime with its hidden state fed back, chooses the numpy
    brain's action at every step of a CartPole episode."""
    require("export")
    import onnxruntime

    done = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.export", "sequential"]
        + ["--format", "onnx", "--out", "elman.onnx"],
        cwd=workdir, env=user_env(workdir), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    import examples.elman_brain  # noqa: F401  (the same code: the run's template loads here)

    candidate, template = load_candidate(workdir / "sequential" / CANDIDATE_FILE)
    brain = template.build(candidate.genome)
    session = onnxruntime.InferenceSession(
        str(workdir / "elman.onnx"), providers=["CPUExecutionProvider"]
    )
    env = gym.make("CartPole-v1")
    observation, _ = env.reset(seed=3)
    brain.reset(np.random.default_rng(3))
    state = np.zeros(3)
    actions = []
    for _ in range(200):
        action, state = session.run(
            ["action", "next.hidden_state"], {"observation": observation, "hidden_state": state}
        )
        assert int(action) == brain.step(observation)
        np.testing.assert_allclose(state, brain.internal_state()["hidden_state"], atol=1e-12)
        actions.append(int(action))
        observation, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            break
    env.close()
    assert len(actions) > 5 and len(set(actions)) == 2  # a real episode, both actions chosen


def test_a_brain_type_without_a_jax_form_is_refused_at_start_up_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A type whose template does not write ``jax_brain`` stops ``train`` on the jax handler
    before anything is written: exit 2, one line naming brain.type, the type and the method."""
    require("jax")
    data = {
        **CONFIG,
        "imports": ["examples.numpy_only_brain"],
        "brain": {"type": "NumpyOnlyElman", "hidden_size": 3},
        "environment": GYMNAX,
        "evaluation": {"handler": "jax"},
    }
    config = tmp_path / "refused.json"
    config.write_text(json.dumps(data))
    assert train.main([str(config), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "neuro_evolution.train: error: brain.type: brain type 'NumpyOnlyElman' has no JAX form; "
        "write NumpyOnlyTemplate.jax_brain() (see docs/writing-a-brain.md) or use another "
        "evaluation handler\n"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["refused.json"]
