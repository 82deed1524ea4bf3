"""Novelty search: distances, archive, sampling caps, combination with fitness."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import novelty_run, small_config

import neuro_evolution.optimizers.novelty as novelty_module
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig, RunnerSpec
from neuro_evolution.measures.recorder import EpisodeShapes
from neuro_evolution.optimizers.novelty import (
    NoveltyArchive,
    NoveltyConfig,
    euclidean_distances,
    ncd_distances,
)
from neuro_evolution.optimizers.shaping import unit_ranks
from neuro_evolution.run.experiment import Experiment, build_template


def test_euclidean_distances_in_blocks_are_the_same_bits(monkeypatch) -> None:
    """Blocks bound the memory of long behaviours (a 1-row block here) without changing a bit
    of any distance, so novelty ranks stay what they were."""
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(9, 301)), rng.normal(size=(23, 301))
    whole = euclidean_distances(a, b)
    for block in (301, 3 * 301, 1):
        monkeypatch.setattr(novelty_module, "DIFFERENCE_BLOCK", block)
        assert np.array_equal(euclidean_distances(a, b), whole)
    assert euclidean_distances(a[:0], b).shape == (0, 23)


def test_euclidean_distances_match_a_plain_loop():
    """Pairwise distances equal the textbook formula."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 6)), rng.normal(size=(3, 6))
    expected = [[np.sqrt(sum((x - y) ** 2)) for y in b] for x in a]
    assert np.allclose(euclidean_distances(a, b), expected, rtol=0, atol=1e-12)


def test_ncd_is_small_for_identical_and_larger_for_different_behaviours():
    """NCD(x, x) is near 0, NCD of unrelated noise is near 1, and it is symmetric-ish."""
    rng = np.random.default_rng(1)
    x = np.repeat(rng.normal(size=20), 10)
    y = rng.normal(size=200)
    distances = ncd_distances(np.stack([x, y]), np.stack([x, y]))
    assert distances[0, 0] < 0.2
    assert distances[0, 1] > 0.5
    assert abs(distances[0, 1] - distances[1, 0]) < 0.1


def test_recorder_samples_every_interval_and_caps_the_length():
    """Every N-th step is sampled from each episode's start, at most max_length samples."""
    config = NoveltyConfig(behavior_source="action", behavioral_interval=3, behavioral_max_length=5)
    shapes = EpisodeShapes(observation_size=1, action_size=1)
    recorder = config.behavior().scalar(None, shapes)
    recorder.start_episode()
    for step in range(7):  # samples steps 0, 3, 6
        recorder.act(None, step, None)
    recorder.start_episode()
    for step in range(100, 110):  # samples 100, 103 then the cap is reached
        recorder.act(None, step, None)
    assert recorder.value().tolist() == [0, 3, 6, 100, 103]
    short = config.behavior().scalar(None, shapes)
    short.start_episode()
    short.act(None, 7.0, None)
    assert short.value().tolist() == [7.0, 0, 0, 0, 0]  # zero-padded to the cap


def test_novelty_is_mean_distance_to_k_nearest_in_archive_and_population():
    """Novelty uses k nearest among the others and the archive, never the individual itself."""
    archive = NoveltyArchive(NoveltyConfig(novelty_nearest_k=2))
    population = np.array([[0.0], [1.0], [10.0]])
    assert archive.novelty(population).tolist() == [5.5, 5.0, 9.5]
    archive.load_state({"behaviors": np.array([[10.5]])})
    assert archive.novelty(population).tolist() == [5.5, 5.0, 4.75]  # (0.5 + 9) / 2


def test_archive_adds_the_most_novel_and_drops_the_oldest():
    """recorded_behaviors_per_generation most novel are kept, up to max_recorded_behaviors."""
    config = NoveltyConfig(recorded_behaviors_per_generation=2, max_recorded_behaviors=3)
    archive = NoveltyArchive(config)
    archive.update(np.array([[1.0], [2.0], [3.0]]), np.array([0.1, 0.9, 0.5]))
    assert archive.behaviors.ravel().tolist() == [2.0, 3.0]
    archive.update(np.array([[4.0], [5.0]]), np.array([0.3, 0.7]))
    assert archive.behaviors.ravel().tolist() == [3.0, 5.0, 4.0]


