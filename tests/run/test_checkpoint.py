"""Checkpoint files, training_status.json, each refusal and warning of a resume (in process)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import small_config

from neuro_evolution import train
from neuro_evolution.config.tree import config_to_dict, parse_config
from neuro_evolution.run.checkpoint import (
    CHECKPOINT_DIR,
    Checkpointer,
    encode_checkpoint,
    install_checkpoints,
    read_checkpoint,
)
from neuro_evolution.run.directory import LogRow
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.resume import changed_keys, resume_experiment
from neuro_evolution.run.status import (
    STATUS_FILE,
    STATUS_FORMAT_VERSION,
    library_versions,
)
from neuro_evolution.support.atomic import atomic_savez, load_npz
from neuro_evolution.support.errors import ResumeError, ResumeWarning


def tiny(**changes: Any) -> dict[str, Any]:
    """Four generations of tiny CartPole, a checkpoint after every generation, three kept."""
    data = small_config(
        number_generations=4,
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 40},
        checkpoint={"every_generations": 1, "keep": 3},
    )
    data.update(changes)
    return data


def partial_run(run_dir: Path, data: dict[str, Any], generations: int) -> Experiment:
    """Run ``generations`` generations of ``data`` into ``run_dir`` with checkpoints, then stop."""
    run_dir.mkdir(parents=True, exist_ok=True)
    experiment = Experiment(parse_config(data), run_dir=run_dir)
    install_checkpoints(experiment)
    for _ in range(generations):
        experiment.step()
    experiment.close()
    return experiment


def straight_run(data: dict[str, Any]) -> Experiment:
    """The uninterrupted run, in memory."""
    experiment = Experiment(parse_config(data))
    experiment.run()
    return experiment


def without_time(log: list[LogRow]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.to_dict().items() if k != "wall_time"} for row in log]


def assert_same_state(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Two state dicts hold the same keys, and the same bytes and dtype under each."""
    assert a.keys() == b.keys()
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), key


def assert_same_run(resumed: Experiment, reference: Experiment) -> None:
    """Same log (wall time aside), optimizer state and hall of fame as the reference."""
    assert without_time(resumed.log) == without_time(reference.log)
    assert_same_state(resumed.optimizer.state(), reference.optimizer.state())
    assert_same_state(resumed.hall_of_fame.state(), reference.hall_of_fame.state())


def status(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / STATUS_FILE).read_text())


def edit_status(run_dir: Path, **changes: Any) -> None:
    (run_dir / STATUS_FILE).write_text(json.dumps({**status(run_dir), **changes}))


def checkpoint_path(run_dir: Path, generation: int) -> Path:
    return run_dir / CHECKPOINT_DIR / f"gen-{generation:06d}.npz"


