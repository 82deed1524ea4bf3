"""Bad inputs that can be seen at start-up are refused there: exit code 2, one line on stderr
naming what to fix, no traceback, and no run directory (or an unchanged one). Real ``train``
processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import nsga2_config, qd_config, read_only, require, small_config

CARTPOLE = Path(__file__).resolve().parents[2] / "configs" / "cartpole.json"


def train(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def refused(args: list[str], cwd: Path, timeout: float = 300) -> str:
    """The one stderr line of a ``train`` that exits 2 without a traceback."""
    done = train(args, cwd, timeout)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert lines[0].startswith("neuro_evolution.train: error: "), lines[0]
    return lines[0]


def write_config(directory: Path, data: dict[str, Any], name: str = "config.json") -> Path:
    path = directory / name
    path.write_text(json.dumps(data))
    return path


def test_a_lockstep_wave_that_cannot_fit_is_refused_before_the_run_directory_exists(
    tmp_path: Path,
) -> None:
    """200,000 individuals x 1,000 episodes in one lockstep wave (about 3 TiB of CartPole lanes)
    is refused at start-up on evaluation.max_lanes, with the numbers, before any directory is
    made; the same config in mp workers with vectorize (one chunk per worker) too."""
    data = json.loads(CARTPOLE.read_text())
    data["optimizer"]["population_size"] = 200_000
    data["episode_runner"] = {"number_fitness_runs": 1000}
    for evaluation, lanes in (
        ({"handler": "vectorized"}, "200,000,000 lanes (1000 episodes x 200,000 individuals)"),
        ({"handler": "mp", "vectorize": True, "workers": 2}, "100,000,000 lanes"),
    ):
        config = write_config(tmp_path, {**data, "evaluation": evaluation})
        line = refused([str(config), "--out", "run"], tmp_path)
        assert "evaluation.max_lanes: a lockstep wave of " + lanes in line
        assert "set max_lanes to at most" in line
        assert not (tmp_path / "run").exists() and not (tmp_path / "runs").exists()


def test_a_lockstep_wave_that_fits_is_not_refused(tmp_path: Path) -> None:
    """The check refuses only what cannot fit: 64 lanes of CartPole train as before."""
    data = small_config(number_generations=1)
    data["optimizer"] = {"type": "PGPE", "population_size": 32}
    data["episode_runner"] = {"number_fitness_runs": 2, "max_steps_per_run": 20}
    data["evaluation"] = {"handler": "vectorized"}
    config = write_config(tmp_path, data)
    done = train([str(config), "--out", "run", "--quiet"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "log.csv").is_file()


# --- read-only places -----------------------------------------------------------------------


def tiny_config(directory: Path) -> Path:
    data = small_config(number_generations=2)
    data["validation"] = None
    return write_config(directory, data, "tiny.json")


def test_out_in_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    with read_only(tmp_path / "locked") as locked:
        line = refused([str(config), "--out", str(locked / "run")], tmp_path)
        assert not (locked / "run").exists()
    assert f"--out: cannot create {locked / 'run'} (" in line and "--out with a folder" in line


def test_an_empty_read_only_out_folder_is_one_line_and_stays_empty(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    with read_only(tmp_path / "locked") as locked:
        line = refused([str(config), "--out", str(locked)], tmp_path)
        assert list(locked.iterdir()) == []
    assert f"--out: cannot write in {locked} (" in line


def test_the_default_runs_folder_under_a_read_only_working_directory_is_one_line(
    tmp_path: Path,
) -> None:
    config = tiny_config(tmp_path)
    with read_only(tmp_path / "cwd") as cwd:
        line = refused([str(config)], cwd)
        assert not (cwd / "runs").exists()
    assert "runs/ (the default run folder" in line and "pass --out DIR" in line


def test_resume_in_a_read_only_run_directory_is_one_line_and_changes_nothing(
    tmp_path: Path,
) -> None:
    """A run directory on a file system remounted read-only: refused before anything is
    loaded or written, naming the directory and what to do."""
    config = tiny_config(tmp_path)
    done = train([str(config), "--out", "run", "--quiet"], tmp_path)
    assert done.returncode == 0, done.stderr
    run = tmp_path / "run"
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    with read_only(run):
        line = refused(["--resume", str(run), "--generations", "4"], tmp_path)
    assert f"{run}: cannot write in the run directory (" in line and "resume the copy" in line
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


# --- a user's brain with a mistake ------------------------------------------------------------


def user_brain_config(directory: Path, brain: str) -> Path:
    data = small_config(imports=["examples.bad_brains"], number_generations=2)
    data["brain"] = {"type": brain, "hidden_size": 3}
    return write_config(directory, data, f"{brain}.json")


def with_examples(directory: Path) -> Path:
    """``directory`` holding a copy of tests/examples: ``python -m`` imports
    ``examples.bad_brains`` from its working directory."""
    examples = directory / "examples"
    shutil.copytree(Path(__file__).parents[1] / "examples", examples)
    return directory


def test_a_user_brain_whose_genome_size_does_not_match_its_fill_is_one_line(
    tmp_path: Path,
) -> None:
    cwd = with_examples(tmp_path)
    config = user_brain_config(cwd, "WrongSizeElman")
    line = refused([str(config), "--out", "run"], cwd)
    assert "brain: a WrongSizeElman brain cannot be built from a genome of its genome_size" in line
    assert "genome_size must be the number of genes its fill reads" in line
    assert not (cwd / "run").exists()


def test_a_user_brain_whose_fill_reads_fewer_genes_than_its_genome_size_is_one_line(
    tmp_path: Path,
) -> None:
    """A genome_size larger than what fill reads is refused at start-up with both numbers and the
    genes never read, for a fill that copies its genes and one that transforms them; no run
    directory is made."""
    cwd = with_examples(tmp_path)
    # CartPole: 4 inputs, 2 outputs; hidden 3: 3*4 + 3*3 + 3 + 2*3 = 30 genes read
    for brain, size, never in (
        ("OversizedElman", 32, "30-31"),
        ("SquashedOversizedElman", 33, "30-32"),
    ):
        config = user_brain_config(cwd, brain)
        line = refused([str(config), "--out", "run"], cwd)
        assert (
            f"brain: a {brain} brain's fill reads 30 of its genome_size {size} genes "
            f"(never gene {never})"
        ) in line
        assert "genome_size must be the number of genes its fill reads" in line
        assert not (cwd / "run").exists()


def test_a_user_brain_acting_outside_the_action_space_is_one_line(tmp_path: Path) -> None:
    cwd = with_examples(tmp_path)
    config = user_brain_config(cwd, "OutOfSpace")
    line = refused([str(config), "--out", "run"], cwd)
    assert "brain OutOfSpace produced np.int64(7), which is not in the action space" in line
    assert not (cwd / "run").exists()


# --- measures ---------------------------------------------------------------------------------


def test_an_info_key_missing_from_the_final_info_is_refused_at_start_up(tmp_path: Path) -> None:
    """reduce last reads the info dict of the step that ends an episode: a key no episode's end
    has is refused at start-up, as it is for the per-step reductions."""
    for reduce in ("last", "mean"):
        descriptor = {"name": "nope", "source": "info", "key": "no_such_key", "reduce": reduce,
                      "low": 0.0, "high": 1.0, "bins": 4}  # fmt: skip
        data = qd_config("MAP_ELITES")
        data["optimizer"]["descriptors"] = [descriptor, data["optimizer"]["descriptors"][0]]
        config = write_config(tmp_path, data)
        line = refused([str(config), "--out", "run"], tmp_path)
        assert "optimizer.descriptors[0].key: 'no_such_key' is not in" in line
        assert not (tmp_path / "run").exists()


def test_nsga2_on_the_jax_handler_names_optimizer_objectives(tmp_path: Path) -> None:
    require("jax")
    config = write_config(tmp_path, nsga2_config())
    line = refused([str(config), "--handler", "jax", "--out", "run"], tmp_path)
    assert "error: optimizer.objectives: the JAX path computes no per-episode measures" in line
    assert not (tmp_path / "run").exists()


def test_a_sweep_into_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    with read_only(tmp_path / "locked") as locked:
        done = subprocess.run(
            [sys.executable, "-m", "neuro_evolution.sweep", str(config), "--seeds", "1-2",
             "--out", str(locked / "sweep"), "--quiet"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert not (locked / "sweep").exists()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    line = done.stderr.strip()
    assert line.startswith(f"neuro_evolution.sweep: error: --out: cannot create {locked}/sweep (")
    assert line.endswith("); pass --out with a folder you can write in") and "\n" not in line
