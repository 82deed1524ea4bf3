"""Helpers shared by test modules (test modules import from here, never from each other or from
conftest): tiny configs, the guard for optional extras, real train processes with injected faults,
Dask setups, and the inputs shared by the brain tests."""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple, TextIO

import gymnasium as gym
import numpy as np
import pytest
from distributed import Client, Security
from fault_injection import command

from neuro_evolution import train
from neuro_evolution.brains.base import BrainTemplate, parse_brain_config
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import (
    EpisodeRunnerConfig,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.episodes.wrappers import REWARD_OFFSET
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.pbt import cli as pbt_cli
from neuro_evolution.pbt.lineage import STATE_FILE
from neuro_evolution.run.directory import LogRow, read_log
from neuro_evolution.run.experiment import template_for_env
from neuro_evolution.support.atomic import load_npz
from neuro_evolution.support.kernels import portable_variables
from neuro_evolution.support.seeds import generation_seeds

# --- configs ----------------------------------------------------------------------------------
SMALL_CARTPOLE: dict[str, Any] = {
    "environment": {"id": "CartPole-v1"},
    "random_seed": 7,
    "number_generations": 3,
    "optimizer": {"type": "MU_ES", "mu": 6, "lambda_": 12},
    "brain": {"type": "FFNN", "hidden_layers": [4]},
    "episode_runner": {"number_fitness_runs": 2, "max_steps_per_run": 60},
    "evaluation": {"handler": "sequential"},
}


def small_config(**changes: Any) -> dict[str, Any]:
    """A deep copy of a tiny CartPole experiment with top-level keys replaced."""
    config = copy.deepcopy(SMALL_CARTPOLE)
    config.update(copy.deepcopy(changes))
    return config


# Another machine's kernels, emulated here: OpenBLAS's AVX kernels and numpy's baseline (its
# AVX2 targets and every one above them switched off, so an AVX-512 machine emulates it too).
OTHER_MACHINE = {
    "OPENBLAS_CORETYPE": "Sandybridge",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 " + portable_variables()["NPY_DISABLE_CPU_FEATURES"],
}
OTHER_TEXT = "numpy baseline only, openblas Sandybridge"  # how kernel_text names them

VALIDATION_COLUMNS = ("validation_mean", "validation_std", "validation_min", "validation_steps")


def novelty_run(data: dict[str, Any], handler: Any) -> tuple[list[dict[str, Any]], np.ndarray]:
    """Run config ``data`` on ``handler`` (closed after): its log rows without wall time, and
    the novelty archive's behaviours."""
    from neuro_evolution.run.experiment import Experiment

    experiment = Experiment(parse_config(data), handler=handler)
    try:
        experiment.run()
    finally:
        handler.close()
    log = [{k: v for k, v in r.to_dict().items() if k != "wall_time"} for r in experiment.log]
    assert experiment.novelty is not None
    return log, experiment.novelty.archive.behaviors


def without_end_validation(log: list[dict[str, Any]], ended_after: int) -> list[dict[str, Any]]:
    """``log`` of a run that first ended after ``ended_after`` generations and was then extended,
    with that end's validation blanked: a run validates after its last generation, so an extended
    run holds exactly one validation more than a run that went straight through."""
    rows = [dict(row) for row in log]
    assert rows[ended_after - 1]["validation_mean"] is not None, "the run validated at its end"
    rows[ended_after - 1].update(dict.fromkeys(VALIDATION_COLUMNS))
    return rows


def start_up_error(environment: dict[str, Any], directory: Path, capsys: Any) -> str:
    """``train`` on a small config with ``environment``, run from ``directory`` (the caller
    chdirs there): it must refuse at start-up with exit 2, one stderr line (returned) and no
    run directory."""
    from neuro_evolution import train

    path = directory / "bad.json"
    path.write_text(json.dumps(small_config(environment=environment)))
    assert train.main([str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert not (directory / "runs").exists()
    return err


# --- optional extras --------------------------------------------------------------------------
# Each optional extra of pyproject.toml (and the test-only pycma, pymoo, evosax) -> the modules
# whose absence means "not installed".
EXTRAS: dict[str, tuple[str, ...]] = {
    "box2d": ("Box2D",),
    "mujoco": ("mujoco",),
    "video": ("moviepy",),
    "tensorboard": ("tensorboard",),
    "mlflow": ("mlflow",),
    "jax": ("jax", "gymnax"),
    "brax": ("brax",),
    "cma": ("cma",),
    "pymoo": ("pymoo",),
    "evosax": ("evosax", "optax", "jax"),
    "popgym": ("popgym",),
    "atari": ("ale_py", "cv2"),
    "minatar": ("minatar",),
    "export": ("onnx", "onnxruntime"),
    "coco": ("cocoex", "cocopp"),
}
INSTALLED_BY = {
    "cma": "test",
    "coco": "test",
    "evosax": "test",
    "pymoo": "test",
}  # the pyproject.toml extra that installs a test-only package


def installed(extra: str) -> bool:
    """Whether every module of ``extra`` is installed (found, not imported)."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    return all(importlib.util.find_spec(module) is not None for module in EXTRAS[extra])


def script_module(name: str) -> ModuleType:
    """``scripts/<name>.py`` imported as the module ``name`` (kept in ``sys.modules``, where
    dataclasses resolve its annotations)."""
    path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def require(extra: str) -> None:
    """The one guard for an optional extra: skip unless it is installed, then import it.

    Called at module level it skips the module, at the top of a test that test. Unlike
    ``pytest.importorskip``, an installed package that fails to import (a dependency it forgot
    to declare) fails the tests instead of silently skipping them.
    """
    if not installed(extra):
        missing = [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]
        pytest.skip(
            f"needs the {extra} extra ({', '.join(missing)} not installed): "
            f"pip install -e '.[{INSTALLED_BY.get(extra, extra)}]'",
            allow_module_level=True,
        )
    for module in EXTRAS[extra]:
        importlib.import_module(module)


def sequential_and_jax_results(
    template: BrainTemplate, spec: RunnerSpec, genomes: np.ndarray, seeds: np.ndarray
) -> list[tuple[list[Any], list[Any]]]:
    """(sequential, jax) results of the same genomes and seeds, float64, for a training and a
    validation context: what a test compares to hold the two handlers to one episode."""
    import jax

    from neuro_evolution.evaluation.jax.handler import JaxHandler

    pairs = []
    with jax.enable_x64(True), SequentialHandler() as sequential, JaxHandler("float64") as fast:
        sequential.start(template, spec)
        fast.start(template, spec)
        for context in (EvaluationContext(), EvaluationContext(validation=True)):
            pairs.append(
                (
                    sequential.batch_evaluate(genomes, seeds, context),
                    fast.batch_evaluate(genomes, seeds, context),
                )
            )
    return pairs


# The backends that step JAX envs -> the extra each needs.
BACKEND_EXTRAS = {"gymnax": "jax", "brax": "brax"}
# Env packages and modules that need an extra -> that extra: Gymnasium's, and this package's
# envs built on them (ReacherMemory is Reacher-v5).
ENV_PACKAGE_EXTRAS = {
    "gymnasium.envs.box2d": "box2d",
    "gymnasium.envs.mujoco": "mujoco",
    "neuro_evolution.envs.reacher_memory": "mujoco",
}
PACKAGE = "neuro_evolution"  # whose env modules register their ids without importing any extra


def environment_extras(environment: dict[str, Any]) -> list[str]:
    """The optional extras an ``environment`` config section needs (names of EXTRAS): by its
    backend, the module of a ``module:EnvId`` id, the package of a registered id's entry point,
    or the package of an ``entry_point`` (looked up without importing a missing extra; a module
    of this package is imported, so its ids are registered)."""
    backend = environment.get("backend", "gymnasium")
    if backend != "gymnasium":
        return [BACKEND_EXTRAS[backend]]
    env_id = str(environment.get("id", ""))
    extras: list[str] = []
    if ":" in env_id:
        module, env_id = env_id.split(":", 1)
        extras = [extra for extra, modules in EXTRAS.items() if module.split(".")[0] in modules]
        if module.split(".")[0] == PACKAGE:
            importlib.import_module(module)
    entry_point = environment.get("entry_point")
    if entry_point is None and env_id in gym.registry:
        entry_point = gym.registry[env_id].entry_point
    for package, extra in ENV_PACKAGE_EXTRAS.items():
        if str(entry_point).startswith(package) and extra not in extras:
            extras.append(extra)
    return extras


# --- train processes (fault injection: fault_injection.py) ------------------------------------
def start_train(
    args: list[str],
    cwd: Path,
    new_session: bool = False,
    pause_after: int | None = None,
    crash: str | None = None,
) -> subprocess.Popen:
    """A real train process with a fault injected (see fault_injection.py), stdout/stderr
    captured, optionally leading its own process group."""
    return subprocess.Popen(
        command(args, pause_after, crash),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
    )


def wait_until_stopped(process: subprocess.Popen, timeout: float = 120.0) -> None:
    """Wait until ``process`` has stopped itself (SIGSTOP from the injected pause)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"train exited early: {process.communicate()}")
        state = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "T":
            return
        time.sleep(0.02)
    process.kill()
    raise AssertionError("train did not reach the pause point")


def run_straight(config: Path, out: Path) -> Path:
    """The uninterrupted run (in process, through the same command line)."""
    assert train.main([str(config), "--out", str(out), "--quiet"]) == 0
    return out


def kill_then_resume(config: Path, run_dir: Path, workdir: Path, pause_after: int = 4) -> None:
    """``train`` in a subprocess, SIGKILLed once it has finished generation ``pause_after``,
    then resumed in process to the end."""
    process = start_train(
        [str(config), "--out", str(run_dir), "--quiet"], workdir, pause_after=pause_after
    )
    wait_until_stopped(process)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0


def assert_npz_identical(a: Path, b: Path) -> None:
    """The two npz files hold the same arrays, byte for byte (loaded without pickle)."""
    x, y = np.load(a, allow_pickle=False), np.load(b, allow_pickle=False)
    assert sorted(x.files) == sorted(y.files)
    for key in x.files:
        assert x[key].tobytes() == y[key].tobytes(), key


def final_state(run_dir: Path) -> dict[str, Any]:
    """What must match: log without wall time, final optimizer state, hall of fame arrays."""
    status = json.loads((run_dir / "training_status.json").read_text())
    checkpoint = load_npz(run_dir / status["latest_checkpoint"])
    meta = json.loads(str(checkpoint["meta"]))
    optimizer = {k: v for k, v in checkpoint.items() if k.startswith("optimizer/")}
    optimizer.update(meta["scalars"]["optimizer"])
    return {
        "generation": status["generation"],
        "log": [
            {k: v for k, v in row.items() if k != "wall_time"}
            for row in read_log(run_dir / "log.csv")
        ],
        "optimizer": optimizer,
        "hall_of_fame": load_npz(run_dir / "hall_of_fame.npz"),
    }


def assert_identical(resumed: Path, straight: Path, extended_from: int | None = None) -> None:
    """Same generations, log, optimizer state and hall-of-fame bytes (per array).

    ``extended_from``: the resumed run first ended there, and a run validates after its last
    generation, so that row holds one extra validation (the only allowed difference).
    """
    a, b = final_state(resumed), final_state(straight)
    assert a["generation"] == b["generation"] == 6
    if extended_from is not None:
        a["log"] = without_end_validation(a["log"], extended_from)
    assert a["log"] == b["log"]
    for part in ("optimizer", "hall_of_fame"):
        assert a[part].keys() == b[part].keys()
        for key in a[part]:
            x, y = np.asarray(a[part][key]), np.asarray(b[part][key])
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f"{part} {key}"


# --- read-only places -----------------------------------------------------------------------
@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """``directory`` made read-only for this process: a read-only bind mount of itself for root
    (whom file modes do not stop), file modes otherwise. Skips where neither is possible."""
    directory.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        mode = directory.stat().st_mode
        directory.chmod(0o555)
        try:
            yield directory
        finally:
            directory.chmod(mode)
        return
    bind = ["mount", "--bind", str(directory), str(directory)]
    if subprocess.run(bind, capture_output=True).returncode != 0:
        pytest.skip("root without mount: no read-only folder to test with")
    try:
        remount = ["mount", "-o", "remount,ro,bind", str(directory)]
        if subprocess.run(remount, capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        yield directory
    finally:
        subprocess.run(["umount", str(directory)], capture_output=True)


# --- evaluation setups and a real external Dask cluster ---------------------------------------
DASK = [sys.executable, "-m", "dask"]  # the `dask` command of this interpreter


class Setup(NamedTuple):
    """A template, a RunnerSpec and one generation of random genomes with their seeds."""

    template: BrainTemplate
    spec: RunnerSpec
    genomes: np.ndarray
    seeds: np.ndarray


def make_setup(env_id: str = "CartPole-v1", count: int = 36, max_steps: int = 200) -> Setup:
    """A small FFNN on ``env_id`` with ``count`` random genomes and per-individual seeds."""
    environment = parse(EnvironmentConfig, {"id": env_id}, "environment")
    runner = EpisodeRunnerConfig(number_fitness_runs=2, max_steps_per_run=max_steps)
    spec = RunnerSpec(environment=environment, episode_runner=runner)
    brain = parse_brain_config({"type": "FFNN", "hidden_layers": [6]}, "brain")
    template = template_for_env(environment, brain, np.random.default_rng(3))
    genomes = np.random.default_rng(11).normal(size=(count, template.genome_size))
    return Setup(template, spec, genomes, generation_seeds(5, 2, count, shared=False))


def config_setup(data: dict[str, Any], count: int = 24) -> Setup:
    """Template, RunnerSpec (with the config's imports) and random genomes for a config."""
    config = parse_config(data)
    spec = RunnerSpec(
        environment=config.environment,
        episode_runner=config.episode_runner,
        imports=config.imports,
    )
    brain = parse_brain_config({"type": "FFNN", "hidden_layers": [4]}, "brain")
    template = template_for_env(config.environment, brain, np.random.default_rng(3))
    genomes = np.random.default_rng(11).normal(size=(count, template.genome_size))
    return Setup(template, spec, genomes, generation_seeds(5, 2, count, shared=False))


def as_tuples(results: list[EvaluationResult]) -> list[tuple]:
    """What handlers must agree on, per genome: fitness, steps, terminated, truncated."""
    return [(r.fitness, r.steps, r.terminated, r.truncated) for r in results]


def sequential_results(setup: Setup) -> list[tuple]:
    """The reference: ``setup``'s generation evaluated in process by the sequential handler."""
    with SequentialHandler() as sequential:
        sequential.start(setup.template, setup.spec)
        return as_tuples(sequential.batch_evaluate(setup.genomes, setup.seeds))


def assert_handler_matches_sequential(setup: Setup, case: str) -> None:
    """``case`` "vectorized" (a SyncVectorEnv of the env) or "mp" (2 forkserver workers)
    evaluates ``setup``'s generation exactly as the sequential handler does, on genomes whose
    results really differ."""
    from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
    from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler

    reference = sequential_results(setup)
    assert len({fitness for fitness, *_ in reference}) > 2  # the genomes really differ
    if case == "vectorized":
        handler: VectorizedHandler | MultiprocessingHandler = VectorizedHandler()
    else:
        handler = MultiprocessingHandler(workers=2, start_method="forkserver")
    with handler:
        handler.start(setup.template, setup.spec)
        assert as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds)) == reference
        if case == "vectorized":
            assert "SyncVectorEnv" in handler.describe()


def extend_on_vectorized(path: Path, tmp_path: Path) -> None:
    """The run of config ``path`` for 3 generations, extended to 6 on the vectorized handler,
    equals 6 straight ones (the extension's one extra validation aside)."""
    straight = run_straight(path, tmp_path / "straight")
    run_dir = tmp_path / "short"
    assert train.main([str(path), "--out", str(run_dir), "--generations", "3", "--quiet"]) == 0
    argv = ["--resume", str(run_dir), "--generations", "6", "--handler", "vectorized"]
    assert train.main([*argv, "--quiet"]) == 0
    assert_identical(run_dir, straight, extended_from=3)


LEAF_EXTENSIONS = """basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""  # what docs/cluster.md has the user write into leaf.ext


class TlsFiles(NamedTuple):
    """A CA and the scheduler's, worker's and client's certificate + key (PEM files)."""

    ca: Path
    scheduler: tuple[Path, Path]
    worker: tuple[Path, Path]
    client: tuple[Path, Path]


def openssl(*args: str | Path, cwd: Path) -> None:
    """Run ``openssl ARGS`` in ``cwd`` (its output only when it fails)."""
    subprocess.run(["openssl", *map(str, args)], cwd=cwd, check=True, capture_output=True)


def make_tls_files(directory: Path, name: str = "ca") -> TlsFiles:
    """A new CA ``name`` and certificates it signs, made by the openssl commands of
    docs/cluster.md into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = directory / f"{name}.key", directory / f"{name}.pem"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
            "-days", "2", "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)  # fmt: skip
    (directory / "leaf.ext").write_text(LEAF_EXTENSIONS)
    pairs = []
    for role in ("scheduler", "worker", "client"):
        key, cert = directory / f"{name}-{role}.key", directory / f"{name}-{role}.pem"
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
                directory / f"{role}.csr", "-subj", f"/CN={role}", cwd=directory)  # fmt: skip
        openssl("x509", "-req", "-in", directory / f"{role}.csr", "-CA", ca, "-CAkey", ca_key,
                "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", "leaf.ext",
                cwd=directory)  # fmt: skip
        pairs.append((cert, key))
    return TlsFiles(ca, *pairs)


def client_tls_environment(ca: Path | None, cert: Path | None, key: Path | None) -> dict[str, str]:
    """This environment with Dask's client TLS settings set to the given files (None: unset)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    for variable, value in (
        ("DASK_DISTRIBUTED__COMM__TLS__CA_FILE", ca),
        ("DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT", cert),
        ("DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY", key),
    ):
        if value is not None:
            environment[variable] = str(value)
    return environment


