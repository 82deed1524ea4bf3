"""The kernels numpy and OpenBLAS pick are recorded with each run, named when a resume, replay,
compare or Dask worker uses others, and made one set by portable mode.

Other machines are emulated on this one the way docs/architecture.md measures them: a process
started with ``OPENBLAS_CORETYPE=Sandybridge`` (OpenBLAS's AVX kernels) and
numpy's dispatch switched off (``helpers.OTHER_MACHINE``) runs another kernel set.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neuro_evolution.support.kernels import (
    NEEDED_FEATURES,
    cpu_has,
    kernel_set,
    kernel_text,
    portable_variables,
)
from tests.helpers import OTHER_MACHINE, external_dask_cluster

ROOT = Path(__file__).resolve().parents[2]
CARTPOLE = ROOT / "configs" / "cartpole.json"
PORTABLE = "numpy X86_V3, openblas Haswell"
TRAIN = ["--generations", "2", "--handler", "sequential", "--quiet"]

needs_avx2 = pytest.mark.skipif(
    not cpu_has(NEEDED_FEATURES) or kernel_set()["blas"].split()[0] != "openblas",
    reason="portable kernels need an x86-64 CPU with AVX2 and numpy's OpenBLAS",
)


def command(
    module: str, *args: str, environment: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """``python -m module args`` in a fresh process, ``environment`` added to this one's."""
    env = os.environ | {"PYTHONPATH": str(ROOT)} | (environment or {})
    for key in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES"):
        if environment is None or key not in environment:
            env.pop(key, None)  # this machine's own kernels unless asked for others
    return subprocess.run(
        [sys.executable, "-m", module, *args], env=env, cwd=cwd, capture_output=True, text=True
    )


def status(run_dir: Path) -> dict:
    return json.loads((run_dir / "training_status.json").read_text())


def log_rows(run_dir: Path) -> list[dict[str, str]]:
    """log.csv without its wall time."""
    with (run_dir / "log.csv").open() as file:
        return [{k: v for k, v in row.items() if k != "wall_time"} for row in csv.DictReader(file)]


def trained(out: Path, *flags: str, environment: dict[str, str] | None = None) -> Path:
    done = command(
        "neuro_evolution.train", str(CARTPOLE), *TRAIN, "--out", str(out), *flags,
        environment=environment,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run_dir,) = [path.parent for path in out.rglob("training_status.json")]
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """CartPole trained for 2 generations here and on the emulated other machine."""
    root = tmp_path_factory.mktemp("kernels")
    return {
        "here": trained(root / "here"),
        "other": trained(root / "other", environment=OTHER_MACHINE),
    }


def test_each_run_records_the_kernels_it_trained_with(runs: dict[str, Path]) -> None:
    assert status(runs["here"])["kernels"] == kernel_set()
    other = status(runs["other"])["kernels"]
    assert kernel_text(other) == "numpy baseline only, openblas Sandybridge", other


