"""Exports of real runs: the command line, validation replayed through the export, the genome
selection of replay, and one-line refusals that leave nothing behind.

Rules held: a CartPole run's validation replayed through the ONNX model or the numpy file gives
the run's recorded validation returns exactly; a Pendulum (Box) run's, through the numpy file
exactly, through the ONNX model within 1e-9 of each episode's return (measured: the float64
MatMul of onnxruntime sums in another order, moving states by ~1e-16 and returns by less).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from examples.elman_brain import ElmanConfig, ElmanTemplate
from export_cases import exported_pair
from helpers import nsga2_config, qd_config, require, small_config

from neuro_evolution import replay, train
from neuro_evolution.export import export_run, load_policy, replay_exported
from neuro_evolution.export.__main__ import main as export_main
from neuro_evolution.export.numpy_file import policy_files
from neuro_evolution.export.policy import policy_graph
from neuro_evolution.moo.files import PARETO_FILE, load_pareto
from neuro_evolution.optimizers.members import row_scaler
from neuro_evolution.qd.files import ARCHIVE_FILE, load_archive
from neuro_evolution.run.directory import load_candidate, load_hall_of_fame
from neuro_evolution.support.atomic import load_npz
from neuro_evolution.support.errors import UserError

require("export")

ONNX_RETURN_TOLERANCE = 1e-9


def train_run(tmp_path: Path, name: str, config: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(config))
    run_dir = tmp_path / name
    assert train.main([str(path), "--out", str(run_dir), "--quiet"]) == 0
    return run_dir


def cartpole_config(**changes: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "brain": {"type": "CTRNN", "number_neurons": 4},
        "optimizer": {"type": "PGPE", "population_size": 8, "radius_init": 3.0},
        "observation_normalization": {},
        "episode_runner": {"number_fitness_runs": 1},
        "validation": {"every_generations": 3, "episodes": 4},
    }
    return small_config(**{**settings, **changes})


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3-generation CartPole CTRNN run with observation normalization and validation."""
    return train_run(tmp_path_factory.mktemp("cartpole"), "run", cartpole_config())


