"""``python -m neuro_evolution.sweep``: runs on a shared pool equal the same configs trained
alone, on every handler, also when an mp worker, a Dask worker or the Dask scheduler is killed
mid-generation; a sweep stopped with SIGINT skips its ended runs and resumes the others when run
again.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from distributed import Client
from fault_injection import command
from helpers import external_dask_cluster, free_port, require, small_config

from neuro_evolution import replay, train
from neuro_evolution.cli import EXIT_FAILED
from neuro_evolution.evaluation.pools.base import EvaluationHandler, register_handler
from neuro_evolution.evaluation.pools.options import evaluation_config
from neuro_evolution.evaluation.pools.process_pool import MAX_DEATHS, ProcessPool
from neuro_evolution.run.directory import read_log
from neuro_evolution.support.atomic import load_npz
from neuro_evolution.support.errors import ConfigError, UserError
from neuro_evolution.support.seeds import episode_seed, generation_seeds
from neuro_evolution.sweep import cli as sweep_cli
from neuro_evolution.sweep.grid import expand_grid, parse_seeds, parse_setting, split_values
from neuro_evolution.sweep.pools import make_pool

SIGMAS = (0.1, 0.5)
SEEDS = (1, 2, 3, 4)


def sweep_config(tmp_path: Path, **changes: Any) -> Path:
    """A small CMA-ES CartPole config with validation and checkpoints every 2 generations."""
    defaults: dict[str, Any] = {
        "number_generations": 4,
        "optimizer": {"type": "CMA_ES", "population_size": 8, "sigma": 0.3},
        "episode_runner": {"number_fitness_runs": 1, "max_steps_per_run": 80},
        "validation": {"every_generations": 2, "episodes": 3},
        "checkpoint": {"every_generations": 2},
    }
    data = small_config(**{**defaults, **changes})
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(data))
    return path


def run_files(run_dir: Path) -> dict[str, Any]:
    """What must equal between a sweep's run and train: log (wall time aside), hall of fame,
    candidate, final checkpoint's optimizer state."""
    status = json.loads((run_dir / "training_status.json").read_text())
    checkpoint = load_npz(run_dir / status["latest_checkpoint"])
    return {
        "generation": status["generation"],
        "log": [
            {k: v for k, v in row.items() if k != "wall_time"}
            for row in read_log(run_dir / "log.csv")
        ],
        "hall_of_fame": load_npz(run_dir / "hall_of_fame.npz"),
        "candidate": load_npz(run_dir / "candidate.npz"),
        "optimizer": {k: v for k, v in checkpoint.items() if k.startswith("optimizer/")},
    }


def assert_same_run(a_dir: Path, b_dir: Path) -> None:
    a, b = run_files(a_dir), run_files(b_dir)
    assert a["generation"] == b["generation"]
    assert a["log"] == b["log"], f"{a_dir} vs {b_dir}"
    for part in ("hall_of_fame", "candidate", "optimizer"):
        assert a[part].keys() == b[part].keys()
        for key in a[part]:
            x, y = np.asarray(a[part][key]), np.asarray(b[part][key])
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f"{a_dir} {part} {key}"


def train_alone(
    tmp_path: Path,
    config: Path,
    sigma: float,
    seed: int,
    handler: str = "sequential",
    max_steps: int | None = None,
) -> Path:
    """The same run as the sweep's (sigma, seed, max_steps_per_run when given), trained by
    itself with ``train``."""
    data = json.loads(config.read_text())
    data["optimizer"]["sigma"] = sigma
    data["random_seed"] = seed
    if max_steps is not None:
        data["episode_runner"]["max_steps_per_run"] = max_steps
    name = f"{sigma}-{seed}-{max_steps}"
    path = tmp_path / f"alone-{name}.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "alone" / name
    assert train.main([str(path), "--out", str(out), "--quiet", "--handler", handler]) == 0
    return out


