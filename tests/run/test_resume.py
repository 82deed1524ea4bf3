"""Exact resume after real interruptions of a real ``python -m neuro_evolution.train`` process.

Each test interrupts a subprocess at a known point (SIGKILL, a crash half-way through writing a
checkpoint, SIGINT/SIGTERM), resumes the run, and compares it with the uninterrupted run: the log
(wall time aside), the final optimizer state and the hall of fame must be identical.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest
from fault_injection import CRASH_EXIT_CODE
from helpers import assert_identical, run_straight, small_config, start_train, wait_until_stopped

from neuro_evolution import train
from neuro_evolution.run.directory import read_log

pytestmark = pytest.mark.slow  # every test interrupts real train processes

OPTIMIZERS = {
    "MU_ES": {"type": "MU_ES", "mu": 4, "lambda_": 8},
    "CMA_ES": {"type": "CMA_ES", "population_size": 8, "sigma": 0.5},
    "PGPE": {"type": "PGPE", "population_size": 8, "stdev_init": 0.5},
}


def config_file(tmp_path: Path, optimizer: str = "MU_ES", every: int = 1) -> Path:
    """Six generations of tiny CartPole with the given optimizer and checkpoint interval."""
    data = small_config(
        number_generations=6,
        optimizer=OPTIMIZERS[optimizer],
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 50},
        checkpoint={"every_generations": every, "keep": 2},
    )
    path = tmp_path / f"{optimizer}-{every}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_sigkill_mid_run_then_resume_ends_identical(tmp_path, optimizer):
    """SIGKILL after generation 4 with the last checkpoint at 3: the resume redoes generation
    3 (log.csv briefly had it), and the run ends identical to an uninterrupted one."""
    config = config_file(tmp_path, optimizer, every=3)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "killed"
    process = start_train([str(config), "--out", str(run_dir), "--quiet"], tmp_path, pause_after=4)
    wait_until_stopped(process)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL
    assert len(read_log(run_dir / "log.csv")) == 4
    assert json.loads((run_dir / "training_status.json").read_text())["generation"] == 3
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0
    assert_identical(run_dir, straight)


@pytest.mark.parametrize("where", ["checkpoint", "status"])
def test_crash_while_writing_a_checkpoint_resumes_from_the_previous(tmp_path, where):
    """A crash half-way through writing checkpoint 4 (its npz, or the status after it) leaves
    checkpoint 2 usable, and the resumed run ends identical."""
    config = config_file(tmp_path, every=2)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "crashed"
    switch = "4" if where == "checkpoint" else "4:status"
    process = start_train([str(config), "--out", str(run_dir), "--quiet"], tmp_path, crash=switch)
    assert process.wait(timeout=120) == CRASH_EXIT_CODE, process.communicate()
    status = json.loads((run_dir / "training_status.json").read_text())
    assert status["generation"] == 2
    leftovers = list(run_dir.glob(".training_status.json.*.tmp")) + list(
        (run_dir / "checkpoints").glob(".gen-000004.npz.*.tmp")
    )
    assert len(leftovers) == 1  # the half-written temporary file
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0
    assert not list(run_dir.rglob("*.tmp"))
    assert_identical(run_dir, straight)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_at_a_generation_boundary_with_a_checkpoint(tmp_path, signum):
    """SIGINT/SIGTERM: the generation in progress finishes, a checkpoint is written, exit code
    128 + signal; resuming ends identical. (Checkpoints are otherwise only every 10.)"""
    config = config_file(tmp_path, every=10)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "stopped"
    process = start_train([str(config), "--out", str(run_dir), "--quiet"], tmp_path, pause_after=2)
    wait_until_stopped(process)  # paused after generation 2: the signal lands in generation 3
    process.send_signal(signum)
    process.send_signal(signal.SIGCONT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, err
    assert "stopped: 3 generations done" in out
    printed_checkpoint = out.split("checkpoint: ")[1].split()[0]
    assert Path(printed_checkpoint).is_file()  # the message names the real file
    assert f"--resume {run_dir}" in out
    assert f"{signal.Signals(signum).name}: finishing this generation" in err
    assert "Traceback" not in err
    status = json.loads((run_dir / "training_status.json").read_text())
    assert status["generation"] == 3 and status["finished"] is False
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0
    assert_identical(run_dir, straight)


def test_resume_with_another_handler_and_extended_generations_ends_identical(tmp_path):
    """A run of 3 generations extended to 6 on a multiprocessing pool equals 6 straight ones."""
    config = config_file(tmp_path, every=2)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "short"
    assert train.main([str(config), "--out", str(run_dir), "--generations", "3", "--quiet"]) == 0
    argv = ["--resume", str(run_dir), "--generations", "6", "--handler", "mp", "--workers", "2"]
    assert train.main([*argv, "--quiet"]) == 0
    assert json.loads((run_dir / "config.json").read_text())["evaluation"]["handler"] == "mp"
    assert_identical(run_dir, straight, extended_from=3)


@pytest.mark.parametrize("handler", ["mp", "dask"])
def test_ctrl_c_to_the_process_group_stops_parallel_runs_cleanly(tmp_path, handler):
    """A terminal's Ctrl-C reaches every process of the group: the workers ignore it, the parent
    finishes the generation, writes a checkpoint and exits 130 (it must not hang or crash)."""
    config = config_file(tmp_path, every=10)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "stopped"
    args = [str(config), "--out", str(run_dir), "--quiet", "--handler", handler, "--workers", "2"]
    process = start_train(args, tmp_path, new_session=True, pause_after=2)
    wait_until_stopped(process)  # workers are up; the parent paused after generation 2
    os.killpg(process.pid, signal.SIGINT)
    time.sleep(0.5)  # let workers that did not ignore SIGINT die of it before going on
    process.send_signal(signal.SIGCONT)
    try:
        out, err = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "stopped: 3 generations done" in out
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0
    assert_identical(run_dir, straight)