@pytest.mark.parametrize("format", ["onnx", "numpy"])
def test_cartpole_validation_through_the_export_is_the_runs_exactly(
    cartpole_run: Path, tmp_path: Path, format: str, capsys: pytest.CaptureFixture
) -> None:
    """Exported by the command line, replayed by ``replay --validation --exported``: every
    held-out return equals the run's recorded one."""
    out = tmp_path / ("policy.onnx" if format == "onnx" else "policy.py")
    assert export_main([str(cartpole_run), "--format", format, "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    candidate, _ = load_candidate(cartpole_run / "candidate.npz")
    assert candidate.score is not None and candidate.scaler is not None
    through, own = replay_exported(cartpole_run, out)
    assert through == own == list(candidate.score.returns)
    assert len(set(through)) > 1  # different episodes, not one constant
    assert replay.main([str(cartpole_run), "--validation", "--exported", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"the run's validation: {candidate.score.mean:.10g}" in printed
    assert replay.main([str(cartpole_run), "--exported", str(out)]) == 2
    assert "add --validation" in capsys.readouterr().err


def test_a_box_run_replays_within_the_stated_tolerance(cartpole_run: Path, tmp_path: Path) -> None:
    """Pendulum (Box actions, squashed to the bounds), CTRNN with normalization: the numpy
    file reproduces every validation return exactly, the ONNX model within 1e-9."""
    config = cartpole_config(
        environment={"id": "Pendulum-v1"},
        number_generations=2,
        validation={"every_generations": 2, "episodes": 3},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 100},
    )
    run_dir = train_run(tmp_path, "pendulum", config)
    candidate, _ = load_candidate(run_dir / "candidate.npz")
    assert candidate.score is not None
    export_run(run_dir, "numpy", tmp_path / "pendulum_policy.py")
    export_run(run_dir, "onnx", tmp_path / "pendulum.onnx")
    through_numpy, _ = replay_exported(run_dir, tmp_path / "pendulum_policy.py")
    through_onnx, _ = replay_exported(run_dir, tmp_path / "pendulum.onnx")
    assert through_numpy == list(candidate.score.returns)
    np.testing.assert_allclose(
        through_onnx, candidate.score.returns, rtol=0, atol=ONNX_RETURN_TOLERANCE
    )
    export_run(cartpole_run, "numpy", tmp_path / "cartpole_policy.py")
    with pytest.raises(UserError, match="was exported for .*CartPole-v1.* but .* trains on"):
        replay_exported(run_dir, tmp_path / "cartpole_policy.py")


def stored_genome(run_dir: Path, name: str) -> tuple[Any, np.ndarray, Any]:
    """(template, genome, scaler) of row 2 of the hall of fame, row 1 of the archive or of
    the front, read straight from the run's files."""
    if name == "hall_of_fame":
        hall_of_fame, template = load_hall_of_fame(run_dir / "hall_of_fame.npz")
        return template, hall_of_fame.genomes[2], hall_of_fame.scaler(2)
    data, template = (
        load_archive(run_dir / ARCHIVE_FILE)
        if name == "elite"
        else load_pareto(run_dir / PARETO_FILE)
    )
    return template, data["genomes"][1], row_scaler(data, 1)


def test_hall_of_fame_elite_and_front_are_picked_as_replay_picks_them(tmp_path: Path) -> None:
    """--hall-of-fame K, --elite K (or I,J) and --front K export that row's genome with its
    scaler (the file holds the policy of the stored row, not of the candidate); its validation
    returns equal the framework brain's for that genome."""
    runs = {
        "hall_of_fame": (cartpole_config(hall_of_fame_size=3), ["--hall-of-fame", "2"]),
        "elite": (qd_config(validation={"episodes": 2}), ["--elite", "1"]),
        "front": (nsga2_config(validation={"episodes": 2}), ["--front", "1"]),
    }
    space = gym.make("CartPole-v1").observation_space
    for name, (config, flags) in runs.items():
        run_dir = train_run(tmp_path, name, config)
        out = tmp_path / f"{name}.py"
        assert export_main([str(run_dir), "--format", "numpy", "--out", str(out), *flags]) == 0
        assert load_policy(out).metadata["genome"] == f"{name} {flags[1]}"
        _, expected = policy_files(policy_graph(*stored_genome(run_dir, name), space), {}, "", "x")
        written = load_npz(out.with_suffix(".npz"))
        for key, value in expected.items():
            if key != "metadata":
                assert np.array_equal(written[key], value), (name, key)
        through, own = replay_exported(run_dir, out)
        assert through == own
        if name == "elite":  # the same elite named by its grid cell
            data, _ = load_archive(run_dir / ARCHIVE_FILE)
            cell = np.unravel_index(int(data["cells"][1]), tuple(data["descriptor_bins"]))
            by_cell = ["--elite", ",".join(str(int(i)) for i in cell)]
            out = tmp_path / "by_cell.py"
            assert (
                export_main([str(run_dir), "--format", "numpy", "--out", str(out), *by_cell]) == 0
            )
            assert load_policy(out).metadata["genome"] == "elite 1"


def refusal(argv: list[str], capsys: pytest.CaptureFixture, folder: Path) -> str:
    """The one stderr line of an export refused with exit code 2 that wrote nothing."""
    before = sorted(folder.iterdir())
    assert export_main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1, error
    assert sorted(folder.iterdir()) == before  # no export, no temporary file
    return error


def test_bad_inputs_are_refused_in_one_line_with_nothing_written(
    cartpole_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    onnx_out = str(out / "p.onnx")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "not a run directory" in refusal(
        [str(empty), "--format", "onnx", "--out", onnx_out], capsys, out
    )
    (empty / "config.json").write_text((cartpole_run / "config.json").read_text())
    assert "no candidate yet" in refusal(
        [str(empty), "--format", "onnx", "--out", onnx_out], capsys, out
    )
    run = str(cartpole_run)
    assert "--format must be one of onnx, numpy, got 'tflite'" in refusal(
        [run, "--format", "tflite", "--out", onnx_out], capsys, out
    )
    assert "--hall-of-fame must be in 0..9, got 10" in refusal(
        [run, "--format", "onnx", "--out", onnx_out, "--hall-of-fame", "10"], capsys, out
    )
    assert "--front: the run's optimizer PGPE stores no members (Pgpe.stored_members()" in refusal(
        [run, "--format", "onnx", "--out", onnx_out, "--front", "0"], capsys, out
    )
    assert "is a folder: name the file to write" in refusal(
        [run, "--format", "onnx", "--out", str(out)], capsys, out
    )
    assert "does not exist" in refusal(
        [run, "--format", "onnx", "--out", str(out / "missing" / "p.onnx")], capsys, out
    )
    assert "name a .py file" in refusal(
        [run, "--format", "numpy", "--out", str(out / "policy.txt")], capsys, out
    )


def test_a_missing_extra_names_the_install_line(
    cartpole_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch
) -> None:
    """Without the onnx package (import blocked), --format onnx says how to install it."""
    monkeypatch.setitem(sys.modules, "onnx", None)
    error = refusal(
        [str(cartpole_run), "--format", "onnx", "--out", str(tmp_path / "p.onnx")], capsys, tmp_path
    )
    assert "needs the onnx package: pip install -e '.[export]'" in error


def test_a_brain_that_cannot_export_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A CTRNN with state noise (its draws cannot be exported) and a user's brain type whose
    template has no export_step are refused in one line each, the latter naming the method."""
    noisy = cartpole_config(
        brain={"type": "CTRNN", "number_neurons": 3, "parameter_perturbations": 0.1},
        number_generations=1,
    )
    run_dir = train_run(tmp_path, "noisy", noisy)
    out = tmp_path / "out"
    out.mkdir()
    error = refusal([str(run_dir), "--format", "onnx", "--out", str(out / "p.onnx")], capsys, out)
    assert "parameter_perturbations is 0.1" in error
    elman = cartpole_config(
        brain={"type": "NumpyOnlyElman", "hidden_size": 3},
        imports=["examples.numpy_only_brain"],
        number_generations=1,
    )
    run_dir = train_run(tmp_path, "elman", elman)
    error = refusal([str(run_dir), "--format", "numpy", "--out", str(out / "p.py")], capsys, out)
    assert error == (
        "neuro_evolution.export: error: brain.type: brain type 'NumpyOnlyElman' has no export "
        "step; write NumpyOnlyTemplate.export_step() (see docs/export.md) to export it"
    )


def test_a_user_brain_exports_through_its_templates_export_step(tmp_path: Path) -> None:
    """The Elman example's ``export_step`` exports a policy that acts as the brain does."""
    env = gym.make("CartPole-v1")
    config = ElmanConfig(hidden_size=3)
    spaces = env.observation_space, env.action_space
    template = ElmanTemplate.from_config(config, *spaces, np.random.default_rng(0))
    genome = np.random.default_rng(4).normal(0.0, 1.0, template.genome_size)
    onnx_policy, numpy_policy = exported_pair(
        tmp_path, template, genome, None, env.observation_space
    )
    brain = template.build(genome)
    observation, _ = env.reset(seed=5)
    brain.reset(np.random.default_rng(5))
    onnx_state, numpy_state = onnx_policy.initial_state(), numpy_policy.initial_state()
    for _ in range(30):
        action = brain.step(observation)
        onnx_action, onnx_state = onnx_policy.step(observation, onnx_state)
        numpy_action, numpy_state = numpy_policy.step(observation, numpy_state)
        assert int(onnx_action) == int(numpy_action) == action
        np.testing.assert_allclose(numpy_state["hidden_state"], brain.h, rtol=0, atol=1e-12)
        observation, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
