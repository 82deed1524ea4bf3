"""A run that stopped at its validation target can be extended: ``--resume --generations N``
trains on past the target to generation N; without it, the message says why the run stopped
and which option continues it (real ``train`` processes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import small_config

from neuro_evolution.run.directory import read_log


def train(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", *args, "--quiet"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_solved_run_extended_with_generations_trains_on_past_the_target(
    tmp_path: Path,
) -> None:
    data = small_config(number_generations=40)
    data["validation"] = {"every_generations": 1, "episodes": 3, "target": 30}
    config = tmp_path / "solved.json"
    config.write_text(json.dumps(data))
    first = train([str(config), "--out", "run"], tmp_path)
    assert first.returncode == 0, first.stderr
    log = read_log(tmp_path / "run" / "log.csv")
    stopped = len(log)
    assert stopped < 40 and log[-1]["validation_mean"] >= 30  # stopped at the target

    again = train(["--resume", "run"], tmp_path)
    assert again.returncode == 0 and again.stderr == ""
    assert again.stdout.strip() == (
        f"run: the run stopped after generation {stopped} because its validation mean "
        f"{log[-1]['validation_mean']:.6g} reached the target 30 (generation {stopped}); pass "
        f"--generations N (N > {stopped}) to train on past the target"
    )
    assert read_log(tmp_path / "run" / "log.csv") == log  # nothing trained, nothing changed

    extended = train(["--resume", "run", "--generations", str(stopped + 3)], tmp_path)
    assert extended.returncode == 0, extended.stderr
    longer = read_log(tmp_path / "run" / "log.csv")
    assert len(longer) == stopped + 3 and longer[:stopped] == log
    assert f"after generation {stopped}," in extended.stdout  # still solved where it was

    finished = train(["--resume", "run"], tmp_path)
    assert finished.stdout.strip() == (
        f"run: the run already finished its {stopped + 3} generations; pass --generations N "
        f"(N > {stopped + 3}) to extend it"
    )