def reference_unit_ranks(values: np.ndarray) -> np.ndarray:
    """Novelty's ranks as they were written before they moved to optimizers/shaping.py."""
    values = np.asarray(values, dtype=np.float64)
    if values.size <= 1:
        return np.full(values.size, 0.5)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(values.size, dtype=np.float64)
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks / (values.size - 1)


@pytest.mark.parametrize("size", [0, 1, 2, 7, 40, 101])
def test_unit_ranks_give_novelty_the_numbers_it_always_had(size: int) -> None:
    """Bit for bit what novelty computed before it shared the ranking of fitness shaping,
    ties (values drawn from a few levels) included."""
    rng = np.random.default_rng(size)
    for values in (rng.normal(size=size), rng.integers(0, 4, size).astype(float)):
        assert unit_ranks(values).tobytes() == reference_unit_ranks(values).tobytes()


def test_combination_of_ranks():
    """weight 0: fitness ranks only; weight 1: novelty ranks only; ties share ranks."""
    assert unit_ranks(np.array([3.0, 1.0, 2.0])).tolist() == [1.0, 0.0, 0.5]
    assert unit_ranks(np.array([1.0, 1.0, 2.0])).tolist() == [0.25, 0.25, 1.0]
    behaviours = np.array([[0.0], [0.1], [5.0]])
    fitness = np.array([3.0, 2.0, 1.0])
    pure_fitness = NoveltyArchive(NoveltyConfig(novelty_weight=0.0, novelty_nearest_k=1))
    assert pure_fitness.selection_fitness(fitness, behaviours).tolist() == [1.0, 0.5, 0.0]
    pure_novelty = NoveltyArchive(NoveltyConfig(novelty_weight=1.0, novelty_nearest_k=1))
    assert pure_novelty.selection_fitness(fitness, behaviours).argmax() == 2


def test_runner_records_state_behaviour_of_mountain_car():
    """behavior_source=state samples env.unwrapped.state, a fixed-size vector per evaluation."""
    novelty = NoveltyConfig(
        behavior_source="state", behavioral_interval=10, behavioral_max_length=8
    )
    spec = RunnerSpec(
        environment=EnvironmentConfig(id="MountainCar-v0"),
        episode_runner=EpisodeRunnerConfig(max_steps_per_run=50, number_fitness_runs=2),
        novelty=novelty,
    )
    config = parse_config(small_config(environment={"id": "MountainCar-v0"}))
    template = build_template(config)
    result = spec.make().run(template.build(np.zeros(template.genome_size)), 5)
    assert result.behavior.shape == (8 * 2,)
    positions = result.behavior.reshape(8, 2)[:, 0]
    assert np.all((positions > -1.3) & (positions < 0.7))  # MountainCar positions


def test_novelty_changes_selection_but_not_the_logged_raw_fitness():
    """With novelty the hall of fame and log hold raw fitness; the archive grows."""
    novelty = {"novelty_weight": 1.0, "behavioral_max_length": 20, "novelty_nearest_k": 3}
    plain = Experiment(parse_config(small_config(number_generations=2)))
    with_novelty = Experiment(parse_config(small_config(number_generations=2, novelty=novelty)))
    plain.run()
    with_novelty.run()
    assert plain.log[0].fitness_mean == with_novelty.log[0].fitness_mean  # same first gen
    assert with_novelty.novelty is not None and len(with_novelty.novelty.archive.behaviors) == 10
    best = with_novelty.hall_of_fame.fitness[0]
    assert best == max(row.fitness_max for row in with_novelty.log)


@pytest.mark.parametrize(
    ("novelty", "field"),
    [
        ({"novelty_weight": 1.5}, "novelty.novelty_weight"),
        ({"distance": "manhattan"}, "novelty.distance"),
        ({"behavioral_interval": 0}, "novelty.behavioral_interval"),
        ({"novelty_nearest_k": 0}, "novelty.novelty_nearest_k"),
        ({"behavior_source": "reward"}, "novelty.behavior_source"),
    ],
)
def test_bad_novelty_values_are_refused_at_start_up(novelty, field):
    """Each bad novelty value is a ConfigError naming the field."""
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        parse_config(small_config(novelty=novelty))


