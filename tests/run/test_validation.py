"""Held-out validation: seeds training never uses, the genome the run stands behind, the target
stop, and replay reproducing the validated score."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import QD_DESCRIPTORS, small_config

from neuro_evolution import replay, train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.episodes.validation import reached
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.optimizers import OPTIMIZERS
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.run.directory import load_candidate, read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.support.seeds import (
    TRAINING_SEED_LIMIT,
    episode_seed,
    generation_seeds,
    validation_seeds,
)


def test_validation_seeds_are_disjoint_from_every_training_seed() -> None:
    """Validation env seeds are >= 2**32, consecutive and depend on the run seed; training env
    seeds are 32-bit by construction."""
    seeds = validation_seeds(7, 10)
    assert seeds.min() >= TRAINING_SEED_LIMIT
    assert np.array_equal(np.diff(seeds), np.ones(9))
    assert not np.array_equal(validation_seeds(8, 10), seeds)
    for shared in (True, False):
        for base in generation_seeds(7, 3, 20, shared):
            assert all(episode_seed(int(base), k) < TRAINING_SEED_LIMIT for k in range(3))


def test_a_run_validates_on_the_validation_seeds_and_trains_on_training_seeds(
    tmp_path: Path,
) -> None:
    """Every reset of a run, recorded by the env: the validations reset exactly with
    validation_seeds (>= 2**32), in order; every other reset is a training episode seed
    (< 2**32) of that generation's genomes, or the start-up dry run's seed 0."""
    log_path = tmp_path / "seeds.txt"
    config = parse_config(
        small_config(
            environment={
                "entry_point": "examples.seed_log:SeedLoggingCartPole",
                "kwargs": {"log_path": str(log_path)},
            },
            number_generations=3,
            optimizer={"type": "CMA_ES", "population_size": 6},
            episode_runner={
                "number_fitness_runs": 2,
                "max_steps_per_run": 20,
                "fix_seed_for_generation": False,
            },
            validation={"every_generations": 2, "episodes": 4},
        )
    )
    experiment = Experiment(config, handler=SequentialHandler())
    experiment.run()
    resets = [int(line) for line in log_path.read_text().split()]
    held_out = [s for s in resets if s >= TRAINING_SEED_LIMIT]
    expected_validation = [int(s) for s in validation_seeds(config.random_seed, 4)] * 2
    assert held_out == expected_validation  # after generations 2 and 3
    expected_training = Counter(
        episode_seed(int(base), k)
        for g in range(3)
        for base in generation_seeds(config.random_seed, g, 6, False)
        for k in range(2)
    )
    training = Counter(s for s in resets if s < TRAINING_SEED_LIMIT)
    assert training - expected_training == Counter({0: training[0]})  # the dry runs' seed 0
    assert expected_training - training == Counter()


def _write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize(
    ("optimizer", "normalize"),
    [
        ({"type": "CMA_ES", "population_size": 8}, True),
        ({"type": "MU_ES", "mu": 4, "lambda_": 8}, False),
        ({"type": "NSGA2", "population_size": 4, "offspring_size": 8}, False),
    ],
)
def test_replay_validation_reproduces_the_logged_score(
    tmp_path: Path, capsys: pytest.CaptureFixture, optimizer: dict, normalize: bool
) -> None:
    """`replay --validation` on the candidate gives exactly the last logged validation mean,
    for a center (CMA_ES, with observation normalization), a best parent (MU_ES) and a
    hall-of-fame best (NSGA2 without objectives)."""
    config = small_config(
        optimizer=optimizer,
        number_generations=4,
        validation={"every_generations": 3, "episodes": 4},
        observation_normalization={} if normalize else None,
    )
    run_dir = tmp_path / "run"
    assert train.main([str(_write(tmp_path, config)), "--out", str(run_dir), "--quiet"]) == 0
    log = read_log(run_dir / "log.csv")
    validated = [row["generation"] for row in log if row["validation_mean"] is not None]
    assert validated == [2, 3]  # after generation 3 and after the last one
    capsys.readouterr()
    returns = replay.replay(run_dir, validation=True)
    assert np.mean(returns) == log[-1]["validation_mean"]
    assert min(returns) == log[-1]["validation_min"]
    candidate, _ = load_candidate(run_dir / "candidate.npz")
    sources = {"CMA_ES": "center", "MU_ES": "best_parent", "NSGA2": "hall_of_fame"}
    assert candidate.source == sources[optimizer["type"]]
    assert candidate.generation == 4 and candidate.score is not None
    assert candidate.score.mean == log[-1]["validation_mean"]
    assert (candidate.scaler is not None) == normalize
    # --seed FIRST --episodes M runs the same episodes as --validation.
    first = int(validation_seeds(config["random_seed"], 4)[0])
    assert replay.replay(run_dir, episodes=4, seed=first) == returns


# Per registered optimizer: a small config and what its candidate is ("center": the
# distribution's mean, attribute ``mean``; "hall_of_fame": the best genome evaluated so far;
# "generation_best": the best genome of the latest generation (a population method's);
# "best_elite": a QD optimizer's best archive elite, which is also the hall of fame's best).
# A newly registered optimizer fails the registry check below until it gets a row.
CANDIDATE_CASES: dict[str, tuple[dict, str]] = {
    "CMA_ES": ({"population_size": 6}, "center"),
    "SEP_CMA_ES": ({"population_size": 6}, "center"),
    "PGPE": ({"population_size": 6}, "center"),
    "OPENAI_ES": ({"population_size": 6}, "center"),
    "SNES": ({"population_size": 6}, "center"),
    "XNES": ({"population_size": 6}, "center"),
    "CR_FM_NES": ({"population_size": 6}, "center"),
    "MA_ES": ({"population_size": 6}, "center"),
    "LM_MA_ES": ({"population_size": 6}, "center"),
    "GA": ({"population_size": 6, "truncation": 3}, "generation_best"),
    "DE": ({"population_size": 6}, "generation_best"),
    "PSO": ({"population_size": 6}, "generation_best"),
    "ARS": ({"population_size": 6, "top_b": 2}, "center"),
    "CEM": ({"population_size": 6, "elite_fraction": 0.5}, "center"),
    "COSYNE": ({"population_size": 8}, "generation_best"),
    "MU_ES": ({"mu": 4, "lambda_": 8}, "best_parent"),
    "NSGA2": ({"population_size": 4, "offspring_size": 8}, "hall_of_fame"),
    "MAP_ELITES": ({"batch_size": 6, "descriptors": QD_DESCRIPTORS}, "best_elite"),
    "CMA_ME": ({"emitters": 2, "batch_size": 4, "descriptors": QD_DESCRIPTORS}, "best_elite"),
}


def spy_on_tells(optimizer: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """A list that receives (asked genomes, told fitness) at each of ``optimizer``'s tells."""
    told: list[tuple[np.ndarray, np.ndarray]] = []
    ask, tell = optimizer.ask, optimizer.tell
    asked: list[np.ndarray] = []

    def spy_ask() -> np.ndarray:
        asked.append(ask())
        return asked[-1].copy()

    def spy_tell(evaluations: Evaluations) -> None:
        told.append((asked[-1], np.asarray(evaluations.fitness, dtype=np.float64).copy()))
        tell(evaluations)

    optimizer.ask, optimizer.tell = spy_ask, spy_tell
    return told


