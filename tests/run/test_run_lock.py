"""One writer per run directory: real processes competing for a run's lock."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import assert_identical, run_straight, small_config, start_train, wait_until_stopped

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.lock import LOCK_FILE, RunLock, RunLockedError
from neuro_evolution.sweep import cli as sweep_cli

HOLD = (
    "import sys, time\n"
    "from neuro_evolution.run.lock import RunLock\n"
    "RunLock.acquire(sys.argv[1])\n"
    "print('held', flush=True)\n"
    "time.sleep(120)\n"
)


def write_config(tmp_path: Path, generations: int = 6) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "small.json"
    path.write_text(json.dumps(small_config(number_generations=generations)))
    return path


def hold_lock(directory: Path) -> subprocess.Popen:
    """Another process holding ``directory``'s lock (until killed)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(directory)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def one_refusal_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_a_second_resume_of_a_running_run_is_refused_and_a_killed_holder_is_taken_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """While one ``train --resume RUN`` runs, a second one (other --generations) exits 2 with
    one line naming the holder's pid and host and changes nothing; once the holder is killed
    with SIGKILL its stale lock is taken over, and the resumed run equals a straight one."""
    config = write_config(tmp_path, generations=2)
    run_dir = tmp_path / "run"
    assert train.main([str(config), "--out", str(run_dir), "--quiet"]) == 0
    first = start_train(
        ["--resume", str(run_dir), "--generations", "6", "--quiet"], tmp_path, pause_after=4
    )
    try:
        wait_until_stopped(first)  # holds the lock, 4 generations done
        before = (run_dir / "training_status.json").read_text()
        second = subprocess.run(
            [sys.executable, "-m", "neuro_evolution.train", "--resume", str(run_dir)]
            + ["--generations", "5", "--quiet"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 2, second.stderr
        line = one_refusal_line(second.stderr)
        assert f"pid {first.pid} on host {socket.gethostname()}" in line, line
        assert str(run_dir) in line
        assert (run_dir / "training_status.json").read_text() == before
        assert json.loads((run_dir / "config.json").read_text())["number_generations"] == 6
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    capsys.readouterr()
    assert train.main(["--resume", str(run_dir), "--generations", "6", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "taking over the lock" in err and f"pid {first.pid}" in err, err
    assert not (run_dir / LOCK_FILE).exists()  # released at the end
    straight = run_straight(write_config(tmp_path / "straight"), tmp_path / "straight" / "run")
    assert_identical(run_dir, straight, extended_from=2)


def test_a_library_run_into_a_directory_another_process_holds_is_refused(
    tmp_path: Path,
) -> None:
    """``Experiment(config, run_dir=D)`` while another process holds D's lock raises the
    one-line RunLockedError naming that process, and writes nothing into D."""
    run_dir = tmp_path / "run"
    holder = hold_lock(run_dir)
    try:
        config = parse_config(small_config())
        with pytest.raises(RunLockedError, match=f"pid {holder.pid} on host"):
            Experiment(config, run_dir=run_dir)
        assert [p.name for p in run_dir.iterdir()] == [LOCK_FILE]
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_a_sweep_whose_run_another_process_holds_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep opening a run directory that another process holds exits 2 with one line
    naming the holder, and leaves that directory's files alone."""
    config = write_config(tmp_path, generations=2)
    out = tmp_path / "sweep"
    held = out / "base" / "seed-1"
    holder = hold_lock(held)
    (held / "mine.txt").write_text("the other process's file")
    try:
        code = sweep_cli.main(
            [str(config), "--seeds", "1", "--out", str(out), "--handler", "sequential", "--quiet"]
        )
        assert code == 2
        line = one_refusal_line(capsys.readouterr().err)
        assert f"pid {holder.pid}" in line and str(held) in line, line
        assert (held / "mine.txt").read_text() == "the other process's file"
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_the_lock_is_shared_within_a_process_and_removed_by_its_last_holder(
    tmp_path: Path,
) -> None:
    """Shares of one process do not exclude each other; the lock file goes with the last."""
    first = RunLock.acquire(tmp_path / "run")
    second = RunLock.acquire(tmp_path / "run")
    first.release()
    assert (tmp_path / "run" / LOCK_FILE).exists()
    second.release()
    second.release()  # idempotent
    assert not (tmp_path / "run" / LOCK_FILE).exists()
