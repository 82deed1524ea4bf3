"""The multiprocessing handler: one pool per run, explicit start methods, dead workers fail fast."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time

import pytest
from test_handler_dask import _alive, make_setup

from neuro_evolution.evaluation.environment import EnvironmentConfig
from neuro_evolution.evaluation.handlers import make_handler
from neuro_evolution.evaluation.handlers.base import WorkerState
from neuro_evolution.evaluation.handlers.multiprocessing import MultiprocessingHandler
from neuro_evolution.frozen import FrozenDict


def test_make_handler_builds_the_mp_handler_with_its_options() -> None:
    """``make_handler("mp", ...)`` passes workers, start method and vectorize through."""
    handler = make_handler("mp", workers=3, start_method="spawn", vectorize=True)
    assert isinstance(handler, MultiprocessingHandler)
    assert (handler.workers, handler.start_method, handler.vectorize) == (3, "spawn", True)
    assert handler.describe() == "mp: 3 worker processes (spawn, vectorized)"


def test_unknown_start_method_is_refused_naming_the_field() -> None:
    """A start method this platform lacks is a one-line error naming the field and the choices."""
    with pytest.raises(ValueError, match=r"^evaluation\.start_method: 'thread' .*forkserver"):
        MultiprocessingHandler(workers=2, start_method="thread")
    with pytest.raises(ValueError, match=r"^evaluation\.workers: must be an integer >= 1"):
        MultiprocessingHandler(workers=0)


def test_pool_lives_for_the_whole_run_and_close_leaves_no_processes() -> None:
    """The same worker processes serve every generation; close() ends them (no zombies)."""
    setup = make_setup(count=24)
    reference = WorkerState(setup.template, setup.spec).evaluate(setup.genomes, setup.seeds)
    handler = MultiprocessingHandler(workers=2, start_method="forkserver")
    handler.start(setup.template, setup.spec)
    try:
        pids = handler.worker_pids
        assert len(pids) == 2
        for _ in range(3):
            assert handler.batch_evaluate(setup.genomes, setup.seeds) == reference
        assert handler.worker_pids == pids
    finally:
        handler.close()
    assert not any(_alive(pid) for pid in pids)


def test_worker_setup_error_surfaces_at_start() -> None:
    """A worker that cannot make its env fails ``start`` with the env's own error."""
    setup = make_setup(count=4)
    # Built without parse(): config validation would refuse the kwarg before any worker starts.
    bad_env = EnvironmentConfig(id="CartPole-v1", kwargs=FrozenDict(bogus=1))
    spec = dataclasses.replace(setup.spec, environment=bad_env)
    handler = MultiprocessingHandler(workers=2, start_method="spawn")
    try:
        with pytest.raises(TypeError, match="bogus"):
            handler.start(setup.template, spec)
    finally:
        handler.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("start_method", ["fork", "forkserver", "spawn"])
def test_killed_worker_fails_the_generation_quickly_with_pid_and_resume_hint(
    start_method: str,
) -> None:
    """SIGKILL of a worker mid-generation: a RuntimeError naming it, no hang, clean close.

    The pytest timeout turns a hang into a failure; no wall-time figure is asserted.
    """
    setup = make_setup("Pendulum-v1", count=300)  # ~10 ms per genome: ~1.5 s per generation
    handler = MultiprocessingHandler(workers=2, start_method=start_method)
    handler.start(setup.template, setup.spec)
    pids = handler.worker_pids
    victim = pids[0]
    done = threading.Event()
    kill: dict[str, bool] = {}

    def killer() -> None:
        time.sleep(0.2)
        kill["in_flight"] = not done.is_set()
        os.kill(victim, signal.SIGKILL)

    thread = threading.Thread(target=killer)
    try:
        thread.start()
        with pytest.raises(RuntimeError) as error:
            handler.batch_evaluate(setup.genomes, setup.seeds)
        done.set()
        thread.join()
        assert kill["in_flight"], "the worker was not killed during the generation"
        message = str(error.value)
        assert f"pid {victim} (exit code -9, killed by SIGKILL)" in message
        assert "resumed from its last checkpoint" in message
        with pytest.raises(RuntimeError, match="process pool is broken"):
            handler.batch_evaluate(setup.genomes[:2], setup.seeds[:2])
    finally:
        done.set()
        handler.close()
    assert not any(_alive(pid) for pid in pids)


def test_restart_replaces_the_pool_with_one_for_the_new_setup() -> None:
    """Calling start() again (new template/spec) closes the old pool and starts a new one."""
    first = make_setup(count=6)
    second = make_setup("Pendulum-v1", count=6, max_steps=20)
    reference = WorkerState(second.template, second.spec).evaluate(second.genomes, second.seeds)
    with MultiprocessingHandler(workers=1, start_method="fork") as handler:
        handler.start(first.template, first.spec)
        old = handler.worker_pids
        handler.start(second.template, second.spec)
        assert handler.batch_evaluate(second.genomes, second.seeds) == reference
        assert not set(old) & set(handler.worker_pids)