class ExternalCluster(NamedTuple):
    """A running `dask scheduler` and its `dask worker` processes (each with a nanny)."""

    address: str
    scheduler_file: Path
    processes: list[subprocess.Popen]


def start_dask_worker(
    address: str,
    tmp_path: Path,
    name: str,
    logs: TextIO,
    options: list[str] | tuple[str, ...] = (),
    environment: dict[str, str] | None = None,
) -> subprocess.Popen:
    """Start one single-threaded `dask worker` (with its nanny) for the scheduler at ``address``
    on 127.0.0.1, ``environment`` added to this process's; output to ``logs``."""
    return subprocess.Popen(
        [*DASK, "worker", address, "--nthreads", "1", "--nworkers", "1"]
        + ["--host", "127.0.0.1", "--no-dashboard", "--name", name]
        + ["--local-directory", str(tmp_path), *options],
        env=None if environment is None else os.environ | environment,
        stdout=logs,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )


@contextlib.contextmanager
def external_dask_cluster(
    tmp_path: Path,
    workers: int = 2,
    port: int = 0,
    tls: TlsFiles | None = None,
    worker_options: tuple[str, ...] = (),
    worker_environment: dict[str, str] | None = None,
) -> Iterator[ExternalCluster]:
    """Start `dask scheduler` (on ``port``; 0: a free one) and ``workers`` `dask worker`s on
    127.0.0.1, speaking mutual TLS when ``tls`` is given, each with ``worker_options`` (e.g.
    ``--preload FILE``) and ``worker_environment`` added to this process's environment; kill
    them afterwards."""
    scheduler_file = tmp_path / "scheduler.json"
    logs = (tmp_path / "dask.log").open("w")
    common = {"stdout": logs, "stderr": subprocess.STDOUT, "cwd": tmp_path}

    def tls_options(pair: tuple[Path, Path]) -> list[str]:
        if tls is None:
            return []
        return ["--tls-ca-file", str(tls.ca), "--tls-cert", str(pair[0]), "--tls-key", str(pair[1])]

    protocol = [] if tls is None else ["--protocol", "tls", *tls_options(tls.scheduler)]
    processes = [
        subprocess.Popen(
            [*DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), *protocol]
            + ["--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(scheduler_file)],
            **common,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            if time.monotonic() > deadline or processes[0].poll() is not None:
                raise RuntimeError(f"dask scheduler did not start; see {tmp_path / 'dask.log'}")
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        for index in range(workers):
            processes.append(
                start_dask_worker(
                    address, tmp_path, f"ext-{index}", logs,
                    [*worker_options, *([] if tls is None else tls_options(tls.worker))],
                    worker_environment,
                )
            )  # fmt: skip
        security = None if tls is None else Security(
            tls_ca_file=str(tls.ca), tls_client_cert=str(tls.client[0]),
            tls_client_key=str(tls.client[1]), require_encryption=True,
        )  # fmt: skip
        if workers:
            with Client(address, set_as_default=False, timeout="30s", security=security) as client:
                client.wait_for_workers(workers, timeout=90)
        yield ExternalCluster(address, scheduler_file, processes)
    finally:
        for process in reversed(processes):
            process.kill()
        for process in processes:
            process.wait(timeout=30)
        logs.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --- environments -----------------------------------------------------------------------------
WAYS: dict[str, dict[str, Any]] = {
    "imports": {"imports": ["examples.line_target"], "environment": {"id": "LineTarget-v0"}},
    "module_id": {"environment": {"id": "examples.line_target:LineTarget-v0"}},
    "entry_point": {"environment": {"entry_point": "examples.line_target:LineTargetEnv"}},
}
WRAPPED_BLACKJACK = {
    "id": "Blackjack-v1",
    "wrappers": ["FlattenObservation", {"name": REWARD_OFFSET, "kwargs": {"offset": -0.25}}],
}


def line_target_config(way: str, **changes: Any) -> dict[str, Any]:
    """A tiny experiment on the example env, named the way ``way``."""
    data = small_config(
        episode_runner={"number_fitness_runs": 2},
        brain={"type": "FFNN", "hidden_layers": [3]},
        **WAYS[way],
    )
    data["environment"]["kwargs"] = {"speed": 0.2, "max_steps": 25}
    data.update(changes)
    return data


def without_time(log: list[LogRow] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Log rows (records, or dicts read back from log.csv) without their wall time."""
    rows = [row if isinstance(row, dict) else row.to_dict() for row in log]
    return [{k: v for k, v in row.items() if k != "wall_time"} for row in rows]


# --- brain inputs (the references are in brain_references.py) ---------------------------------
# bounded, half-bounded, unbounded and "too large to count as bounded" elements (normalize_input)
OBSERVATION_SPACE = gym.spaces.Box(
    low=np.array([-2.0, -1.0, -np.inf, 0.0, -3.0]),
    high=np.array([2.0, 3.0, np.inf, 1e6, 5.0]),
    dtype=np.float64,
)
ACTION_SPACE = gym.spaces.Box(-1.0, 1.0, (3,), dtype=np.float64)  # action == raw output

NEGATIVE_DIAGONAL = "set_principle_diagonal_elements_of_W_negative"
CTRNN_CASES: list[dict[str, Any]] = [
    {},
    {"neuron_activation": "relu", "use_bias": False, "clipping_range_min": -0.5},
    {"neuron_activation_inplace": True, "optimize_y0": True, "delta_t": 0.2},
    {"optimize_state_boundaries": "per_neuron", NEGATIVE_DIAGONAL: True},
    {"optimize_state_boundaries": "global", "parameter_perturbations": 0.05},
    {"v_mask": "random", "v_mask_param": 0.5, "w_mask": "random", "w_mask_param": 0.3,
     "t_mask": "random", "t_mask_param": 0.7},
    {"v_mask": "logarithmic", "v_mask_param": 2.0, "w_mask": "logarithmic", "w_mask_param": 1.5,
     "t_mask": "logarithmic", "t_mask_param": 3.0},
    {"v_mask": "learned", "v_mask_param": 30.0, "w_mask": "learned", "w_mask_param": 60.0,
     "t_mask": "learned", "t_mask_param": 50.0, NEGATIVE_DIAGONAL: True},
    {"normalize_input": True, "normalize_input_target": 2.0},
    {"normalize_input": True, "use_bias": False, "v_mask": "random", "v_mask_param": 0.6},
    {"w_mask": "random", "w_mask_param": 0.0, "t_mask": "random", "t_mask_param": 0.0},
]  # fmt: skip

CHOICES: dict[str, list[Any]] = {
    "number_neurons": [1, 2, 5, 8],
    "delta_t": [0.01, 0.05, 0.5],
    "neuron_activation": ["tanh", "relu"],
    "neuron_activation_inplace": [False, True],
    "use_bias": [False, True],
    "optimize_y0": [False, True],
    "optimize_state_boundaries": ["per_neuron", "global", "fixed"],
    NEGATIVE_DIAGONAL: [False, True],
    "v_mask": ["dense", "random", "logarithmic", "learned"],
    "w_mask": ["dense", "random", "logarithmic", "learned"],
    "t_mask": ["dense", "random", "logarithmic", "learned"],
    "normalize_input": [False, True],
    "parameter_perturbations": [0.0, 0.1],
}
MASK_PARAMS = {"dense": 1.0, "random": 0.5, "logarithmic": 1.7, "learned": 45.0}


def random_ctrnn_cases(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` random option combinations (fixed seed, so the test ids are stable)."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        case = {name: values[rng.integers(len(values))] for name, values in CHOICES.items()}
        for prefix in ("v", "w", "t"):
            case[f"{prefix}_mask_param"] = MASK_PARAMS[case[f"{prefix}_mask"]]
        cases.append(case)
    return cases


# --- quality diversity ------------------------------------------------------------------------
def episode_length_and_return(summary: Any) -> list[float]:
    """A ``function`` measure for tests: (steps, return) of the episode's TrajectorySummary."""
    return [float(len(summary.rewards)), float(np.sum(summary.rewards))]


QD_DESCRIPTORS: list[dict[str, Any]] = [
    {"name": "cart_position", "source": "observation", "index": 0, "low": -1.0, "high": 1.0,
     "bins": 8},
    {"name": "mean_pole_angle", "source": "observation", "index": 2, "reduce": "mean",
     "low": -0.2, "high": 0.2, "bins": 8},
]  # fmt: skip
QD_OPTIMIZERS: dict[str, dict[str, Any]] = {
    "MAP_ELITES": {"type": "MAP_ELITES", "batch_size": 12, "descriptors": QD_DESCRIPTORS},
    "CMA_ME": {
        "type": "CMA_ME",
        "emitters": 2,
        "batch_size": 6,
        "sigma": 2.0,
        "descriptors": QD_DESCRIPTORS,
    },
}


def qd_config(qd: str = "MAP_ELITES", **changes: Any) -> dict[str, Any]:
    """A tiny CartPole experiment (FFNN, 3 generations) of QD optimizer ``qd``, with top-level
    keys replaced."""
    config = small_config(
        optimizer=QD_OPTIMIZERS[qd],
        episode_runner={"number_fitness_runs": 2, "max_steps_per_run": 60},
    )
    config.update(copy.deepcopy(changes))
    return config


NSGA2_OBJECTIVES: list[dict[str, Any]] = [
    {"name": "return", "source": "reward", "reduce": "sum", "sense": "maximize"},
    {"name": "push_right", "source": "action", "reduce": "mean", "sense": "minimize"},
]


def nsga2_config(**changes: Any) -> dict[str, Any]:
    """A tiny CartPole experiment (FFNN, 3 generations) of NSGA2 with two objectives (the
    return, maximized; the share of pushes to the right, minimized), top-level keys replaced."""
    config = small_config(
        optimizer={
            "type": "NSGA2",
            "population_size": 8,
            "offspring_size": 10,
            "mutation_prob": 0.3,
            "mutation_sigma": 0.5,
            "objectives": NSGA2_OBJECTIVES,
            "reference_point": [0.0, 1.0],
        },
        episode_runner={"number_fitness_runs": 2, "max_steps_per_run": 60},
    )
    config.update(copy.deepcopy(changes))
    return config


# --- population-based training ----------------------------------------------------------------
def pbt_config_data(**changes: Any) -> dict[str, Any]:
    """A tiny PBT on CartPole: PGPE (population 8), 4 runs x 3 intervals of 2 generations,
    validation every 2, exploring the center's step size (a range) and the population size."""
    data = small_config(
        number_generations=6,
        optimizer={"type": "PGPE", "population_size": 8, "radius_init": 3.0},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 60},
        validation={"every_generations": 2, "episodes": 2},
        checkpoint={"every_generations": 2},
    )
    data["pbt"] = {
        "runs": 4,
        "interval": 2,
        "explore": {
            "optimizer.max_speed": {"range": [0.05, 1.0], "log": True},
            "optimizer.population_size": {"values": [6, 8, 10]},
        },
    }
    for key, value in changes.items():
        if key.startswith("pbt_"):
            data["pbt"][key[4:]] = value
        else:
            data[key] = value
    return data


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def pbt_run_files(folder: Path) -> dict[str, Any]:
    """What two equal PBTs hold alike: lineage.json's bytes, and per run its log (wall time
    aside), config and latest checkpoint's optimizer arrays."""
    files: dict[str, Any] = {"lineage": (folder / "lineage.json").read_bytes()}
    for run_dir in sorted((folder / "runs").iterdir()):
        status = json.loads((run_dir / "training_status.json").read_text())
        checkpoint = load_npz(run_dir / status["latest_checkpoint"])
        config = json.loads((run_dir / "config.json").read_text())
        config.pop("evaluation")
        files[run_dir.name] = {
            "log": without_time(read_log(run_dir / "log.csv")),
            "config": config,
            "optimizer": {
                key: value.tobytes() for key, value in checkpoint.items() if "optimizer/" in key
            },
        }
    return files


def rows_logged(folder: Path) -> int:
    """The most generations any run of the PBT in ``folder`` has logged."""
    logs = list((folder / "runs").glob("*/log.csv"))
    return max((log.read_text().count("\n") - 1 for log in logs), default=0)


def stopped_then_resumed(config: Path, out: Path, handler: list[str]) -> None:
    """Stop the PBT once a run logged generation 3 (mid-interval 2; the sweep's should_stop),
    check that it stopped there, then run the same command to its end."""
    command = [str(config), "--out", str(out), "--quiet", *handler]
    loop = pbt_cli.run_pbt(
        pbt_cli.build_parser().parse_args(command), lambda: rows_logged(out) >= 3, lambda _: None
    )
    assert not loop.finished
    state = json.loads((out / STATE_FILE).read_text())
    assert state["intervals_done"] == 1 and state["pending"] is None
    assert 3 <= rows_logged(out) < 6, "stopped inside the second interval"
    assert pbt_cli.main(command) == 0
