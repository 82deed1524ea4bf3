"""The start-up checks run in one place for every entry point: ``train``, ``sweep``, ``pbt`` and
library use refuse the same bad set-up in the same line before any run directory exists, and
print the same warnings once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import nsga2_config, pbt_config_data, require, small_config

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.pbt import cli as pbt_cli
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.support.errors import ConfigError
from neuro_evolution.sweep import cli as sweep_cli

ENTRY_POINTS = ("train", "sweep", "pbt", "library")


def with_pbt(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the tiny PBT section of the helpers (exploring the step size only)."""
    pbt = pbt_config_data()
    data = {**data, "number_generations": 4, "validation": pbt["validation"]}
    explore = {"optimizer.max_speed": {"values": [0.1, 0.2]}}
    data["pbt"] = {**pbt["pbt"], "runs": 2, "explore": explore}
    return data


def start(entry: str, data: dict[str, Any], tmp_path: Path) -> tuple[int, str, Path]:
    """Start ``data`` from ``entry`` into ``tmp_path / "out"`` (the handler of its evaluation
    section; one generation): the exit code (0 for a library run that trained), stderr's lines
    naming an error or warning, and the output folder. A library refusal is its ConfigError."""
    tmp_path.mkdir(exist_ok=True)
    out = tmp_path / "out"
    handler = data["evaluation"]["handler"]
    config = tmp_path / "config.json"
    config.write_text(json.dumps(with_pbt(data) if entry == "pbt" else data))
    common = [str(config), "--out", str(out), "--handler", handler, "--quiet"]
    if entry == "train":
        code = train.main([*common, "--generations", "1"])
    elif entry == "sweep":
        code = sweep_cli.main([*common, "--seeds", "1-2", "--generations", "1"])
    elif entry == "pbt":
        code = pbt_cli.main(common)
    else:
        try:
            experiment = Experiment(parse_config({**data, "number_generations": 1}), run_dir=out)
        except ConfigError as error:
            return 2, f"error: {error}", out
        experiment.run()
        code = 0
    return code, "", out


def refusal(entry: str, data: dict[str, Any], tmp_path: Path, capsys: Any) -> str:
    """The one error line ``entry`` refuses ``data`` with (exit 2, no traceback, no output
    folder), without its program's prefix."""
    code, line, out = start(entry, data, tmp_path)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.count("\n") == (0 if entry == "library" else 1), err
    assert not out.exists(), sorted(out.rglob("*"))
    line = line or err.strip()
    return line[line.index("error: ") :]


def measured_part_removed(line: str) -> str:
    """A wave refusal without the lane size measured now (it varies from one measurement to
    the next) and what follows from it."""
    assert "per lane, measured" in line and "set max_lanes to at most" in line, line
    return line[: line.index(" needs about ")]


def oversized_wave(handler: str) -> dict[str, Any]:
    """200,000 CartPole individuals x 1,000 episodes in one lockstep wave (terabytes)."""
    data = small_config(optimizer={"type": "PGPE", "population_size": 200_000})
    data["episode_runner"] = {"number_fitness_runs": 1000, "max_steps_per_run": 20}
    data["evaluation"] = {"handler": handler}
    return data


def test_an_oversized_lockstep_wave_is_refused_by_train_sweep_pbt_and_library_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lockstep wave that cannot fit in memory is refused with train's line by every entry
    point, before any run directory exists."""
    lines = {
        entry: measured_part_removed(
            refusal(entry, oversized_wave("vectorized"), tmp_path / entry, capsys)
        )
        for entry in ENTRY_POINTS
    }
    expected = "a lockstep wave of 200,000,000 lanes (1000 episodes x 200,000 individuals)"
    assert lines == dict.fromkeys(ENTRY_POINTS, f"error: evaluation.max_lanes: {expected}")


def test_a_configured_max_lanes_that_cannot_fit_is_refused_before_the_mp_workers_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mp workers with vectorize and a max_lanes wave that cannot fit: refused by every entry
    point in one line, before the workers or any run directory exist."""
    data = small_config(
        optimizer={"type": "PGPE", "population_size": 8},
        evaluation={"handler": "mp", "workers": 2, "vectorize": True},
    )
    data["evaluation"]["max_lanes"] = 10**15
    lines = {
        entry: measured_part_removed(refusal(entry, data, tmp_path / entry, capsys))
        for entry in ENTRY_POINTS
    }
    expected = "a lockstep wave of 1,000,000,000,000,000 lanes (max_lanes 1,000,000,000,000,000)"
    assert lines == dict.fromkeys(ENTRY_POINTS, f"error: evaluation.max_lanes: {expected}")


