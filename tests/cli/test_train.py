"""End to end: the train and replay command lines, determinism, run directory contents."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from helpers import require, small_config

from neuro_evolution import replay, train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.support.atomic import load_npz


def write_config(path, data):
    path.write_text(json.dumps(data))
    return path


def without_time(log):
    return [{k: v for k, v in row.to_dict().items() if k != "wall_time"} for row in log]


def test_train_writes_a_complete_run_directory_and_replay_reads_it(tmp_path, capsys):
    """train fills the run directory; replay rebuilds the best brain from it alone."""
    config_path = write_config(tmp_path / "tiny.json", small_config())
    out = tmp_path / "run"
    assert train.main([str(config_path), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert f"results: {out}" in printed
    for name in ("config.json", "log.csv", "hall_of_fame.npz", "fitness.png"):
        assert (out / name).is_file(), name
    log = read_log(out / "log.csv")
    assert [row["generation"] for row in log] == [0, 1, 2]
    resolved = json.loads((out / "config.json").read_text())
    assert resolved["episode_runner"]["max_steps_penalty"] == 0.0  # defaults filled in
    hall = load_npz(out / "hall_of_fame.npz")
    assert hall["fitness"][0] == log[-1]["best_so_far"]

    returns = replay.replay(out, episodes=2, seed=3)
    assert len(returns) == 2
    assert replay.main([str(out), "--episodes", "1"]) == 0
    assert "mean return" in capsys.readouterr().out


@pytest.mark.slow
def test_replay_records_videos(tmp_path):
    """replay --video writes one MP4 per episode (rgb_array rendering, no display needed)."""
    require("video")
    out = tmp_path / "run"
    Experiment(parse_config(small_config(number_generations=1)), run_dir=out).run()
    assert replay.main([str(out), "--episodes", "2", "--video", str(tmp_path / "videos")]) == 0
    assert len(list((tmp_path / "videos").glob("*.mp4"))) == 2


def test_replay_uses_the_saved_template_state(tmp_path):
    """Replaying gives the brain the training evaluated: same return for the same env seed."""
    out = tmp_path / "run"
    data = small_config(episode_runner={"number_fitness_runs": 1, "fix_seed_for_generation": True})
    experiment = Experiment(parse_config(data), run_dir=out)
    experiment.run()
    best = experiment.hall_of_fame.genomes[0]
    brain = experiment.template.build(best)
    runner = experiment.spec.make()
    expected = runner.run_episode(brain, 11).fitness
    assert replay.replay(out, episodes=1, seed=11) == [expected]


def test_same_config_and_seed_give_identical_logs(tmp_path):
    """Determinism: two runs of one config agree exactly (wall time aside)."""
    data = small_config(number_generations=4)
    first = Experiment(parse_config(data), run_dir=tmp_path / "a")
    second = Experiment(parse_config(data), run_dir=tmp_path / "b")
    first.run()
    second.run()
    assert without_time(first.log) == without_time(second.log)
    assert np.array_equal(first.hall_of_fame.genomes, second.hall_of_fame.genomes)
    a = (tmp_path / "a" / "hall_of_fame.npz").read_bytes()
    b = (tmp_path / "b" / "hall_of_fame.npz").read_bytes()
    assert a == b
    other = Experiment(parse_config(small_config(number_generations=4, random_seed=8)))
    other.run()
    assert without_time(other.log) != without_time(first.log)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (small_config(brain={"type": "FFNN", "hidden_layers": [-3]}), "brain.hidden_layers[0]"),
        (small_config(environment={"id": "Blackjack-v1"}), "observation space"),
        ("{not json", "invalid JSON"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_run_directory(
    tmp_path, monkeypatch, capsys, data, message
):
    """Bad input: one line on stderr naming the problem, exit code 2, nothing written."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "bad.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    assert train.main([str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and err.startswith("neuro_evolution.train: error:")
    assert not (tmp_path / "runs").exists()


def test_missing_config_file_and_bad_run_dir(tmp_path, monkeypatch, capsys):
    """Missing files are named; replay of a folder that is no run directory exits 2."""
    monkeypatch.chdir(tmp_path)
    assert train.main(["nope.json"]) == 2
    assert "nope.json: no such config file" in capsys.readouterr().err
    assert replay.main([str(tmp_path)]) == 2
    assert "config.json: missing" in capsys.readouterr().err


def test_command_line_errors_print_no_traceback(tmp_path):
    """The real command, run as a user would: exit 2, exactly one line on stderr naming the
    field, no traceback, and nothing created (no runs/ folder, no --out directory)."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(small_config(number_generations=-1)))
    for out in ([], ["--out", str(tmp_path / "run")]):
        process = subprocess.run(
            [sys.executable, "-m", "neuro_evolution.train", str(path), *out],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert process.returncode == 2
        assert "Traceback" not in process.stderr
        assert process.stderr.count("\n") == 1 and process.stderr.endswith("\n"), process.stderr
        assert "number_generations: must be an integer >= 1, got -1" in process.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]
