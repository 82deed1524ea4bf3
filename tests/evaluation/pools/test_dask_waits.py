"""The Dask handler's waits end when announced: an address where nothing listens is refused
within seconds (not after the client's 30 s connect timeout), and a run whose scheduler is lost
ends within ``evaluation.reconnect_seconds`` (plus the time to save and exit), and a silent
scheduler does not hold a generation's start, and a paused one ends the generation as a lost one
does. Real ``train`` processes, a real ``dask
scheduler`` and workers."""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import external_dask_cluster, small_config, without_time

from neuro_evolution.evaluation.pools.dask_pool import PING_SECONDS, SLOTS_SECONDS, DaskPool

REFUSED_WITHIN = 10.0  # seconds: importing Dask and one refused TCP connection
EXIT_MARGIN = 15.0  # seconds past reconnect_seconds to save the checkpoint and exit


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def config_file(directory: Path, **evaluation: object) -> Path:
    data = small_config(number_generations=100_000)
    data["episode_runner"] = {"number_fitness_runs": 2, "max_steps_per_run": 500}
    data["evaluation"] = {"handler": "dask", **evaluation}
    path = directory / "dask.json"
    path.write_text(json.dumps(data))
    return path


def test_an_address_where_nothing_listens_is_refused_at_once(tmp_path: Path) -> None:
    """Connection refused: one line naming the address and the fix, exit 2, no run directory,
    within seconds."""
    address = f"tcp://127.0.0.1:{free_port()}"
    config = config_file(tmp_path, scheduler=address)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", str(config), "--out", "run", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0] == (
        f"neuro_evolution.train: error: evaluation.scheduler: cannot reach the Dask scheduler at "
        f"{address}: nothing listens there (connection refused); start one with `dask "
        "scheduler`, or leave scheduler unset to use a LocalCluster"
    )
    assert elapsed < REFUSED_WITHIN, elapsed
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_lost_scheduler_ends_the_run_within_reconnect_seconds(tmp_path: Path) -> None:
    """The scheduler is killed mid-run and stays away: the run saves its last generation and
    exits 3 within reconnect_seconds (5 s here) plus a margin to save and exit."""
    with external_dask_cluster(tmp_path) as cluster:
        config = config_file(tmp_path, scheduler=cluster.address, reconnect_seconds=5)
        train = subprocess.Popen(
            [sys.executable, "-m", "neuro_evolution.train", str(config), "--out", "run"],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not list((tmp_path / "run").glob("log.csv")) and time.monotonic() < deadline:
            time.sleep(0.2)  # a generation has been logged: training is under way
        assert (tmp_path / "run" / "log.csv").exists()
        killed = time.monotonic()
        cluster.processes[0].kill()
        output, _ = train.communicate(timeout=200)
        elapsed = time.monotonic() - killed
    assert train.returncode == 3, output
    assert "did not come back within 5 s" in output
    assert elapsed < 5 + EXIT_MARGIN, (elapsed, output)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_silent_scheduler_does_not_hold_a_generations_start(tmp_path: Path) -> None:
    """Before each generation the pool asks an existing cluster for its thread count. A
    scheduler that does not answer (paused here; one killed a moment before the client notices
    holds it for the comm's 30 s) is given SLOTS_SECONDS, then the last count serves."""
    with external_dask_cluster(tmp_path) as cluster:
        pool = DaskPool(scheduler=cluster.address)
        try:
            chunks = pool.request_chunks()
            scheduler = cluster.processes[0]
            os.kill(scheduler.pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                assert pool.request_chunks() == chunks
                elapsed = time.monotonic() - started
            finally:
                os.kill(scheduler.pid, signal.SIGCONT)
        finally:
            pool.close()
    assert SLOTS_SECONDS <= elapsed < SLOTS_SECONDS + 3.0, elapsed


def log_rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "log.csv", newline="") as file:
        return without_time(list(csv.DictReader(file)))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_paused_scheduler_ends_the_generation_like_a_lost_one_and_resumes_identically(
    tmp_path: Path,
) -> None:
    """The scheduler is paused (SIGSTOP) mid-run: its connection stays open but it answers
    nothing, so after reconnect_seconds (5 s here) the run saves its last generation, prints the
    resume command and exits 3, within reconnect_seconds + PING_SECONDS + a margin. Resumed once
    the scheduler runs again, the run's log equals an uninterrupted run's (sequential handler)."""
    data = small_config(number_generations=40)
    data["episode_runner"] = {"number_fitness_runs": 2, "max_steps_per_run": 500}
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps(data))
    command = [sys.executable, "-m", "neuro_evolution.train"]
    done = subprocess.run(
        [*command, str(reference), "--out", "reference", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with external_dask_cluster(tmp_path) as cluster:
        data["evaluation"] = {"handler": "dask", "scheduler": cluster.address}
        data["evaluation"]["reconnect_seconds"] = 5
        config = tmp_path / "dask.json"
        config.write_text(json.dumps(data))
        train = subprocess.Popen(
            [*command, str(config), "--out", "run", "--quiet"],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not (tmp_path / "run" / "log.csv").exists() and time.monotonic() < deadline:
            time.sleep(0.1)  # a generation has been logged: training is under way
        scheduler = cluster.processes[0]
        os.kill(scheduler.pid, signal.SIGSTOP)
        paused = time.monotonic()
        try:
            output, _ = train.communicate(timeout=120)
            elapsed = time.monotonic() - paused
        finally:
            os.kill(scheduler.pid, signal.SIGCONT)
        assert train.returncode == 3, output
        # The client notices the silence either by its own deadline or as a dropped comm;
        # both end the generation as a lost scheduler does, naming it.
        assert (
            f"the Dask scheduler at {cluster.address} answered nothing for 5 s" in output
            or f"lost the scheduler at {cluster.address}" in output
        ), output
        assert "resume: python -m neuro_evolution.train --resume run" in output
        assert elapsed < 5 + PING_SECONDS + EXIT_MARGIN, (elapsed, output)
        assert len(log_rows(tmp_path / "run")) < 40, output  # paused mid-run
        resumed = subprocess.run(
            [*command, "--resume", "run", "--quiet"],
            cwd=tmp_path, capture_output=True, text=True, timeout=200,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert log_rows(tmp_path / "run") == log_rows(tmp_path / "reference")
