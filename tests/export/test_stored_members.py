"""Replay and export pick a run's stored members only through ``Optimizer.stored_members``: a
user's QD optimizer with its own archive file (``tests/examples/niche_elites.py``, loaded by
the config's ``imports``) has its elites replayed and exported from the command line with no
edit to the package; an optimizer that declares none, and a flag it does not declare, are
refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import require, small_config

from neuro_evolution import replay, train
from neuro_evolution.export import load_policy, replay_exported
from neuro_evolution.export.__main__ import main as export_main
from neuro_evolution.run.replay_members import replay_member
from neuro_evolution.support.atomic import load_npz

require("export")

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = TESTS.parent / "neuro_evolution"
NICHE_MEASURE = {"name": "cart_position", "source": "observation", "index": 0}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m neuro_evolution.ARGS`` in a fresh interpreter that can import tests/examples."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def niche_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four generations of the user's NICHE_ELITES on CartPole, observations normalized,
    trained by ``train`` in its own process."""
    tmp_path = tmp_path_factory.mktemp("niches")
    data = small_config(
        imports=["examples.niche_elites"],
        optimizer={"type": "NICHE_ELITES", "niche_measure": NICHE_MEASURE, "low": -0.3,
                   "high": 0.3, "niches": 6, "batch_size": 10},
        number_generations=4,
        observation_normalization={},
        validation={"every_generations": 4, "episodes": 2},
    )  # fmt: skip
    config = tmp_path / "niches.json"
    config.write_text(json.dumps(data))
    done = cli("neuro_evolution.train", str(config), "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / "run"


def test_a_user_optimizers_elites_replay_to_their_stored_fitness_and_measure(
    niche_run: Path,
) -> None:
    """``replay --elite K`` (a fresh process) reruns row K of the plugin's own niches.npz to its
    stored fitness; every row, replayed, gives back its stored fitness and measure exactly."""
    stored = load_npz(niche_run / "niches.npz")
    last = len(stored["niches"]) - 1
    assert last >= 2 and "observation_mean" in stored
    done = cli("neuro_evolution.replay", str(niche_run), "--elite", str(last), cwd=niche_run)
    assert done.returncode == 0, done.stderr
    fitness = stored["fitness"][last]
    assert f"elite {last} (base seed {int(stored['seeds'][last])}): fitness {fitness:.10g} " in (
        done.stdout
    )
    assert f"(stored {fitness:.10g}); measures cart_position" in done.stdout
    for row in range(last + 1):
        replayed = replay_member(niche_run, "--elite", str(row))
        assert replayed.fitness == stored["fitness"][row]
        assert replayed.measures.tobytes() == stored["measures"][row : row + 1].tobytes()


def test_a_user_optimizers_elite_exports_to_onnx_that_plays_its_validation(
    niche_run: Path, tmp_path: Path
) -> None:
    """``export --elite K --format onnx`` writes that elite's policy (its scaler inside), which
    onnxruntime runs: on the run's validation episodes it scores what the framework's brain of
    the same genome scores."""
    out = tmp_path / "elite.onnx"
    args = ("--format", "onnx", "--out", str(out), "--elite", "1")
    done = cli("neuro_evolution.export", str(niche_run), *args, cwd=niche_run)
    assert done.returncode == 0, done.stderr
    policy = load_policy(out)
    assert policy.metadata["genome"] == "elite 1"
    assert policy.metadata["observation_normalization"] is True
    through, own = replay_exported(niche_run, out)
    assert len(through) == 2 and through == own


def test_members_an_optimizer_does_not_declare_are_refused_in_one_line(
    niche_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flag outside the declaration is refused naming the flags declared; an optimizer that
    declares none (MU_ES) is refused naming it and ``stored_members``, by replay and export
    alike, exit code 2, nothing written."""
    assert replay.main([str(niche_run), "--cell", "1,2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("--cell: the run's optimizer NICHE_ELITES names its stored members with "
                        "--elite, not --cell")  # fmt: skip
    config = tmp_path / "mu.json"
    config.write_text(json.dumps(small_config(number_generations=1)))
    plain = tmp_path / "mu"
    assert train.main([str(config), "--out", str(plain), "--quiet"]) == 0
    capsys.readouterr()
    refusal = (
        "the run's optimizer MU_ES stores no members (MuPlusLambda.stored_members() declares "
        "none for its config)"
    )
    assert replay.main([str(plain), "--elite", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--elite: {refusal}" in err and "--rank N" in err
    out = tmp_path / "p.onnx"
    assert export_main([str(plain), "--format", "onnx", "--out", str(out), "--front", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--front: {refusal}" in err and "--hall-of-fame N" in err
    assert not out.exists()


def test_replay_and_export_read_no_optimizers_files_themselves() -> None:
    """The replay and export code imports no optimizer family and names none of their files:
    what a run stores is the optimizer's to declare."""
    sources = [PACKAGE / "replay.py", PACKAGE / "run" / "replay_members.py"]
    sources += sorted((PACKAGE / "export").glob("*.py"))
    for path in sources:
        text = path.read_text()
        for name in ("neuro_evolution.qd", "neuro_evolution.moo", "archive.npz", "pareto.npz"):
            assert name not in text, f"{path.relative_to(PACKAGE)} names {name}"
    assert len(sources) > 5
