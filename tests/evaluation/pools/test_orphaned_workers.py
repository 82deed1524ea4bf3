"""No process outlives a killed ``train`` or ``sweep``: after ``kill -9`` of the main process, its
mp workers (and with them the forkserver and the resource tracker) end within seconds, on every
start method. Real processes, a real SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import alive, small_config

from neuro_evolution.evaluation.pools.parent_watchdog import (
    EXIT_CODE,
    POLL_SECONDS,
    process_identity,
)

ENDS_WITHIN = 15.0  # seconds the orphans may take (a watchdog polls every POLL_SECONDS)


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children, their children, ...)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        children = {child for child, parent in parents.items() if parent in frontier}
        frontier = children - found
        found |= children
    return {p for p in found if alive(p)}


def start(command: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", *command],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_workers(process: subprocess.Popen, count: int, timeout: float = 120.0) -> set[int]:
    """The descendants once at least ``count`` of them are up and training has begun."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = descendants(process.pid)
        if len(found) >= count:
            time.sleep(1.0)  # the first generation is under way
            return descendants(process.pid)
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} worker processes after {timeout} s")


def assert_all_end(process: subprocess.Popen, pids: set[int]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + ENDS_WITHIN
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.2)
    survivors = [p for p in pids if alive(p)]
    for pid in survivors:  # leave nothing behind, then fail
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"{len(survivors)} of {len(pids)} processes outlived the killed parent"


def long_config(tmp_path: Path, start_method: str) -> Path:
    data = small_config(number_generations=100_000)
    data["episode_runner"] = {"number_fitness_runs": 2, "max_steps_per_run": 500}
    data["evaluation"] = {"handler": "mp", "workers": 2, "start_method": start_method}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("start_method", ["forkserver", "spawn", "fork"])
def test_kill_9_of_train_leaves_no_worker_alive(tmp_path: Path, start_method: str) -> None:
    """Rule: workers notice that the process that started them is gone and exit within
    seconds; with them, the forkserver and the resource tracker end too."""
    config = long_config(tmp_path, start_method)
    process = start(["neuro_evolution.train", str(config), "--out", "run", "--quiet"], tmp_path)
    pids = wait_for_workers(process, 2)
    assert_all_end(process, pids)


@pytest.mark.slow
def test_kill_9_of_train_on_a_local_dask_cluster_leaves_no_process_alive(tmp_path: Path) -> None:
    """The Dask handler's LocalCluster (nannies and their workers) ends with its parent too."""
    config = long_config(tmp_path, "forkserver")
    data = json.loads(config.read_text())
    data["evaluation"] = {"handler": "dask", "workers": 2}
    config.write_text(json.dumps(data))
    process = start(["neuro_evolution.train", str(config), "--out", "run", "--quiet"], tmp_path)
    pids = wait_for_workers(process, 3)
    assert_all_end(process, pids)


@pytest.mark.slow
def test_kill_9_of_a_sweep_leaves_no_worker_alive(tmp_path: Path) -> None:
    config = long_config(tmp_path, "forkserver")
    process = start(
        ["neuro_evolution.sweep", str(config), "--seeds", "1-3", "--out", "sweep", "--quiet"],
        tmp_path,
    )
    pids = wait_for_workers(process, 2)
    assert_all_end(process, pids)


def test_a_process_identity_is_its_start_time_and_none_once_it_is_gone() -> None:
    """A zombie (killed, not yet reaped) counts as gone; the same pid keeps its identity."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        identity = process_identity(child.pid)
        assert identity is not None and process_identity(child.pid) == identity
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while process_identity(child.pid) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process_identity(child.pid) is None  # a zombie until the wait below
    finally:
        child.kill()
        child.wait()
    assert process_identity(os.getpid()) is not None
    assert EXIT_CODE not in (0, 1, 2) and POLL_SECONDS <= 1.0
