"""Observation normalization: statistics gathered by whoever ran the episodes, merged in
submission order and frozen per generation, so every handler gives the same run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import small_config

from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.normalization import (
    ObservationNormalizationConfig,
    ObservationRecorder,
    ObservationScaler,
    ObservationStatistics,
    record_batch,
)
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.evaluation.episodes.runner import TRAINING, EvaluationContext, EvaluationResult
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.dask_handler import DaskHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.directory import load_npz
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.resume import resume_experiment

NORMALIZED = small_config(
    random_seed=3,
    number_generations=4,
    optimizer={"type": "PGPE", "population_size": 10, "radius_init": 2.0},
    brain={"type": "CTRNN", "number_neurons": 3},
    episode_runner={"number_fitness_runs": 2, "max_steps_per_run": 80},
    observation_normalization={"clip": 3.0},
    validation={"every_generations": 2, "episodes": 3},
)


def test_lockstep_recording_adds_exactly_what_the_per_episode_recorder_adds() -> None:
    """Each row of record_batch equals an ObservationRecorder fed the same active steps, bit for
    bit (the vectorized handler and the runner must produce identical statistics)."""
    rng = np.random.default_rng(0)
    steps = [rng.normal(size=(5, 4)).astype(np.float32) * 10 for _ in range(30)]
    masks = [rng.random(5) < 0.7 for _ in range(29)] + [None]  # None: every row is active
    stats = np.zeros((5, 9))
    recorders = [ObservationRecorder(4) for _ in range(5)]
    for observations, active in zip(steps, masks):
        record_batch(stats, observations, active)
        for i in range(5) if active is None else np.flatnonzero(active):
            recorders[i].add(observations[i])
    for i, recorder in enumerate(recorders):
        assert stats[i].tobytes() == recorder.as_array().tobytes()


def test_merged_statistics_give_the_mean_and_variance_of_all_observations() -> None:
    """Merging per-evaluation totals equals numpy's mean/var over every observation."""
    rng = np.random.default_rng(1)
    chunks = [rng.normal(loc=[1, -2, 50], scale=[1, 3, 0.1], size=(n, 3)) for n in (7, 1, 12)]
    per_evaluation = []
    for chunk in chunks:
        recorder = ObservationRecorder(3)
        for row in chunk:
            recorder.add(row)
        per_evaluation.append(recorder.as_array())
    statistics = ObservationStatistics(ObservationNormalizationConfig(clip=10.0, epsilon=1e-14), 3)
    statistics.merge(per_evaluation)
    everything = np.concatenate(chunks)
    mean, variance = statistics.mean_and_variance()
    np.testing.assert_allclose(mean, everything.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(variance, everything.var(axis=0), rtol=1e-9)
    normalized = statistics.scaler().apply(everything)
    np.testing.assert_allclose(normalized.mean(axis=0), 0.0, atol=1e-9)
    np.testing.assert_allclose(normalized.std(axis=0), 1.0, rtol=1e-6)


def test_scaler_clips_and_the_first_generation_sees_raw_observations() -> None:
    """Before any statistics the scaler is the identity; afterwards values are clipped."""
    statistics = ObservationStatistics(ObservationNormalizationConfig(clip=2.0), 2)
    raw = np.array([123.5, -7.25])
    assert statistics.scaler().apply(raw).tolist() == raw.tolist()
    statistics.merge([np.array([2.0, 0.0, 0.0, 2.0, 2.0])])  # two observations: (1, 1), (-1, -1)
    assert statistics.scaler().apply(np.array([0.5, 100.0])).tolist() == pytest.approx([0.5, 2.0])


def test_normalization_of_a_non_flat_observation_space_is_refused_at_start_up() -> None:
    """A Discrete observation (FrozenLake) cannot be normalized: one line naming the section."""
    config = small_config(
        environment={"id": "FrozenLake-v1"},
        observation_normalization={},
    )
    with pytest.raises(ConfigError, match="^observation_normalization: needs a one-dimensional"):
        Experiment(parse_config(config), handler=SequentialHandler())


def _run(config: dict[str, Any], handler: EvaluationHandler) -> Experiment:
    experiment = Experiment(parse_config(config), handler=handler)
    experiment.run()
    handler.close()
    return experiment


def _comparable(experiment: Experiment) -> dict[str, Any]:
    assert experiment.observation_statistics is not None
    return {
        "log": [
            {k: v for k, v in row.to_dict().items() if k != "wall_time"} for row in experiment.log
        ],
        "statistics": {
            k: np.asarray(v).tobytes() for k, v in experiment.observation_statistics.state().items()
        },
        "hall_of_fame": {k: v.tobytes() for k, v in experiment.hall_of_fame.state().items()},
        "center": experiment.optimizer.center().tobytes(),
    }


@pytest.fixture(scope="module")
def sequential_run() -> Experiment:
    return _run(NORMALIZED, SequentialHandler())


@pytest.fixture(scope="module")
def local_cluster() -> Iterator[DaskHandler]:
    handler = DaskHandler(workers=2)
    yield handler
    handler.close()


def test_normalization_changes_what_the_brain_sees(sequential_run: Experiment) -> None:
    """The same run without normalization gives another log: the scaler really is applied."""
    plain = {**NORMALIZED, "observation_normalization": None}
    other = _run(plain, SequentialHandler())
    assert sequential_run.log[0].fitness_mean == other.log[0].fitness_mean  # raw at first
    assert [r.fitness_mean for r in sequential_run.log] != [r.fitness_mean for r in other.log]
    statistics = sequential_run.observation_statistics
    assert statistics is not None and statistics.count == sum(
        row.env_steps for row in sequential_run.log
    )


@pytest.mark.parametrize("case", ["vectorized", "mp-forkserver-2", "mp-spawn-1-vectorized", "dask"])
def test_normalized_runs_are_identical_on_every_handler(
    case: str, sequential_run: Experiment, local_cluster: DaskHandler
) -> None:
    """Log (validation included), statistics, hall of fame with scalers and center are the same
    bit for bit whichever handler and worker count ran the episodes."""
    if case == "vectorized":
        handler: EvaluationHandler = VectorizedHandler()
    elif case == "dask":
        handler = local_cluster
    else:
        _, method, workers, *vectorized = case.split("-")
        handler = MultiprocessingHandler(
            workers=int(workers), start_method=method, vectorize=bool(vectorized)
        )
    experiment = Experiment(parse_config(NORMALIZED), handler=handler)
    experiment.run()
    if case != "dask":
        handler.close()
    assert _comparable(experiment) == _comparable(sequential_run)


def test_resume_of_a_normalized_run_is_identical(
    tmp_path: Path, sequential_run: Experiment
) -> None:
    """Statistics are saved in checkpoints: stopping after generation 2 and resuming ends with
    the uninterrupted run's log, statistics and center."""
    from neuro_evolution.run.checkpoint import install_checkpoints

    config = {**NORMALIZED, "checkpoint": {"every_generations": 2}}
    first = Experiment(parse_config(config), run_dir=tmp_path / "run", handler=SequentialHandler())
    install_checkpoints(first)
    first.step()
    first.step()
    first.close()
    first.handler.close()
    resumed = resume_experiment(tmp_path / "run", handler=SequentialHandler())
    assert resumed.generation == 2
    resumed.run()
    resumed.handler.close()
    assert _comparable(resumed) == _comparable(sequential_run)
    saved = load_npz(tmp_path / "run" / "hall_of_fame.npz")
    assert saved["observation_mean"].shape == (len(resumed.hall_of_fame), 4)


class TrainingScalerLog(SequentialHandler):
    """The sequential handler, remembering the scaler of every training batch it evaluates."""

    def __init__(self) -> None:
        super().__init__()
        self.training_scalers: list[ObservationScaler | None] = []

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        if not context.validation:
            self.training_scalers.append(context.observation_scaler)
        return super().batch_evaluate(genomes, seeds, context)


def _same(a: ObservationScaler | None, b: ObservationScaler | None) -> bool:
    assert a is not None and b is not None
    return bool(
        np.array_equal(a.mean, b.mean) and np.array_equal(a.scale, b.scale) and a.clip == b.clip
    )


@pytest.mark.parametrize("optimizer", ["PGPE", "MU_ES"])
def test_the_scaler_travels_with_the_genome(optimizer: str) -> None:
    """Each hall-of-fame entry holds the scaler its generation trained with (the identity for
    generation 0); after generation g a center candidate holds the scaler generation g + 1
    trains with, MU_ES's best parent the scaler of generation g (it was re-evaluated there), a
    hall-of-fame candidate its entry's."""
    config = {**NORMALIZED, "validation": None, "hall_of_fame_size": 30}
    if optimizer == "MU_ES":
        config["optimizer"] = {"type": "MU_ES", "mu": 3, "lambda_": 6}
    handler = TrainingScalerLog()
    experiment = Experiment(parse_config(config), handler=handler)
    candidates = []
    try:
        for _ in range(4):
            experiment.step()
            best_generation = int(experiment.hall_of_fame.generations[0])
            candidates.append((experiment.candidate(), best_generation))
    finally:
        experiment.close()
    used = handler.training_scalers
    assert len(used) == 4
    identity = used[0]
    assert identity is not None and identity.clip == np.inf
    assert np.array_equal(identity.mean, np.zeros(4)) and np.array_equal(identity.scale, np.ones(4))
    assert not any(_same(used[g], used[g + 1]) for g in range(3))  # the statistics move
    hall_of_fame = experiment.hall_of_fame
    assert sorted(set(hall_of_fame.generations.tolist())) == [0, 1, 2, 3]
    for rank, generation in enumerate(hall_of_fame.generations):
        assert _same(hall_of_fame.scaler(rank), used[generation]), (rank, generation)
    for g, (candidate, best_generation) in enumerate(candidates):
        if candidate.source == "center":
            expected = used[g + 1] if g + 1 < len(used) else experiment.observation_scaler()
        elif candidate.source == "best_parent":  # re-evaluated in generation g
            expected = used[g]
        else:
            expected = used[best_generation]
        assert _same(candidate.scaler, expected), g