def test_a_resume_on_other_kernels_says_so_in_one_line(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Resumed on the emulated machine, the run names both sets once and trains on; its status
    then records the kernels of the session that wrote it."""
    copy = tmp_path / "run"
    subprocess.run(["cp", "-r", str(runs["here"]), str(copy)], check=True)
    done = command(
        "neuro_evolution.train", "--resume", str(copy), "--generations", "3", "--quiet",
        environment=OTHER_MACHINE,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "kernels" in line]
    assert warned == [
        f"neuro_evolution.train: warning: {copy} was trained with the kernels "
        f"{kernel_text(kernel_set())}; this process runs numpy baseline only, openblas "
        "Sandybridge, so its numbers may differ in the last bits and then take another path "
        "(docs/architecture.md#across-machines; portable kernels give one set on every AVX2 "
        "machine)"
    ], done.stderr
    assert kernel_text(status(copy)["kernels"]) == "numpy baseline only, openblas Sandybridge"


def test_a_replay_on_other_kernels_says_so(runs: dict[str, Path]) -> None:
    done = command("neuro_evolution.replay", str(runs["other"]), "--episodes", "1", "--rank", "0")
    assert done.returncode == 0, done.stderr
    assert "was trained with the kernels numpy baseline only, openblas Sandybridge" in done.stderr
    quiet = command(
        "neuro_evolution.replay", str(runs["other"]), "--episodes", "1", "--rank", "0",
        environment=OTHER_MACHINE,
    )  # fmt: skip
    assert quiet.returncode == 0 and "kernels" not in quiet.stderr, quiet.stderr


def test_compare_names_the_kernel_sets_of_its_runs(runs: dict[str, Path], tmp_path: Path) -> None:
    done = command(
        "neuro_evolution.compare", str(runs["here"]), str(runs["other"]), "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"the runs were trained with 2 kernel sets (1 with {kernel_text(kernel_set())}; 1 with "
        "numpy baseline only, openblas Sandybridge)" in done.stderr
    ), done.stderr


@needs_avx2
def test_portable_mode_gives_one_kernel_set_and_one_log_from_either_machine(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """The same config with --portable-kernels, started here and on the emulated machine: both
    start again on the portable set, record it, and log the same numbers; the config field does
    the same as the flag, and a resume of a portable run stays portable."""
    here = trained(tmp_path / "here", "--portable-kernels")
    other = trained(tmp_path / "other", "--portable-kernels", environment=OTHER_MACHINE)
    assert kernel_text(status(here)["kernels"]) == PORTABLE
    assert kernel_text(status(other)["kernels"]) == PORTABLE
    assert json.loads((other / "config.json").read_text())["evaluation"]["portable_kernels"]
    assert log_rows(here) == log_rows(other)
    config = json.loads(CARTPOLE.read_text())
    config["evaluation"]["portable_kernels"] = True
    (tmp_path / "portable.json").write_text(json.dumps(config))
    done = command(
        "neuro_evolution.train", str(tmp_path / "portable.json"), *TRAIN, "--out",
        str(tmp_path / "field"), environment=OTHER_MACHINE,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (field,) = [p.parent for p in (tmp_path / "field").rglob("training_status.json")]
    assert log_rows(field) == log_rows(here)
    resumed = command(
        "neuro_evolution.train", "--resume", str(other), "--generations", "3", "--quiet",
        environment=OTHER_MACHINE,
    )  # fmt: skip
    assert resumed.returncode == 0 and "kernels" not in resumed.stderr, resumed.stderr
    assert kernel_text(status(other)["kernels"]) == PORTABLE


def test_portable_mode_called_from_python_on_other_kernels_is_one_line() -> None:
    """``train.main([...])`` in a process that loaded numpy with other kernels cannot start
    itself again: one line naming the flag and both ways out, exit code 2."""
    script = (
        "import sys; from neuro_evolution.train import main; "
        f"sys.exit(main([{str(CARTPOLE)!r}, '--portable-kernels', '--generations', '1']))"
    )
    env = os.environ | {"PYTHONPATH": str(ROOT)} | OTHER_MACHINE
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    if cpu_has(NEEDED_FEATURES):
        assert line.startswith(
            "neuro_evolution.train: error: evaluation.portable_kernels: this process already "
            "loaded numpy with numpy baseline only, openblas Sandybridge"
        ), line
        assert "python -m neuro_evolution.train" in line
        assert 'OPENBLAS_CORETYPE="Haswell"' in line


def test_dask_workers_on_other_kernels_are_named_and_refused_in_portable_mode(
    tmp_path: Path,
) -> None:
    """A real `dask scheduler` with one `dask worker` started on the emulated machine: a run
    names the worker and its kernels in one warning line and trains; with --portable-kernels it
    is refused in one line that says how to start portable workers, and no run is written."""
    with external_dask_cluster(tmp_path, workers=1, worker_environment=OTHER_MACHINE) as cluster:
        dask = ["--handler", "dask", "--scheduler", cluster.address]
        base = [str(CARTPOLE), "--generations", "1", "--quiet", *dask]
        done = command("neuro_evolution.train", *base, "--out", str(tmp_path / "mixed"))
        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stderr.splitlines() if "kernels" in line]
        assert len(lines) == 1, done.stderr
        (line,) = lines
        assert "1 of 1 Dask workers run other kernels than this process" in line, line
        assert "(numpy baseline only, openblas Sandybridge)" in line, line
        if cpu_has(NEEDED_FEATURES):
            refused = command(
                "neuro_evolution.train", *base, "--portable-kernels", "--out",
                str(tmp_path / "portable"),
            )  # fmt: skip
            assert refused.returncode == 2, refused.stderr
            (error,) = refused.stderr.strip().splitlines()
            assert error.startswith(
                "neuro_evolution.train: error: evaluation.portable_kernels: 1 of 1 Dask workers"
            ), error
            variables = " ".join(f'{k}="{v}"' for k, v in portable_variables().items())
            assert f"start the workers as {variables} dask worker ADDRESS" in error
            assert not (tmp_path / "portable").exists() or not any(
                (tmp_path / "portable").rglob("training_status.json")
            )
