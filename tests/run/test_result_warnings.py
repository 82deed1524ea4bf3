"""Results that are legal but most likely not meant get one warning line each: QD descriptor
bounds that no value reaches, an NSGA2 reference point that no front member beats, and conv
kernels over a vector observation. Settings that are fine get none."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import nsga2_config, qd_config, small_config

from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import Experiment


def warnings_of(data: dict, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    experiment = Experiment(parse_config(data), handler=SequentialHandler())
    experiment.run(progress=False)
    return [line for line in capsys.readouterr().err.splitlines() if "warning:" in line]


@pytest.mark.parametrize("qd", ["MAP_ELITES", "CMA_ME"])
def test_descriptor_bounds_no_value_reaches_are_warned_about_once(
    qd: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """CartPole's cart stays within +-2.4 m: bounds [10, 20] put every elite in the first
    column of the grid. One line naming the descriptor, its bounds and the values' range, once
    in a run of three generations; the shipped bounds give none."""
    data = qd_config(qd)
    assert warnings_of(copy.deepcopy(data), capsys) == []
    data["optimizer"]["descriptors"][0].update(low=10.0, high=20.0)
    lines = warnings_of(data, capsys)
    assert len(lines) == 1, lines
    assert "warning: optimizer.descriptors[0] (cart_position): all " in lines[0]
    assert "values of generation 0 lie outside [low, high] = [10, 20]" in lines[0]
    assert "every elite sits in an edge cell" in lines[0]


def test_a_reference_point_no_front_member_beats_is_warned_about_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The return (maximized) of a 60-step CartPole episode is at most 60: a reference return
    of 1000 leaves the hypervolume at 0. One line, naming the front's best per objective; the
    helper's reference point (0, 1) gives none."""
    data = nsga2_config()
    assert warnings_of(copy.deepcopy(data), capsys) == []
    data["optimizer"]["reference_point"] = [1000.0, 1.0]
    lines = warnings_of(data, capsys)
    assert len(lines) == 1, lines
    assert "warning: optimizer.reference_point: no front member beats [1000, 1]" in lines[0]
    assert "so the hypervolume is 0 (the front's best: return " in lines[0]


def test_conv_kernels_over_a_vector_observation_are_warned_about(tmp_path: Path) -> None:
    """A conv front end with 3 x 3 kernels and padding on CartPole's 4 numbers trains (the
    module documents a vector as a 1 x n image), with one warning line before training; a
    1 x 1 kernel gets none."""
    data = small_config(number_generations=1)
    data["brain"] = {"type": "composed", "parts": [
        {"type": "conv", "layers": [{"channels": 2, "kernel": 3, "stride": 1, "padding": 1}]},
        {"type": "CTRNN", "number_neurons": 3}]}  # fmt: skip
    for kernel, warned in ((3, True), (1, False)):
        data["brain"]["parts"][0]["layers"][0].update(kernel=kernel, padding=kernel // 2)
        config = tmp_path / f"conv{kernel}.json"
        config.write_text(json.dumps(data))
        done = subprocess.run(
            [sys.executable, "-m", "neuro_evolution.train", str(config), "--out",
             f"run{kernel}", "--quiet"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stderr.splitlines() if "warning:" in line]
        assert len(lines) == int(warned), done.stderr
        if warned:
            assert lines[0].startswith("neuro_evolution.train: warning: brain: a conv front end")
            assert "(a 1 x 4 image: a vector) gives its 3 x 3 kernels only padding" in lines[0]