@pytest.fixture(scope="module")
def reference() -> Experiment:
    """The uninterrupted four-generation run every resumed run must equal."""
    return straight_run(tiny())


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run stopped after 3 of 4 generations (checkpoints 1, 2, 3)."""
    partial_run(tmp_path / "run", tiny(), 3)
    return tmp_path / "run"


def test_checkpoints_follow_every_and_keep_and_the_status_lists_them(tmp_path):
    """Checkpoints after every N generations and at the end; only the newest `keep` remain."""
    data = tiny(number_generations=5, checkpoint={"every_generations": 2, "keep": 2})
    experiment = Experiment(parse_config(data), run_dir=tmp_path)
    install_checkpoints(experiment)
    experiment.run()
    files = sorted(p.name for p in (tmp_path / CHECKPOINT_DIR).iterdir())
    assert files == ["gen-000004.npz", "gen-000005.npz"]
    written = status(tmp_path)
    assert written["format_version"] == STATUS_FORMAT_VERSION
    assert written["versions"] == library_versions()
    assert written["generation"] == 5 and written["finished"] is True
    assert written["latest_checkpoint"] == f"{CHECKPOINT_DIR}/gen-000005.npz"
    assert [e["generation"] for e in written["checkpoints"]] == [4, 5]
    assert written["wall_time"] == written["checkpoints"][-1]["wall_time"] > 0


def test_a_checkpoint_holds_every_part_without_pickle(run_dir, reference):
    """The npz loads with allow_pickle=False and holds optimizer, hall of fame, template, log."""
    with np.load(checkpoint_path(run_dir, 3), allow_pickle=False) as data:
        keys = set(data.files)
    assert {"meta", "hall_of_fame/genomes", "template/layer_sizes"} <= keys
    assert any(key.startswith("optimizer/") for key in keys)
    checkpoint = read_checkpoint(checkpoint_path(run_dir, 3))
    assert checkpoint.generation == 3 and len(checkpoint.log) == 3
    saved = [LogRow.from_dict(row) for row in checkpoint.log]
    assert without_time(saved) == without_time(reference.log[:3])
    assert checkpoint.config["number_generations"] == 4


def test_object_arrays_in_a_state_are_refused(tmp_path):
    """A part whose state holds an object array cannot be written without pickle: TypeError."""
    experiment = Experiment(parse_config(tiny()))
    experiment.step()
    experiment.novelty = type("Bad", (), {"state": lambda self: {"x": np.array([{}, 1])}})()
    with pytest.raises(TypeError, match="novelty state 'x': object arrays"):
        encode_checkpoint(experiment, 0.0)
    experiment.close()


def test_resume_continues_exactly_and_restores_counters(run_dir, reference):
    """Resuming after 3 of 4 generations ends identical to the uninterrupted run."""
    experiment = resume_experiment(run_dir)
    assert experiment.generation == 3 and len(experiment.log) == 3
    assert experiment.elapsed_before == status(run_dir)["wall_time"]
    experiment.run()
    assert_same_run(experiment, reference)
    assert status(run_dir)["generation"] == 4


@pytest.mark.parametrize("damage", ["garble", "truncate", "wrong keys"])
def test_a_corrupted_latest_checkpoint_falls_back_to_the_previous(run_dir, reference, damage):
    """Unreadable, truncated or keyless latest checkpoint: a warning, then resume from the one
    before, and the run still ends identical."""
    path = checkpoint_path(run_dir, 3)
    data = bytearray(path.read_bytes())
    if damage == "garble":
        data[len(data) // 2 : len(data) // 2 + 64] = b"\xff" * 64
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path.write_bytes(bytes(data[: len(data) // 3]))
    else:
        atomic_savez(path, {"x": np.zeros(3)})
    if damage != "garble":  # the npz itself must be found unusable, not only its hash
        entries = status(run_dir)["checkpoints"]
        for entry in entries:
            entry.pop("sha256")
        edit_status(run_dir, checkpoints=entries)
    with pytest.warns(
        ResumeWarning, match="gen-000003.npz.*falling back to checkpoints/gen-000002"
    ):
        experiment = resume_experiment(run_dir)
    assert experiment.generation == 2
    experiment.run()
    assert_same_run(experiment, reference)
    assert not path.exists() or read_checkpoint(path).generation == 3  # pruned or rewritten


def test_no_usable_checkpoint_is_an_error(run_dir):
    """When every listed checkpoint is damaged the resume is refused, naming each problem."""
    for generation in (1, 2, 3):
        checkpoint_path(run_dir, generation).write_bytes(b"not a zip")
    with pytest.warns(ResumeWarning), pytest.raises(ResumeError, match="no usable checkpoint"):
        resume_experiment(run_dir)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("missing status", "training_status.json: missing"),
        ("bad json", "training_status.json: invalid JSON at line 1"),
        ("future version", f"format_version {STATUS_FORMAT_VERSION + 1} is newer"),
        ("unknown version", "unknown format_version 'one'"),
        ("changed hash", "config_hash does not match config.json"),
        ("missing checkpoint", "gen-000003.npz: missing, but training_status.json names it"),
        ("changed config", r"changed since the checkpoint \(brain.hidden_layers, optimizer.mu\)"),
        ("no run dir", "no such run directory"),
    ],
)
def test_resume_refuses_with_one_clear_line(run_dir, damage, message):
    """Each broken or tampered run directory is refused with a one-line ResumeError."""
    if damage == "missing status":
        (run_dir / STATUS_FILE).unlink()
    elif damage == "bad json":
        (run_dir / STATUS_FILE).write_text("{not json")
    elif damage == "future version":
        edit_status(run_dir, format_version=STATUS_FORMAT_VERSION + 1)
    elif damage == "unknown version":
        edit_status(run_dir, format_version="one")
    elif damage == "changed hash":
        edit_status(run_dir, config_hash="0" * 64)
    elif damage == "missing checkpoint":
        checkpoint_path(run_dir, 3).unlink()
    elif damage == "changed config":
        config = json.loads((run_dir / "config.json").read_text())
        config["brain"]["hidden_layers"] = [5]
        config["optimizer"]["mu"] = 5
        (run_dir / "config.json").write_text(json.dumps(config))
    else:
        run_dir = run_dir / "nope"
    with pytest.raises(ResumeError, match=message) as error:
        resume_experiment(run_dir)
    assert "\n" not in str(error.value)


def test_number_generations_and_evaluation_may_change_on_resume(run_dir, tmp_path):
    """config.json with other number_generations / evaluation resumes; --generations extends."""
    config = json.loads((run_dir / "config.json").read_text())
    config["number_generations"] = 5
    config["evaluation"]["workers"] = 3
    (run_dir / "config.json").write_text(json.dumps(config))
    assert changed_keys(config_to_dict(parse_config(tiny())), config) == []
    experiment = resume_experiment(run_dir, number_generations=6)
    experiment.run()
    assert experiment.generation == 6
    assert_same_run(experiment, straight_run(tiny(number_generations=6)))
    assert json.loads((run_dir / "config.json").read_text())["number_generations"] == 6
    with pytest.raises(ResumeError, match="below the 6 generations already run"):
        resume_experiment(run_dir, number_generations=5)


def test_library_version_differences_warn_one_line_each(run_dir, reference):
    """Other numpy / deap versions in the status: one warning each, and the resume goes on."""
    versions = {**library_versions(), "numpy": "1.0.0", "deap": "0.9"}
    edit_status(run_dir, versions=versions)
    with pytest.warns(ResumeWarning) as caught:
        experiment = resume_experiment(run_dir)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert "numpy 1.0.0" in messages[0] and "deap 0.9" in messages[1]
    experiment.run()
    assert_same_run(experiment, reference)


def test_a_saved_template_that_differs_from_a_fresh_one_warns_and_is_used(run_dir):
    """The template comes from the checkpoint, not regenerated; a difference is a warning."""
    path = checkpoint_path(run_dir, 3)
    arrays = load_npz(path)
    arrays["template/layer_sizes"] = arrays["template/layer_sizes"].copy()
    meta = json.loads(str(arrays["meta"]))
    meta["scalars"]["template"]["io.bounded"] = False
    arrays["meta"] = np.array(json.dumps(meta))
    atomic_savez(path, arrays)
    entries = status(run_dir)["checkpoints"]
    entries[-1].pop("sha256")
    edit_status(run_dir, checkpoints=entries)
    with pytest.warns(ResumeWarning, match="saved template differs from a freshly built one"):
        experiment = resume_experiment(run_dir)
    assert experiment.template.io.bounded is False
    experiment.close()


def test_novelty_archive_is_checkpointed_and_restored(tmp_path):
    """With novelty search the archive is in the checkpoint and the resumed run is identical."""
    novelty = {"novelty_weight": 0.5, "behavioral_max_length": 10, "novelty_nearest_k": 3}
    data = tiny(novelty=novelty)
    partial_run(tmp_path, data, 2)
    assert "novelty/behaviors" in load_npz(checkpoint_path(tmp_path, 2))
    resumed = resume_experiment(tmp_path)
    resumed.run()
    reference = straight_run(data)
    assert_same_run(resumed, reference)
    assert_same_state(resumed.novelty.state(), reference.novelty.state())


def test_train_resume_command_prints_warnings_and_errors_as_one_line(run_dir, capsys):
    """The CLI: warnings as `warning:` lines, refusals as one error line with exit code 2, a
    finished run says so and exits 0."""
    edit_status(run_dir, versions={**library_versions(), "gymnasium": "0.29"})
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("neuro_evolution.train: warning: training_status.json: the run was")
    assert err.count("\n") == 1 and "gymnasium 0.29" in err
    assert train.main(["--resume", str(run_dir)]) == 0
    assert "already finished its 4 generations" in capsys.readouterr().out
    (run_dir / STATUS_FILE).write_text("[]")
    assert train.main(["--resume", str(run_dir)]) == 2
    err = capsys.readouterr().err
    expected = f"{run_dir / STATUS_FILE}: must hold a JSON object, got list"
    assert err == f"neuro_evolution.train: error: {expected}\n"


@pytest.mark.parametrize(
    "argv", [[], ["a.json", "--resume", "run"], ["--resume", "run", "--out", "elsewhere"]]
)
def test_train_needs_exactly_one_of_config_and_resume(argv, capsys):
    """Neither or both of CONFIG / --resume (or --out with --resume) is a usage error, exit 2."""
    with pytest.raises(SystemExit) as exit_info:
        train.main(argv)
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_first_signal_asks_for_a_stop_and_the_second_stops_at_once():
    """StopRequest while generations run: the first signal only sets the flag, the second
    raises KeyboardInterrupt; the exit code is 128 + the first signal."""
    request = train.StopRequest(train.PROGRAM)
    assert not request.requested()
    with request.graceful():
        request(signal.SIGTERM, None)
        assert request.requested() and request.signal == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):
            request(signal.SIGINT, None)
    assert request.exit_code() == 128 + signal.SIGTERM


def test_a_signal_outside_the_generations_stops_at_once():
    """Connecting, starting workers, shutting down: nothing to finish, the first signal stops."""
    request = train.StopRequest(train.PROGRAM)
    with pytest.raises(KeyboardInterrupt):
        request(signal.SIGTERM, None)
    assert request.exit_code() == 128 + signal.SIGTERM


def test_checkpointer_needs_a_run_directory() -> None:
    """No run directory: a clear error instead of checkpoints written nowhere."""
    experiment = Experiment(parse_config(tiny()))
    with pytest.raises(ValueError, match="need a run directory"):
        Checkpointer(experiment)
