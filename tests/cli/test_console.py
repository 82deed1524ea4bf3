"""A quiet, uniform console: one error prefix, one handler-line format, one ``warning:`` line per
thing to know, no third-party noise, and replay saying where its videos went."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import require, small_config

from neuro_evolution import replay, train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.pools import make_handler
from neuro_evolution.evaluation.pools.base import HandlerStatistics, handler_names
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.summary import RunSummary, ValidatedGeneration


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


@pytest.mark.parametrize("program", ["neuro_evolution.train", "neuro_evolution.replay"])
def test_usage_errors_have_the_same_prefix_as_every_other_error(tmp_path, program):
    """argparse's errors say ``neuro_evolution.train: error:`` like config errors (it used to
    say ``python -m neuro_evolution.train: error:``)."""
    result = run([program, "somewhere", "--no-such-option"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith(f"{program}: error: unrecognized arguments")


@pytest.mark.parametrize("name", ["sequential", "mp", "dask", "vectorized"])
def test_every_handler_line_reads_name_colon_details(name):
    """The handler line printed at start has one format for every handler: ``NAME: ...``."""
    handler = make_handler(name, workers=2)
    assert name in handler_names()
    assert handler.describe().startswith(f"{name}: "), handler.describe()


def test_sequential_and_vectorized_lines_after_start(small_cartpole):
    """Started handlers keep the format (the vectorized one names its vector env)."""
    for name, expected in (("sequential", "sequential: "), ("vectorized", "vectorized: native")):
        config = parse_config({**small_cartpole, "evaluation": {"handler": name}})
        experiment = Experiment(config)
        experiment.start()
        try:
            assert experiment.handler.describe().startswith(expected)
        finally:
            experiment.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_resuming_a_box2d_run_prints_no_third_party_warnings(tmp_path):
    """Box2D's SWIG bindings warn three times on import (``builtin type SwigPyPacked has no
    __module__ attribute``); resuming a LunarLander run, even a finished one, prints none."""
    require("box2d")
    data = small_config(
        environment={"id": "LunarLander-v3"},
        number_generations=1,
        optimizer={"type": "MU_ES", "mu": 2, "lambda_": 4},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 10},
    )
    data.pop("validation", None)
    (tmp_path / "config.json").write_text(json.dumps(data))
    first = run(["neuro_evolution.train", "config.json", "--out", "run", "--quiet"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""
    for extra in ([], ["--generations", "2"]):  # finished, then extended
        resumed = run(["neuro_evolution.train", "--resume", "run", "--quiet", *extra], tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stderr == "", resumed.stderr


@pytest.mark.slow
def test_replay_says_where_videos_went_and_counts_episodes_in_words(tmp_path, capsys):
    """``replay --video`` names the folder and the number of files; "over 1 episode"."""
    require("video")
    out = tmp_path / "run"
    Experiment(parse_config(small_config(number_generations=1)), run_dir=out).run()
    videos = tmp_path / "videos"
    assert replay.main([str(out), "--episodes", "1", "--video", str(videos)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "over 1 episode (" in lines[-2]
    assert lines[-1] == f"videos: 1 file in {videos.resolve()}"


def test_render_without_a_display_warns_in_one_line(tmp_path, capsys, monkeypatch):
    """``--render`` where no window can open says so (it used to exit 0 without a word)."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    out = tmp_path / "run"
    Experiment(parse_config(small_config(number_generations=1)), run_dir=out).run()
    assert replay.main([str(out), "--episodes", "1", "--render"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("neuro_evolution.replay: warning: --render: no display here")
    assert len(err.splitlines()) == 1


def test_validation_summary_counts_in_words():
    """The end-of-run summary says "over 1 held-out episode", never "over 1 episodes"."""
    validation = ValidatedGeneration(
        generation=1, mean=1.0, std=0.0, min=1.0, wall_time=0.1, env_steps=5
    )
    summary = RunSummary(
        generations=1,
        best_fitness=1.0,
        env_steps=5,
        wall_time=0.1,
        run_dir=None,
        validation=validation,
        episodes=1,
        target=None,
        handler_statistics=HandlerStatistics(),
        solved=None,
    )
    assert "over 1 held-out episode after generation 1" in train.summary_lines(summary)[1]
