"""QD runs end to end: the archive is identical whichever handler ran them, a resumed run equals
an uninterrupted one, the run directory holds archive.npz (no pickle) and archive.png, log.csv
gains the QD columns, and replaying an elite reproduces its archived fitness."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import (
    assert_identical,
    assert_npz_identical,
    kill_then_resume,
    qd_config,
    run_straight,
)

from neuro_evolution import replay
from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.dask_handler import DaskHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.qd.files import ARCHIVE_FILE, ARCHIVE_PLOT_FILE
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.replay_members import replay_member

QD = ["MAP_ELITES", "CMA_ME"]


def archive_state(experiment: Experiment) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in experiment.optimizer.archive.to_state().items()}  # type: ignore[attr-defined]


def run_on(qd: str, handler: EvaluationHandler, **changes: object) -> Experiment:
    experiment = Experiment(parse_config(qd_config(qd, **changes)), handler=handler)
    experiment.run()
    handler.close()
    return experiment


@pytest.mark.parametrize("qd", QD)
def test_the_archive_is_identical_on_sequential_mp_and_dask(qd: str) -> None:
    """Three generations on the sequential handler, an mp pool of 2 (forkserver; and with
    lockstep workers), the vectorized handler and a Dask LocalCluster of 2 give the same log
    (wall time aside) and the same archive to the bit."""
    handlers: dict[str, EvaluationHandler] = {
        "sequential": SequentialHandler(),
        "mp": MultiprocessingHandler(workers=2, start_method="forkserver"),
        "mp-lockstep": MultiprocessingHandler(workers=2, vectorize=True),
        "lockstep": VectorizedHandler(),
        "dask": DaskHandler(workers=2),
    }
    runs = {name: run_on(qd, handler) for name, handler in handlers.items()}
    reference = runs["sequential"]
    assert len(reference.optimizer.archive) > 3  # type: ignore[attr-defined]
    expected = archive_state(reference)
    for name, run in runs.items():
        assert [r.to_dict() | {"wall_time": 0} for r in run.log] == [
            r.to_dict() | {"wall_time": 0} for r in reference.log
        ], name
        state = archive_state(run)
        assert state.keys() == expected.keys()
        for key, value in expected.items():
            assert state[key].tobytes() == value.tobytes(), (name, key)


def config_file(tmp_path: Path, qd: str, **changes: object) -> Path:
    data = qd_config(
        qd,
        number_generations=6,
        checkpoint={"every_generations": 3, "keep": 2},
        validation={"every_generations": 2, "episodes": 2},
        **changes,
    )
    path = tmp_path / f"{qd}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("qd", QD)
def test_sigkill_then_resume_ends_identical_archive_and_all(tmp_path: Path, qd: str) -> None:
    """A QD train process killed after generation 4 (checkpoint at 3) and resumed ends with the
    log, optimizer state (archive and emitters included), hall of fame and archive.npz of the
    uninterrupted run. CMA_ME's small step size makes emitters restart before and after the
    checkpoint (measured: restarts [1, 2] at generation 3, [1, 3] at 6)."""
    optimizer = qd_config(qd)["optimizer"]
    if qd == "CMA_ME":
        optimizer["sigma"] = 0.3
    config = config_file(tmp_path, qd, observation_normalization={}, optimizer=optimizer)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "killed"
    kill_then_resume(config, run_dir, tmp_path)
    assert_identical(run_dir, straight)
    assert_npz_identical(run_dir / ARCHIVE_FILE, straight / ARCHIVE_FILE)


@pytest.mark.parametrize("qd", QD)
def test_run_directory_holds_the_archive_and_replay_reproduces_every_elite(
    tmp_path: Path, qd: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """archive.npz loads without pickle and holds every elite with its genome, fitness,
    descriptors, seed and observation scaler; log.csv ends with coverage, qd_score and
    qd_best that agree with it, and so does train's summary; archive.png exists; replay
    --elite K and --cell I,J rerun an elite's training evaluation to its archived fitness and
    descriptors exactly."""
    config = config_file(tmp_path, qd, observation_normalization={})
    run_dir = run_straight(config, tmp_path / "run")
    summary = capsys.readouterr().out
    data = np.load(run_dir / ARCHIVE_FILE, allow_pickle=False)  # no object arrays inside
    for key in ("cells", "genomes", "fitness", "measures", "seeds", "observation_mean"):
        assert key in data.files, key
    assert (run_dir / ARCHIVE_PLOT_FILE).stat().st_size > 1000
    cells, fitness = data["cells"], data["fitness"]
    log = read_log(run_dir / "log.csv")
    header = (run_dir / "log.csv").read_text().splitlines()[0]
    assert header.endswith(",wall_time,coverage,qd_score,qd_best")
    assert log[-1]["coverage"] == len(cells) / 64
    assert log[-1]["qd_score"] == pytest.approx(float(np.sum(fitness)))  # offset 0
    assert log[-1]["qd_best"] == float(fitness.max())
    assert len({float(f) for f in fitness}) > 3
    coverage = f"coverage {len(cells) / 64:.6g}, qd_score {log[-1]['qd_score']:.6g}"
    assert f"optimizer: {coverage}, qd_best {fitness.max():.6g} after generation 6" in summary
    for elite in range(len(cells)):
        replayed = replay_member(run_dir, "--elite", str(elite))
        assert replayed.fitness == replayed.member.stored_fitness
    out = capsys.readouterr().out
    assert out.count("elite ") == len(cells)
    position = np.unravel_index(int(cells[-1]), (8, 8))
    assert replay.main([str(run_dir), "--cell", f"{position[0]},{position[1]}"]) == 0
    line = capsys.readouterr().out
    assert f"fitness {fitness[-1]:.10g} (archived {fitness[-1]:.10g})" in line
    candidate = np.load(run_dir / "candidate.npz", allow_pickle=False)
    assert str(candidate["source"]) == "best_elite"
    assert candidate["genome"].tobytes() == data["genomes"][int(np.argmax(fitness))].tobytes()


def test_replay_names_a_missing_elite_in_one_line(tmp_path: Path, capsys) -> None:
    """--elite out of range, an empty --cell, and --elite on a run without an archive are
    one-line errors (exit 2)."""
    run_dir = run_straight(config_file(tmp_path, "MAP_ELITES"), tmp_path / "run")
    count = len(np.load(run_dir / ARCHIVE_FILE)["cells"])
    assert replay.main([str(run_dir), "--elite", str(count)]) == 2
    assert f"--elite must be in 0..{count - 1}, got {count}" in capsys.readouterr().err
    occupied = set(np.load(run_dir / ARCHIVE_FILE)["cells"].tolist())
    empty = next(c for c in range(64) if c not in occupied)
    assert replay.main([str(run_dir), "--cell", f"{empty // 8},{empty % 8}"]) == 2
    assert "that cell holds no elite" in capsys.readouterr().err
    (run_dir / ARCHIVE_FILE).unlink()
    assert replay.main([str(run_dir), "--elite", "0"]) == 2
    assert "archive.npz: missing" in capsys.readouterr().err


@pytest.mark.parametrize("qd", QD)
def test_same_seeds_every_generation_trains_every_generation_on_generation_0s_episodes(
    qd: str,
) -> None:
    """With the option every elite of every generation carries generation 0's episode seed
    (one fixed scenario); without it the generations' seeds differ."""
    seeds = {}
    for fixed in (False, True):
        optimizer = {**qd_config(qd)["optimizer"], "same_seeds_every_generation": fixed}
        experiment = run_on(qd, SequentialHandler(), optimizer=optimizer)
        archive = experiment.optimizer.archive  # type: ignore[attr-defined]
        cells = archive.elite_cells()
        generations = {int(g) for g in archive.generations[cells]}
        assert len(generations) > 1  # elites from several generations
        seeds[fixed] = {int(s) for s in archive.seeds[cells]}
    assert len(seeds[True]) == 1
    assert len(seeds[False]) > 1
