"""Failures of a real ``train`` process lose no completed generation and print a few plain lines.

A lost Dask scheduler (stopped with SIGINT or killed) at generation 4 of a run that checkpoints
every 10 generations: the checkpoint after 4 generations is written on the way out, stderr has at
most three lines and no traceback, and ``--resume`` on a new cluster ends identical to an
uninterrupted run. An mp worker killed during a run is replaced and the log is unchanged. Ctrl-C
while connecting to a scheduler that never answers stops at once with one line.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_injection import command
from helpers import (
    assert_identical,
    external_dask_cluster,
    run_straight,
    small_config,
    wait_until_stopped,
)

from neuro_evolution import train
from neuro_evolution.cli import EXIT_FAILED


def config_file(tmp_path: Path, **evaluation: object) -> Path:
    """Six generations of tiny CartPole, checkpoints every 10 generations (so only at the end)."""
    data = small_config(
        number_generations=6,
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 50},
        checkpoint={"every_generations": 10, "keep": 2},
        evaluation={"handler": "sequential", **evaluation},
    )
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_lost_scheduler_saves_the_completed_generations_and_resume_ends_identical(
    tmp_path: Path, signum: int
) -> None:
    """The scheduler stops during the run (after 4 generations): the 4 completed generations are
    checkpointed before exit code 3, stderr has <= 3 lines and no traceback, and a resume on a
    new cluster gives the uninterrupted run's log, optimizer state and hall of fame."""
    config = config_file(tmp_path, reconnect_seconds=1)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "run"
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    with external_dask_cluster(tmp_path / "first") as cluster:
        args = [str(config), "--out", str(run_dir), "--quiet", "--handler", "dask"]
        process = subprocess.Popen(
            command([*args, "--scheduler", cluster.address], pause_after=4),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until_stopped(process)  # 4 generations done, generation 4 not started
            scheduler = cluster.processes[0]
            scheduler.send_signal(signum)
            scheduler.wait(timeout=60)
            process.send_signal(signal.SIGCONT)
            out, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == EXIT_FAILED, (out, err)
    lines = err.splitlines()
    assert 1 <= len(lines) <= 3, err
    assert "Traceback" not in err
    assert lines[0].startswith("neuro_evolution.train: error: generation 4 failed: RuntimeError:")
    assert "lost the Dask scheduler" in lines[0] and "did not come back within 1 s" in lines[0]
    checkpoint = run_dir / "checkpoints" / "gen-000004.npz"
    assert f"4 generations are saved in {checkpoint}" in lines[1]
    assert lines[2] == f"resume: python -m neuro_evolution.train --resume {run_dir}"
    status = json.loads((run_dir / "training_status.json").read_text())
    assert status["generation"] == 4 and checkpoint.is_file()
    failure = (run_dir / "failure.txt").read_text()
    assert failure.startswith(
        lines[0].removeprefix("neuro_evolution.train: error: ").split(" (")[0]
    )
    assert "Traceback" in failure
    with external_dask_cluster(tmp_path / "second") as cluster:
        resume = ["--resume", str(run_dir), "--scheduler", cluster.address, "--quiet"]
        assert train.main(resume) == 0
    assert not (run_dir / "failure.txt").exists()  # the resumed session did not fail
    assert_identical(run_dir, straight)


def test_a_failure_before_any_completed_generation_says_nothing_to_resume(tmp_path, capsys):
    """An env that raises in generation 0: exit code 3, the error in one line, 'nothing to
    resume', and the traceback kept in failure.txt."""
    data = small_config(
        environment={"entry_point": "examples.poison_env:RaisingCartPole"},
        checkpoint={"every_generations": 10, "keep": 2},
    )
    config = tmp_path / "config.json"
    config.write_text(json.dumps(data))
    run_dir = tmp_path / "run"
    assert train.main([str(config), "--out", str(run_dir), "--quiet"]) == EXIT_FAILED
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("neuro_evolution.train: error: generation 0 failed: ValueError:")
    assert lines[1] == "neuro_evolution.train: nothing to resume: no generation was completed"
    assert "RaisingCartPole" in (run_dir / "failure.txt").read_text()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_killed_mp_worker_during_a_run_leaves_the_log_identical(tmp_path: Path) -> None:
    """A worker of the mp pool SIGKILLed after generation 2: the pool is replaced, the run
    completes (exit 0) with one line about it and a log identical to an uninterrupted run."""
    config = config_file(tmp_path)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "run"
    args = [str(config), "--out", str(run_dir), "--quiet", "--handler", "mp", "--workers", "2"]
    result = subprocess.run(
        command(args, kill_worker_after=2), capture_output=True, text=True, timeout=200
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    recoveries = [line for line in result.stdout.splitlines() if line.startswith("mp: worker")]
    assert len(recoveries) == 1 and "killed by SIGKILL" in recoveries[0], result.stdout
    assert_identical(run_dir, straight)


@contextlib.contextmanager
def silent_listener() -> Iterator[str]:
    """tcp://127.0.0.1:PORT where a socket accepts connections and never answers (a scheduler
    behind a firewall that hangs the handshake)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for connection in accepted:
            connection.close()
        server.close()


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_connecting_stops_at_once_with_one_line(tmp_path: Path, signum: int) -> None:
    """Ctrl-C (or SIGTERM) while connecting to a scheduler that never answers: 'connecting to'
    was printed first, then the process ends promptly with one line, no traceback, exit 128+N,
    and no run directory. (Measured: ~0.3 s; the bound here is generous, the note has figures.)"""
    config = config_file(tmp_path)
    run_dir = tmp_path / "run"
    with silent_listener() as address:
        args = [str(config), "--out", str(run_dir), "--handler", "dask", "--scheduler", address]
        process = subprocess.Popen(
            [sys.executable, "-m", "neuro_evolution.train", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            assert first.startswith(f"dask: connecting to {address}"), first
            time.sleep(0.5)  # inside the connect
            sent = time.monotonic()
            process.send_signal(signum)
            out, err = process.communicate(timeout=10)
            elapsed = time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 128 + signum, err
    assert err == "neuro_evolution.train: interrupted\n"
    assert elapsed < 10
    assert not run_dir.exists()