def test_every_builtin_optimizer_says_what_its_candidate_is() -> None:
    """(A user's optimizer registered by another test of the session is not a built-in.)"""
    assert sorted(CANDIDATE_CASES) == sorted(OPTIMIZERS.builtins)


@pytest.mark.parametrize("name", sorted(CANDIDATE_CASES))
def test_the_candidate_is_the_center_or_the_hall_of_fame_best(name: str) -> None:
    """After each generation the candidate is the optimizer's distribution mean (a genome no
    sample equals), for GA, DE, PSO and COSYNE the best genome of that generation, for MU_ES the
    fittest parent (with re-evaluated parents and best selection: the generation's best), or
    for NSGA2 without objectives the highest-fitness genome the hall of fame holds."""
    settings, source = CANDIDATE_CASES[name]
    config = parse_config(
        small_config(optimizer={"type": name, **settings}, number_generations=2, validation=None)
    )
    experiment = Experiment(config, handler=SequentialHandler())
    generation_asked = spy_on_tells(experiment.optimizer)
    try:
        for generation in (1, 2):
            experiment.step()
            candidate = experiment.candidate()
            assert candidate.source == source and candidate.generation == generation
            hall_of_fame = experiment.hall_of_fame
            if source in ("generation_best", "best_parent"):
                asked, fitness = generation_asked[-1]
                np.testing.assert_array_equal(candidate.genome, asked[int(np.argmax(fitness))])
            elif source == "center":
                optimizer: Any = experiment.optimizer
                np.testing.assert_array_equal(candidate.genome, optimizer.mean)
                assert not any(np.array_equal(candidate.genome, g) for g in hall_of_fame.genomes)
            else:
                if source == "best_elite":
                    archive = experiment.optimizer.archive  # type: ignore[attr-defined]
                    cell = archive.best_cell()
                    np.testing.assert_array_equal(candidate.genome, archive.genomes[cell])
                best = int(np.argmax(hall_of_fame.fitness))
                assert hall_of_fame.fitness[best] == hall_of_fame.best_fitness
                np.testing.assert_array_equal(candidate.genome, hall_of_fame.genomes[best])
    finally:
        experiment.close()