@pytest.mark.slow
def test_sweep_runs_on_a_shared_pool_equal_the_same_configs_trained_alone(tmp_path, capsys):
    """4 seeds x 2 sigmas on one mp pool of 2 workers: every run directory holds exactly the
    files ``train`` writes for that config alone (wall time aside), and ``replay`` reads it."""
    config = sweep_config(tmp_path)
    out = tmp_path / "sweep"
    args = [str(config), "--seeds", "1-4", "--set", "optimizer.sigma=0.1,0.5", "--out", str(out)]
    assert sweep_cli.main([*args, "--workers", "2", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "8 of 8 runs ended (8 now, 0 before)" in printed
    for sigma in SIGMAS:
        for seed in SEEDS:
            run_dir = out / f"optimizer.sigma={sigma}" / f"seed-{seed}"
            assert json.loads((run_dir / "config.json").read_text())["random_seed"] == seed
            assert_same_run(run_dir, train_alone(tmp_path, config, sigma, seed))
    assert replay.main([str(out / "optimizer.sigma=0.1" / "seed-1"), "--episodes", "1"]) == 0


@pytest.mark.slow
def test_sweep_on_dask_equals_train(tmp_path):
    """The Dask pool (a LocalCluster, one worker plugin per run) gives the same runs."""
    config = sweep_config(tmp_path)
    out = tmp_path / "sweep"
    args = [str(config), "--seeds", "1-2", "--set", "optimizer.sigma=0.5", "--out", str(out)]
    assert sweep_cli.main([*args, "--handler", "dask", "--workers", "2", "--quiet"]) == 0
    for seed in (1, 2):
        run_dir = out / "base" / f"seed-{seed}"  # one value: not in the name
        assert_same_run(run_dir, train_alone(tmp_path, config, 0.5, seed))


@pytest.mark.slow
def test_a_vectorized_sweep_equals_train(tmp_path):
    """Lockstep in the pool's workers, 2 episodes per individual in lanes of their own: whole
    requests while 2 runs fill the 2 workers, split for the last run; every run equals the one
    ``train`` gives alone with the per-individual loop."""
    config = sweep_config(
        tmp_path,
        episode_runner={"number_fitness_runs": 2, "max_steps_per_run": 80},
        evaluation={"handler": "mp", "vectorize": True},
    )
    out = tmp_path / "sweep"
    args = [str(config), "--seeds", "1-3", "--set", "optimizer.sigma=0.5", "--out", str(out)]
    assert sweep_cli.main([*args, "--workers", "2", "--parallel-runs", "2", "--quiet"]) == 0
    for seed in (1, 2, 3):
        assert_same_run(out / "base" / f"seed-{seed}", train_alone(tmp_path, config, 0.5, seed))


@pytest.mark.parametrize("handler", ["vectorized", "jax"])
def test_a_sweep_on_an_in_process_handler_equals_train(tmp_path, handler):
    """The vectorized and the jax handler serve a sweep (2 seeds x 2 episode lengths, so the runs'
    specs differ; all 4 runs open, taking turns in this process): every run's files equal those
    of ``train`` on that config alone on the same handler (wall time aside)."""
    changes: dict[str, Any] = {"number_generations": 3}
    if handler == "jax":
        require("jax")
        changes["environment"] = {"id": "CartPole-v1", "backend": "gymnax"}
    config = sweep_config(tmp_path, **changes)
    out = tmp_path / "sweep"
    lengths = "episode_runner.max_steps_per_run=10,60"
    args = [str(config), "--seeds", "1-2", "--set", lengths, "--out", str(out)]
    assert sweep_cli.main([*args, "--handler", handler, "--parallel-runs", "4", "--quiet"]) == 0
    for steps in (10, 60):
        for seed in (1, 2):
            run_dir = out / f"episode_runner.max_steps_per_run={steps}" / f"seed-{seed}"
            alone = train_alone(tmp_path, config, 0.3, seed, handler, max_steps=steps)
            assert_same_run(run_dir, alone)


@pytest.mark.slow
def test_a_dask_sweep_with_vectorize_jax_equals_the_jax_handler(tmp_path):
    """``--vectorize jax`` on the sweep's command line: Dask workers (a LocalCluster) run each
    chunk as one compiled JAX program, and every run equals ``train`` on the jax handler."""
    require("jax")
    changes: dict[str, Any] = {"number_generations": 3}
    changes["environment"] = {"id": "CartPole-v1", "backend": "gymnax"}
    config = sweep_config(tmp_path, **changes)
    out = tmp_path / "sweep"
    args = [str(config), "--seeds", "1-2", "--set", "optimizer.sigma=0.3", "--out", str(out)]
    options = ["--handler", "dask", "--workers", "2", "--vectorize", "jax", "--quiet"]
    assert sweep_cli.main([*args, *options]) == 0
    for seed in (1, 2):
        run_dir = out / "base" / f"seed-{seed}"
        assert json.loads((run_dir / "config.json").read_text())["evaluation"]["vectorize"] == "jax"
        assert_same_run(run_dir, train_alone(tmp_path, config, 0.3, seed, "jax"))


def test_a_handler_without_a_pool_is_refused_by_a_sweep_in_one_line() -> None:
    """A registered handler that is no PoolHandler cannot be shared: a UserError naming the
    field, before any run starts."""

    @register_handler("test-unpooled")
    class Unpooled(EvaluationHandler):
        def start(self, template: Any, spec: Any) -> None: ...

        def batch_evaluate(self, genomes: Any, seeds: Any, context: Any = None) -> list: ...

    with pytest.raises(UserError, match=r"^evaluation\.handler: 'test-unpooled' cannot be shared"):
        make_pool(evaluation_config("test-unpooled"), parallel_runs=2)


def test_lockstep_requests_stay_whole_while_the_runs_fill_the_workers():
    """A vectorized pool of 2 workers cuts a request in 2 chunks for one open run, keeps it whole
    for 2 or more; the per-individual pool always cuts one chunk per worker."""
    setup: Any = None  # the process pool only stores a run's setup until a worker asks for it
    for vectorize, expected in ((True, [2, 2, 1, 1, 2]), (False, [2] * 5)):
        pool = ProcessPool(2, "forkserver", capacity=4, vectorize=vectorize)
        try:
            counts = [pool.request_chunks()]
            for run in ("a", "b", "c"):
                pool.register(run, setup, setup)
                counts.append(pool.request_chunks())
            pool.unregister("a")
            pool.unregister("b")
            counts.append(pool.request_chunks())
        finally:
            pool.close()
        assert counts == expected


PAUSED_SWEEP = """
import os, signal, sys
from neuro_evolution.sweep import cli, scheduler
note_end = scheduler.Sweep.note_end
paused = []
def pause_after_first_end(self, plan, experiment, into):
    note_end(self, plan, experiment, into)
    if len(self.summary.finished) == 1 and not paused:
        paused.append(True)
        os.kill(os.getpid(), signal.SIGSTOP)
scheduler.Sweep.note_end = pause_after_first_end
sys.exit(cli.main(sys.argv[1:]))
"""


def wait_until_paused(process: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"sweep exited early: {process.communicate()}")
        state = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "T":
            return
        time.sleep(0.02)
    process.kill()
    raise AssertionError("the sweep did not reach the pause point")


@pytest.mark.slow
def test_sigint_checkpoints_every_run_and_the_same_command_skips_and_resumes(tmp_path, capsys):
    """Ctrl-C to the sweep's process group once its first run ended: the open runs finish their
    generation, checkpoint and the sweep exits 130. The same command then skips the ended run,
    resumes the checkpointed ones (their earlier rows kept, wall time included) and starts the
    rest; every run equals an uninterrupted sweep's."""
    config = sweep_config(tmp_path, number_generations=8)
    grid = ["--seeds", "1-2", "--set", "number_generations=2,8", "--workers", "2", "--quiet"]
    out = tmp_path / "stopped"
    args = [str(config), *grid, "--out", str(out), "--parallel-runs", "3"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [sys.executable, "-c", PAUSED_SWEEP, *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until_paused(process)
        os.killpg(process.pid, signal.SIGINT)
        time.sleep(0.5)  # workers that did not ignore SIGINT would die now
        process.send_signal(signal.SIGCONT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, stderr
    assert "runs checkpointed; run the same command again" in stdout
    ended, resumable, kept_rows = [], [], {}
    for run_dir in sorted(out.glob("*/seed-*")):
        status = json.loads((run_dir / "training_status.json").read_text())
        if status["finished"]:
            ended.append(run_dir)
        else:
            assert 0 < status["generation"] < 8, "a stopped run checkpointed mid-run"
            resumable.append(run_dir)
            kept_rows[run_dir] = read_log(run_dir / "log.csv")[: status["generation"]]
    assert ended and resumable, (ended, resumable)
    assert not (out / "number_generations=8" / "seed-2").exists(), "never opened: parallel 3"

    assert sweep_cli.main(args) == 0
    printed = capsys.readouterr().out
    assert f"4 of 4 runs ended ({4 - len(ended)} now, {len(ended)} before)" in printed
    for run_dir, rows in kept_rows.items():
        assert read_log(run_dir / "log.csv")[: len(rows)] == rows, "resumed, not restarted"

    straight = tmp_path / "straight"
    sequential = [str(config), *grid, "--out", str(straight), "--handler", "sequential"]
    assert sweep_cli.main(sequential) == 0
    for run_dir in out.glob("*/seed-*"):
        assert_same_run(run_dir, straight / run_dir.relative_to(out))


def test_rerunning_a_finished_sweep_skips_every_run(tmp_path, capsys):
    config = sweep_config(tmp_path, number_generations=2)
    args = [str(config), "--seeds", "1-2", "--out", str(tmp_path / "s"), "--quiet"]
    assert sweep_cli.main([*args, "--handler", "sequential"]) == 0
    log = (tmp_path / "s" / "base" / "seed-1" / "log.csv").read_text()
    assert sweep_cli.main([*args, "--handler", "sequential"]) == 0
    assert "2 of 2 runs ended (0 now, 2 before)" in capsys.readouterr().out
    assert (tmp_path / "s" / "base" / "seed-1" / "log.csv").read_text() == log


def test_a_sweep_directory_of_another_config_is_refused(tmp_path, capsys):
    config = sweep_config(tmp_path, number_generations=2)
    args = [str(config), "--seeds", "1", "--out", str(tmp_path / "s"), "--quiet"]
    assert sweep_cli.main([*args, "--handler", "sequential"]) == 0
    other = sweep_config(tmp_path, number_generations=2, hall_of_fame_size=3)
    assert sweep_cli.main([str(other), *args[1:], "--handler", "sequential"]) == 2
    assert "hall_of_fame_size differ" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "optimizer.sigmaa=0.1"], "optimizer.sigmaa: unknown key"),
        (["--set", "optimizer.sigma=-1"], "optimizer.sigma: must be a number > 0"),
        (["--set", "optimizer.sigma"], "write KEY=VALUE"),
        (["--set", "evaluation.workers=2"], "use --handler, --workers"),
        (["--seeds", "3-1"], "runs backwards"),
        (["--handler", "vectorised"], "invalid choice"),
    ],
)
def test_bad_sweep_arguments_are_one_line_errors_and_write_nothing(tmp_path, capsys, args, message):
    config = sweep_config(tmp_path)
    out = tmp_path / "s"
    with contextlib.suppress(SystemExit):
        assert sweep_cli.main([str(config), "--out", str(out), "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_grid_parsing():
    assert parse_seeds("1-3,7") == [1, 2, 3, 7]
    assert split_values('[4, 4],[8],"a,b"') == ["[4, 4]", "[8]", '"a,b"']
    setting = parse_setting("brain.hidden_layers=[4],[8,8]")
    assert setting.values == ([4], [8, 8])
    assert parse_setting("brain.type=FFNN").values == ("FFNN",)
    with pytest.raises(UserError):
        parse_seeds("1,1")
    data = small_config()
    plans = expand_grid(data, [parse_setting("brain.hidden_layers=[4],[8,8]")], [1, 2])
    assert [p.name for p in plans] == [
        "brain.hidden_layers=[4]/seed-1",
        "brain.hidden_layers=[4]/seed-2",
        "brain.hidden_layers=[8,8]/seed-1",
        "brain.hidden_layers=[8,8]/seed-2",
    ]
    assert plans[3].config.brain.hidden_layers == (8, 8) and plans[3].config.random_seed == 2
    constant = [parse_setting("optimizer.mu=4"), parse_setting("hall_of_fame_size=2,3")]
    plans = expand_grid(data, constant, [1])
    assert [p.name for p in plans] == ["hall_of_fame_size=2/seed-1", "hall_of_fame_size=3/seed-1"]
    assert plans[0].config.optimizer.mu == 4
    with pytest.raises(ConfigError, match="episode_runner.number_fitness_runs"):
        expand_grid(data, [parse_setting("episode_runner.number_fitness_runs=0")], [1])


def pendulum_sweep(tmp_path: Path, **changes: Any) -> tuple[Path, list[str]]:
    """A sweep whose chunks take a while (Pendulum: 200 steps per episode), 3 runs on 2 workers."""
    config = sweep_config(
        tmp_path,
        environment={"id": "Pendulum-v1"},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 200},
        **changes,
    )
    return config, [str(config), "--seeds", "1-3", "--parallel-runs", "3", "--quiet"]


def assert_same_sweep(out: Path, straight: Path) -> None:
    """The 3 runs of the pendulum sweep in ``out`` equal those in ``straight``."""
    run_dirs = sorted(out.glob("base/seed-*"))
    assert len(run_dirs) == 3
    for run_dir in run_dirs:
        assert_same_run(run_dir, straight / run_dir.relative_to(out))


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_worker_killed_mid_generation_is_replaced_and_every_run_stays_identical(tmp_path):
    """SIGKILL of a worker while it evaluates (once the first run finished generation 1): the
    pool is replaced and the lost chunks computed again; the sweep ends (exit 0) with one line
    naming the dead worker and what it was evaluating, and every run equals an undisturbed
    sweep's."""
    config, args = pendulum_sweep(tmp_path)
    out, straight = tmp_path / "killed", tmp_path / "straight"
    assert sweep_cli.main([*args, "--out", str(straight), "--handler", "sequential"]) == 0
    sweep = [*args, "--out", str(out), "--handler", "mp", "--workers", "2"]
    result = subprocess.run(
        command(sweep, kill_worker_after=1, sweep=True),
        capture_output=True,
        text=True,
        timeout=200,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    recoveries = [line for line in result.stdout.splitlines() if line.startswith("mp: worker")]
    assert len(recoveries) == 1, result.stdout
    assert "(exit code -9, killed by SIGKILL) while evaluating genome" in recoveries[0]
    assert " of run base/seed-" in recoveries[0] and "recomputes the" in recoveries[0]
    assert_same_sweep(out, straight)


@pytest.mark.timeout(240)
def test_a_genome_that_kills_every_worker_fails_the_sweep_naming_it(tmp_path, capsys):
    """An env that dies on one genome's episode (genome 5 of run seed-2, generation 1) kills a
    worker on every retry: the sweep fails with the mp handler's one-line error naming the
    genome, its seed and its run, after MAX_DEATHS - 1 recovery lines, and leaves no worker."""
    poison = 5
    base_seed = int(generation_seeds(2, 1, 8, shared=False)[poison])
    config = sweep_config(
        tmp_path,
        environment={
            "entry_point": "examples.poison_env:PoisonCartPole",
            "kwargs": {"die_on_seed": episode_seed(base_seed, 0)},
        },
        episode_runner={
            "number_fitness_runs": 1,
            "max_steps_per_run": 80,
            "fix_seed_for_generation": False,
        },
    )
    args = [str(config), "--seeds", "1-2", "--out", str(tmp_path / "s"), "--workers", "2"]
    assert sweep_cli.main([*args, "--quiet"]) == EXIT_FAILED
    printed = capsys.readouterr()
    errors = printed.err.splitlines()
    assert errors[0].startswith(
        f"{sweep_cli.PROGRAM}: error: RuntimeError: mp: evaluating genome {poison} (seed "
        f"{base_seed}) of run base/seed-2 killed its worker process {MAX_DEATHS} times (last: pid "
    ), errors
    assert errors[1:] == [
        f"{sweep_cli.PROGRAM}: every run keeps its last checkpoint; run the same command again "
        "to continue"
    ]
    assert "Traceback" not in printed.err
    recoveries = [line for line in printed.out.splitlines() if "recomputes" in line]
    assert len(recoveries) == MAX_DEATHS - 1, recoveries
    assert not multiprocessing.active_children()


def diverging_sweep(tmp_path: Path, fail_at: str) -> tuple[Path, Path, list[str]]:
    """A sequential sweep of seed 1 with DIVERGING_SNES over ``--set
    optimizer.fail_at_generation=<fail_at>``: its config, its output folder and its arguments."""
    config = sweep_config(
        tmp_path,
        imports=["examples.diverging_snes"],
        optimizer={"type": "DIVERGING_SNES", "population_size": 8, "stdev_init": 0.3},
    )
    out = tmp_path / "s"
    args = [str(config), "--seeds", "1", "--set", f"optimizer.fail_at_generation={fail_at}"]
    args += ["--out", str(out), "--handler", "sequential", "--quiet"]
    return config, out, args


def test_a_run_whose_optimizer_raises_fails_alone_and_is_retried_by_the_same_command(
    tmp_path, capsys
):
    """Of two runs, the one whose update raises at generation 2 keeps its checkpoint of
    generation 2 and its traceback in failure.txt; the other trains to its end, equal to train
    alone; the sweep names the failed run in one line and exits 3. The same command skips the
    ended run and retries the failed one (which fails again: the error is deterministic)."""
    config, out, args = diverging_sweep(tmp_path, "2,99")
    assert sweep_cli.main(args) == EXIT_FAILED
    printed = capsys.readouterr()
    failed = out / "optimizer.fail_at_generation=2" / "seed-1"
    line = "generation 2 failed: FloatingPointError: DIVERGING_SNES diverged at generation 2"
    assert printed.err.splitlines() == [
        f"{sweep_cli.PROGRAM}: error: run optimizer.fail_at_generation=2/seed-1: {line} "
        f"(traceback in {failed / 'failure.txt'})",
        f"{sweep_cli.PROGRAM}: 1 run failed; the same command again retries each from its "
        "last checkpoint (from the start where it has none)",
    ]
    assert "1 of 2 runs ended (1 now, 0 before)" in printed.out
    text = (failed / "failure.txt").read_text()
    assert text.startswith(line + "\n\nTraceback") and "FloatingPointError" in text
    status = json.loads((failed / "training_status.json").read_text())
    assert status["generation"] == 2 and not status["finished"]
    ended = out / "optimizer.fail_at_generation=99" / "seed-1"
    assert not (ended / "failure.txt").exists()
    data = json.loads(config.read_text())
    data["optimizer"]["fail_at_generation"] = 99
    data["random_seed"] = 1
    alone_config = tmp_path / "alone.json"
    alone_config.write_text(json.dumps(data))
    alone = tmp_path / "alone"
    assert (
        train.main([str(alone_config), "--out", str(alone), "--quiet", "--handler", "sequential"])
        == 0
    )
    assert_same_run(ended, alone)
    assert sweep_cli.main(args) == EXIT_FAILED  # retried from generation 2: fails again
    printed = capsys.readouterr()
    assert "1 of 2 runs ended (0 now, 1 before)" in printed.out
    assert printed.err.splitlines()[0].startswith(f"{sweep_cli.PROGRAM}: error: run ")
    assert (failed / "failure.txt").read_text().startswith(line)


def test_a_run_that_fails_in_its_first_generation_is_retried_from_the_start(tmp_path, capsys):
    """A run whose first update raises has no checkpoint: the sweep says the same command
    retries it from the start, and the same command does (and fails the same way again)."""
    _, out, args = diverging_sweep(tmp_path, "0")
    line = "generation 0 failed: FloatingPointError: DIVERGING_SNES diverged at generation 0"
    for _ in range(2):
        assert sweep_cli.main(args) == EXIT_FAILED
        err = capsys.readouterr().err.splitlines()
        assert err[0].startswith(f"{sweep_cli.PROGRAM}: error: run ") and line in err[0]
        assert err[1].endswith(
            "retries each from its last checkpoint (from the start where it has none)"
        )
        failed = next(out.glob("*/seed-1"))
        assert not list((failed / "checkpoints").glob("*.npz"))
        assert (failed / "failure.txt").read_text().startswith(line)


def busy_worker(observer: Client, out: Path, timeout: float = 150.0) -> str:
    """The address of a worker running a chunk of the sweep writing to ``out``, once one of its
    runs has logged a generation (a header and a row)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        logged = any(log.read_text().count("\n") >= 2 for log in out.glob("*/seed-*/log.csv"))
        busy = [worker for worker, keys in observer.processing().items() if keys]
        if logged and busy:
            return busy[0]
        time.sleep(0.005)
    raise AssertionError("no worker of the cluster was seen running a chunk of the sweep")


def dask_sweep_while(action: Callable[[], None], args: list[str], address: str) -> None:
    """The sweep ``args`` on the Dask cluster at ``address``, in this process, while ``action``
    runs in a thread: the sweep exits 0 and the action raises nothing."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert sweep_cli.main([*args, "--handler", "dask", "--scheduler", address]) == 0
    finally:
        thread.join()
    assert not errors, errors


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_dask_sweep_whose_scheduler_is_killed_mid_generation_ends_identical(tmp_path, capsys):
    """SIGKILL of the `dask scheduler` (and its workers) while chunks of the sweep's runs are
    out, once a run has logged a generation, and a new cluster at the same address: the sweep
    waits for it (evaluation.reconnect_seconds), registers every open run's plugin again and
    recomputes the unfinished chunks, as a single Dask run does. It ends (exit 0) with one line
    for each step, and every run equals an undisturbed sweep's."""
    config, args = pendulum_sweep(
        tmp_path, evaluation={"handler": "sequential", "reconnect_seconds": 120}
    )
    straight, out = tmp_path / "straight", tmp_path / "killed"
    assert sweep_cli.main([*args, "--out", str(straight), "--handler", "sequential"]) == 0
    capsys.readouterr()
    port = free_port()
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    with contextlib.ExitStack() as clusters:
        cluster = clusters.enter_context(external_dask_cluster(tmp_path / "first", port=port))

        def kill_and_restart() -> None:
            with Client(cluster.address, set_as_default=False) as observer:
                busy_worker(observer, out)
            for process in cluster.processes:
                process.kill()
            assert cluster.processes[0].wait(timeout=30) == -signal.SIGKILL
            clusters.enter_context(external_dask_cluster(tmp_path / "second", port=port))

        dask_sweep_while(kill_and_restart, [*args, "--out", str(out)], cluster.address)
    printed = capsys.readouterr()
    lost = [line for line in printed.out.splitlines() if line.startswith("dask: lost")]
    back = [line for line in printed.out.splitlines() if line.startswith("dask: reconnected")]
    assert lost == [
        f"dask: lost the scheduler at {cluster.address}; waiting up to 120 s "
        "(evaluation.reconnect_seconds) for it to come back"
    ], printed.out
    assert len(back) == 1 and "unfinished chunks" in back[0], printed.out
    assert "Traceback" not in printed.err
    assert_same_sweep(out, straight)


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_dask_sweep_whose_worker_is_killed_mid_generation_recomputes_its_chunks(tmp_path, capsys):
    """SIGKILL of a `dask worker` while it runs a chunk of the sweep (once a run has logged a
    generation): as an mp sweep, the lost chunks are computed again (Dask reruns them, the
    nanny restarts the worker and every open run's plugin sets it up), the sweep ends (exit 0)
    with one line naming the lost worker, and every run equals an undisturbed sweep's."""
    config, args = pendulum_sweep(tmp_path)
    straight, out = tmp_path / "straight", tmp_path / "killed"
    assert sweep_cli.main([*args, "--out", str(straight), "--handler", "sequential"]) == 0
    capsys.readouterr()
    with external_dask_cluster(tmp_path) as cluster:
        victims: list[str] = []

        def kill_a_busy_worker() -> None:
            with Client(cluster.address, set_as_default=False) as observer:
                pids = observer.run(os.getpid)
                victims.append(busy_worker(observer, out))
                os.kill(pids[victims[0]], signal.SIGKILL)

        dask_sweep_while(kill_a_busy_worker, [*args, "--out", str(out)], cluster.address)
    printed = capsys.readouterr()
    recoveries = [line for line in printed.out.splitlines() if line.startswith("dask: worker")]
    assert recoveries == [f"dask: worker {victims[0]} lost; its chunks were recomputed"], (
        printed.out
    )
    assert "Traceback" not in printed.err
    assert_same_sweep(out, straight)
