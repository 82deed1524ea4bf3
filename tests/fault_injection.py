"""Run the real ``train`` (or ``sweep``) command with a fault injected from outside the package.

``python tests/fault_injection.py [--sweep] [--pause-after G] [--crash-in-checkpoint G[:status]]
-- ARGS`` runs ``neuro_evolution.train.main(ARGS)`` (``--sweep``: ``neuro_evolution.sweep``'s)
in this process after wrapping two functions, so the checkpoint writer ships no test switches:

- ``--pause-after G``: an after-generation hook, added after the checkpointer's, stops the process
  (SIGSTOP) once generation G's bookkeeping is done, so a test can signal it at a known point;
- ``--kill-worker-after G``: once generation G's bookkeeping is done, SIGKILL one worker process
  of the mp pool (the next generation must recover it). In a sweep: once the first run's
  generation G is done, SIGKILL a worker that is evaluating another run's chunk (mid-generation);
- ``--crash-in-checkpoint G``: writing the checkpoint of generation G leaves half of it in a
  temporary file next to it and exits at once with :data:`CRASH_EXIT_CODE`, before anything is
  replaced; ``G:status`` does the same to the status file that follows (the new checkpoint is
  then complete but not yet listed).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neuro_evolution import train
from neuro_evolution.run import checkpoint
from neuro_evolution.run import experiment as experiment_module
from neuro_evolution.sweep import cli as sweep_cli

CRASH_EXIT_CODE = 86
SCRIPT = Path(__file__).resolve()


def command(
    args: list[str],
    pause_after: int | None = None,
    crash: str | None = None,
    kill_worker_after: int | None = None,
    sweep: bool = False,
) -> list[str]:
    """The argv of a train (``sweep``: sweep) process with the given faults."""
    faults = ["--sweep"] if sweep else []
    faults += [] if pause_after is None else ["--pause-after", str(pause_after)]
    faults += [] if crash is None else ["--crash-in-checkpoint", crash]
    faults += [] if kill_worker_after is None else ["--kill-worker-after", str(kill_worker_after)]
    return [sys.executable, str(SCRIPT), *faults, "--", *args]


def crash_mid_write(path: Path, data: bytes) -> None:
    """Leave a half-written temporary file next to ``path`` and die at once (no cleanup)."""
    handle, _ = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(handle, "wb") as file:
        file.write(data[: len(data) // 2])
        file.flush()
        os.fsync(file.fileno())
    os._exit(CRASH_EXIT_CODE)


def after_generation(generation: int, action: Callable[[Any], None], sweep: bool = False) -> None:
    """Run ``action(experiment)`` after ``generation``'s checkpoint hook has run (of every run
    of a sweep that starts in this session)."""
    module: Any = experiment_module  # train, resume and sweep runs all install it there
    install = module.install_checkpoints

    def install_then_add(experiment: Any, *args: Any, **kwargs: Any) -> Any:
        checkpointer = install(experiment, *args, **kwargs)

        def hook(experiment: Any) -> None:
            if experiment.generation == generation:
                action(experiment)

        experiment.after_generation.append(hook)
        return checkpointer

    module.install_checkpoints = install_then_add


def inject_pause(generation: int, sweep: bool = False) -> None:
    """Stop the process after ``generation``'s checkpoint hook has run."""
    after_generation(generation, lambda experiment: os.kill(os.getpid(), signal.SIGSTOP), sweep)


def inject_worker_kill(generation: int, sweep: bool = False) -> None:
    """SIGKILL the first worker of the mp pool after ``generation``; in a sweep, once, the
    first worker seen evaluating a genome (of the other runs, whose chunks are out)."""
    killed: list[int] = []

    def kill(experiment: Any) -> None:
        if killed:
            return
        if not sweep:
            killed.append(experiment.handler.worker_pids[0])
        else:
            pool = experiment.handler.pool
            deadline = time.monotonic() + 10
            while not killed and time.monotonic() < deadline:
                for pid in pool.evaluating_pids:
                    if still_evaluating_when_stopped(pool, pid):
                        killed.append(pid)
                        break
                time.sleep(0.001)
            if not killed:
                raise RuntimeError("fault injection: no worker of the pool was seen evaluating")
        os.kill(killed[0], signal.SIGKILL)

    after_generation(generation, kill, sweep)


def still_evaluating_when_stopped(pool: Any, pid: int) -> bool:
    """SIGSTOP worker ``pid`` and wait until it is stopped: a stopped worker's progress slot no
    longer changes, so whether it is evaluating is then certain (seen evaluating, a worker may
    finish its chunk before a SIGKILL lands). True: it stays stopped, evaluating; False: it was
    not evaluating any more and runs on."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t"):
                break
        time.sleep(0.0005)
    if pid in pool.evaluating_pids:
        return True
    os.kill(pid, signal.SIGCONT)
    return False


def inject_crash(switch: str) -> None:
    """Crash while writing checkpoint G (``G``) or the status file after it (``G:status``)."""
    generation_text, _, where = switch.partition(":")
    generation = int(generation_text)
    if where == "status":
        write_json: Callable[[Any, Any], None] = checkpoint.atomic_write_json

        def crash_in_status(path: Any, data: Any) -> None:
            if data.get("generation") == generation:
                crash_mid_write(Path(path), json.dumps(data).encode())
            write_json(path, data)

        checkpoint.atomic_write_json = crash_in_status
    else:
        write_bytes = checkpoint.atomic_write_bytes

        def crash_in_checkpoint(path: Any, data: bytes) -> None:
            if Path(path).name == checkpoint.checkpoint_name(generation):
                crash_mid_write(Path(path), data)
            write_bytes(path, data)

        checkpoint.atomic_write_bytes = crash_in_checkpoint


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pause-after", type=int)
    parser.add_argument("--crash-in-checkpoint")
    parser.add_argument("--kill-worker-after", type=int)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("train_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.pause_after is not None:
        inject_pause(args.pause_after, args.sweep)
    if args.kill_worker_after is not None:
        inject_worker_kill(args.kill_worker_after, args.sweep)
    if args.crash_in_checkpoint is not None:
        inject_crash(args.crash_in_checkpoint)
    train_args = args.train_args[1:] if args.train_args[:1] == ["--"] else args.train_args
    return (sweep_cli if args.sweep else train).main(train_args)


if __name__ == "__main__":
    sys.exit(main())