def test_validation_is_identical_on_the_vectorized_handler() -> None:
    """Validation episodes (seeds used as-is) give the same numbers in lockstep."""
    config = parse_config(
        small_config(number_generations=2, validation={"every_generations": 1, "episodes": 5})
    )
    logs = []
    for handler in (SequentialHandler(), VectorizedHandler()):
        experiment = Experiment(config, handler=handler)
        experiment.run()
        logs.append([(r.validation_mean, r.validation_min) for r in experiment.log])
    assert logs[0] == logs[1] and logs[0][0][0] is not None


def test_reaching_the_target_stops_the_run_and_reports_time_and_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """With validation.target set, the run stops at the first validation that reaches it; the
    summary names the validated score and the time and env steps to the target."""
    config = small_config(
        number_generations=50,
        optimizer={"type": "CMA_ES", "population_size": 8, "sigma": 1.0},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 100},
        validation={"every_generations": 1, "episodes": 3, "target": 60},
    )
    run_dir = tmp_path / "run"
    assert train.main([str(_write(tmp_path, config)), "--out", str(run_dir), "--quiet"]) == 0
    out = capsys.readouterr().out
    log = read_log(run_dir / "log.csv")
    assert len(log) < 50
    assert log[-1]["validation_mean"] >= 60
    assert all(row["validation_mean"] < 60 for row in log[:-1])
    assert f"after generation {len(log)}" in out and "solved: validation mean" in out
    assert f"{log[-1]['env_steps_total']} env steps" in out
    assert "best fitness" not in out
    # Resuming a solved run trains no more unless --generations asks for more.
    assert train.main(["--resume", str(run_dir), "--quiet"]) == 0
    assert f"stopped after generation {len(log)} because" in capsys.readouterr().out
    assert len(read_log(run_dir / "log.csv")) == len(log)


def test_a_validation_mean_exactly_at_the_target_solves_the_run() -> None:
    """mean == target counts as solved and stops the run; the next float above it does not."""
    settings = {
        "number_generations": 3,
        "optimizer": {"type": "CMA_ES", "population_size": 6},
        "validation": {"every_generations": 1, "episodes": 3},
    }
    first = Experiment(parse_config(small_config(**settings)), handler=SequentialHandler())
    first.run()
    mean = first.log[0].validation_mean
    assert mean is not None and first.solved is None
    for target, solved in ((mean, True), (float(np.nextafter(mean, np.inf)), False)):
        validation = {**settings["validation"], "target": target}
        config = parse_config(small_config(**{**settings, "validation": validation}))
        experiment = Experiment(config, handler=SequentialHandler())
        try:
            experiment.step()
            assert experiment.log[0].validation_mean == mean
            assert (experiment.solved is experiment.log[0]) == solved
            assert experiment.done == solved
        finally:
            experiment.close()


def test_without_validation_the_summary_says_the_training_maximum_is_no_result(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """validation: null -> no validation columns and an explicit warning in the summary."""
    config = small_config(validation=None)
    run_dir = tmp_path / "run"
    assert train.main([str(_write(tmp_path, config)), "--out", str(run_dir), "--quiet"]) == 0
    assert all(row["validation_mean"] is None for row in read_log(run_dir / "log.csv"))
    assert "optimistic draw, not a result" in capsys.readouterr().out
    candidate, _ = load_candidate(run_dir / "candidate.npz")
    assert candidate.score is None and candidate.generation == 3


def test_no_mean_no_target_or_a_nan_mean_never_reaches() -> None:
    assert reached(1.0, 1.0) and reached(2.0, 1.0) and not reached(0.5, 1.0)
    assert not reached(None, 1.0) and not reached(1.0, None) and not reached(float("nan"), 0.0)
