"""The multiprocessing handler: one pool per run, explicit start methods, dead workers replaced."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import threading
import time

import pytest
from helpers import alive, make_setup

from neuro_evolution.core.schema import parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.pools import make_handler
from neuro_evolution.evaluation.pools.base import WorkerState
from neuro_evolution.evaluation.pools.process_pool import MAX_DEATHS, MultiprocessingHandler
from neuro_evolution.support.frozen import FrozenDict
from neuro_evolution.support.seeds import episode_seed


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
    assert not any(alive(pid) for pid in pids)


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


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("start_method", ["fork", "forkserver", "spawn"])
def test_killed_worker_is_replaced_and_its_chunk_recomputed_identically(start_method, capsys):
    """SIGKILL of a worker mid-generation: a new pool recomputes the unfinished chunks, the
    results equal the uninterrupted ones, one console line names the dead worker, and close()
    leaves no process of either pool."""
    setup = make_setup("Pendulum-v1", count=300)  # ~10 ms per genome: ~1.5 s per generation
    reference = WorkerState(setup.template, setup.spec).evaluate(setup.genomes, setup.seeds)
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
        results = handler.batch_evaluate(setup.genomes, setup.seeds)
        done.set()
        thread.join()
        assert kill["in_flight"], "the worker was not killed during the generation"
        assert results == reference
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 1, lines
        assert f"mp: worker pid {victim} died (exit code -9, killed by SIGKILL) while " in lines[0]
        assert "recomputes the" in lines[0]
        new_pids = handler.worker_pids
        assert len(new_pids) == 2 and victim not in new_pids
        assert handler.batch_evaluate(setup.genomes[:10], setup.seeds[:10]) == reference[:10]
    finally:
        done.set()
        handler.close()
    assert not any(alive(pid) for pid in pids + new_pids)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("vectorize", [False, True])
def test_a_genome_that_kills_every_worker_fails_naming_its_index_and_seed(vectorize, capsys):
    """An env that dies on one genome's episode kills a worker on every retry: after
    MAX_DEATHS deaths the batch fails naming that genome (or, vectorized, its chunk) and seed;
    each recovery before that printed one line."""
    setup = make_setup(count=12)
    poison = 5
    environment = parse(
        EnvironmentConfig,
        {
            "entry_point": "examples.poison_env:PoisonCartPole",
            "kwargs": {"die_on_seed": episode_seed(int(setup.seeds[poison]), 0)},
        },
        "environment",
    )
    spec = dataclasses.replace(setup.spec, environment=environment)
    handler = MultiprocessingHandler(workers=2, start_method="forkserver", vectorize=vectorize)
    handler.start(setup.template, spec)
    try:
        with pytest.raises(RuntimeError) as error:
            handler.batch_evaluate(setup.genomes, setup.seeds)
        message = str(error.value)
        seed = int(setup.seeds[poison])
        if vectorize:
            found = re.search(r"genomes (\d+)\.\.(\d+) \(seeds .*\) killed its worker", message)
            assert found and int(found[1]) <= poison <= int(found[2]), message
        else:
            assert (
                f"genome {poison} (seed {seed}) killed its worker process {MAX_DEATHS} " in message
            )
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == MAX_DEATHS - 1, lines
        with pytest.raises(RuntimeError, match="killed its worker"):
            handler.batch_evaluate(setup.genomes[:2], setup.seeds[:2])
    finally:
        handler.close()


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