def test_novelty_runs_identically_with_every_local_handler():
    """Behaviours travel back from workers: mp and vectorized give the sequential run's log and
    archive exactly (Dask uses the same worker code; its identity is held in the handler tests)."""
    from neuro_evolution.evaluation.pools import make_handler

    novelty = {"novelty_weight": 0.7, "behavioral_max_length": 15, "behavior_source": "action"}
    data = small_config(number_generations=2, novelty=novelty)

    expected_log, expected_archive = novelty_run(data, make_handler("sequential"))
    for handler in (make_handler("mp", workers=2), make_handler("vectorized")):
        log, archive = novelty_run(data, handler)
        assert log == expected_log
        assert np.array_equal(archive, expected_archive)


def plain_novelty(population: np.ndarray, archive: np.ndarray, k: int) -> list[float]:
    """Mean euclidean distance to the k nearest of (the others + the archive), with loops."""
    scores = []
    for i, x in enumerate(population):
        others = [y for j, y in enumerate(population) if j != i] + list(archive)
        distances = sorted(float(np.sqrt(np.sum((x - y) ** 2))) for y in others)
        scores.append(sum(distances[:k]) / k)
    return scores


def test_with_novelty_weight_1_the_optimizer_is_told_the_novelty_ranks():
    """What the optimizer selects on is the rank of each genome's novelty (scaled to [0, 1]),
    not its fitness: ignoring novelty in selection while the archive updates is caught."""
    k = 3
    data = small_config(
        number_generations=3,
        novelty={"novelty_weight": 1.0, "novelty_nearest_k": k, "behavioral_max_length": 20},
    )
    experiment = Experiment(parse_config(data))
    told: list[np.ndarray] = []
    evaluated: list[list] = []
    tell, evaluate = experiment.optimizer.tell, experiment.handler.batch_evaluate

    def spy_tell(evaluations):
        told.append(np.array(evaluations.fitness))
        tell(evaluations)

    def spy_evaluate(genomes, seeds, context):
        results = evaluate(genomes, seeds, context)
        if not context.validation:
            evaluated.append(results)
        return results

    experiment.optimizer.tell, experiment.handler.batch_evaluate = spy_tell, spy_evaluate
    for _ in range(3):
        archive = experiment.novelty.archive.behaviors.copy()
        experiment.step()
        behaviors = np.stack([r.behavior for r in evaluated[-1]])
        fitness = np.array([r.fitness for r in evaluated[-1]])
        expected = unit_ranks(np.array(plain_novelty(behaviors, archive, k)))
        assert np.allclose(told[-1], expected, rtol=0, atol=1e-12)
        assert not np.allclose(told[-1], unit_ranks(fitness))  # novelty differs from fitness
    experiment.close()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_novelty_search_escapes_a_deceptive_task_where_fitness_gets_stuck(seed):
    """On tests/examples/deceptive_track.py fitness leads left to a wall (0.5) while the goal
    (10) lies right: in 30 generations pure fitness stays at 0.5 and novelty (weight 1, the
    trajectory as behaviour) reaches the goal. Seeded, so the outcome is fixed."""
    from examples.deceptive_track import ENV_ID, GOAL_REWARD, WALL, register

    register()
    data = small_config(
        environment={"id": ENV_ID},
        random_seed=seed,
        number_generations=30,
        optimizer={"type": "MU_ES", "mu": 5, "lambda_": 20, "initial_gene_range": [-0.2, 0.2]},
        brain={"type": "FFNN", "hidden_layers": [2]},
        episode_runner={"number_fitness_runs": 1},
    )
    fitness_only = Experiment(parse_config(data))
    fitness_only.run()
    novelty = {"novelty_weight": 1.0, "behavioral_interval": 5, "behavioral_max_length": 4}
    with_novelty = Experiment(
        parse_config({**data, "novelty": {**novelty, "novelty_nearest_k": 5}})
    )
    with_novelty.run()
    assert fitness_only.hall_of_fame.best_fitness == -WALL  # stuck at the wall
    assert with_novelty.hall_of_fame.best_fitness == GOAL_REWARD