def test_the_jax_path_without_per_episode_measures_is_refused_by_every_entry_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NSGA-II's objectives on the jax handler: the same one line from every entry point,
    before any run directory exists."""
    require("jax")
    data = nsga2_config(evaluation={"handler": "jax"})
    lines = {
        entry: refusal(entry, data, tmp_path / entry, capsys)
        for entry in ("train", "sweep", "library")  # a PBT has no objectives to rank by
    }
    assert lines["train"].startswith(
        "error: optimizer.objectives: the JAX path computes no per-episode measures"
    )
    assert lines == dict.fromkeys(lines, lines["train"])


def conv_on_a_vector() -> dict[str, Any]:
    """3 x 3 conv kernels over CartPole's 4 numbers, on the sequential handler."""
    layer = {"channels": 2, "kernel": 3, "stride": 1, "padding": 1}
    data = small_config(episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 20})
    data["brain"] = {
        "type": "composed",
        "parts": [{"type": "conv", "layers": [layer]}, {"type": "CTRNN", "number_neurons": 3}],
    }
    return data


def novelty_on_lockstep() -> dict[str, Any]:
    """Novelty of env.unwrapped.state on the vectorized handler: the lockstep loop has no such
    behaviour recorder (it needs the env object)."""
    data = small_config(episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 20})
    data["novelty"] = {"behavioral_max_length": 20, "behavior_source": "state"}
    data["evaluation"] = {"handler": "vectorized"}
    return data


WARNINGS = {
    "conv-kernels": (
        conv_on_a_vector,
        "warning: brain: a conv front end on the observation of CartPole-v1 (a 1 x 4 image: a "
        "vector) gives its 3 x 3 kernels only padding",
    ),
    "lockstep-fallback": (
        novelty_on_lockstep,
        "neuro_evolution: warning: vectorized evaluation falls back to one individual at a "
        "time: novelty.behavior_source: recorder 'behavior' has no lockstep form "
        "(env.unwrapped.state needs the env object)",
    ),
}


@pytest.mark.parametrize("entry", ("train", "sweep", "library"))
@pytest.mark.parametrize("case", list(WARNINGS))
def test_a_start_up_warning_is_printed_once_by_every_entry_point(
    case: str, entry: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What is legal but most likely not meant is one warning line, once per command (a sweep of
    two runs too), and the run trains."""
    make, expected = WARNINGS[case]
    code, _, _ = start(entry, make(), tmp_path)
    err = capsys.readouterr().err
    assert code == 0, err
    warned = [line for line in err.splitlines() if "warning:" in line]
    assert len(warned) == 1 and expected in warned[0], err


def test_a_sweep_refused_at_start_up_exits_2_with_one_line_and_no_traceback(
    tmp_path: Path,
) -> None:
    """The sweep command itself (a real process): exit code 2, train's one line, no folder."""
    config = tmp_path / "wave.json"
    config.write_text(json.dumps(oversized_wave("vectorized")))
    done = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.sweep", str(config), "--seeds", "1-2",
         "--handler", "vectorized", "--out", "sweep", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        "neuro_evolution.sweep: error: evaluation.max_lanes: a lockstep wave of 200,000,000 lanes"
    )
    assert not (tmp_path / "sweep").exists()
