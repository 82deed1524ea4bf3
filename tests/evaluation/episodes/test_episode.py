"""EpisodeRunner semantics: seeds, averaging, step limit and penalty, termination vs truncation."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers import small_config

from neuro_evolution.brains.base import make_template
from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import (
    EpisodeOutcome,
    EpisodeRunnerConfig,
    RunnerSpec,
)
from neuro_evolution.run.experiment import build_template
from neuro_evolution.support.seeds import brain_rng, episode_seed, generation_seeds


@pytest.fixture(scope="module")
def template():
    return build_template(parse_config(small_config()))


def spec(**runner) -> RunnerSpec:
    return RunnerSpec(
        environment=EnvironmentConfig(id="CartPole-v1"),
        episode_runner=EpisodeRunnerConfig(**runner),
    )


def reference_fitness(template, genome, seed, runs, limit=None, penalty=0.0):
    """Plain re-implementation of the documented semantics."""
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    brain = template.build(genome)
    total = 0.0
    for k in range(runs):
        observation, _ = env.reset(seed=episode_seed(seed, k))
        brain.reset(brain_rng(seed, k))
        episode_return, steps = 0.0, 0
        while True:
            observation, reward, terminated, truncated, _ = env.step(brain.step(observation))
            episode_return += reward
            steps += 1
            if terminated or truncated:
                break
            if limit and steps >= limit:
                episode_return -= penalty
                break
        total += episode_return
    return total / runs


def test_fitness_is_the_mean_return_over_seeded_episodes(template):
    """Fitness = mean return of number_fitness_runs episodes reset with episode_seed(seed, k)."""
    runner = spec(number_fitness_runs=3).make()
    rng = np.random.default_rng(0)
    for _ in range(5):
        genome = rng.normal(size=template.genome_size)
        seed = int(rng.integers(2**32))
        result = runner.run(template.build(genome), seed)
        assert result.fitness == reference_fitness(template, genome, seed, 3)
        assert result.terminated + result.truncated == 3


def test_step_limit_cuts_episodes_and_subtracts_the_penalty(template):
    """An episode cut by max_steps_per_run loses max_steps_penalty and counts as truncated."""
    runner = spec(number_fitness_runs=2, max_steps_per_run=5, max_steps_penalty=100.0).make()
    genome = np.zeros(template.genome_size)
    result = runner.run(template.build(genome), 123)
    assert result.steps == 10
    assert result.truncated == 2 and result.terminated == 0
    assert result.fitness == 5.0 - 100.0
    assert result.fitness == reference_fitness(template, genome, 123, 2, limit=5, penalty=100.0)


def test_same_seed_same_result_whatever_ran_before(template):
    """An evaluation depends only on (template, genome, seed), not on the runner's history."""
    runner = spec(number_fitness_runs=2).make()
    rng = np.random.default_rng(1)
    genomes = rng.normal(size=(4, template.genome_size))
    first = [runner.run(template.build(g), 99).fitness for g in genomes]
    again = [runner.run(template.build(g), 99).fitness for g in genomes[::-1]][::-1]
    assert first == again


def test_generation_seeds_are_a_pure_function_of_run_generation_and_index():
    """Seeds depend on (run seed, generation, index) or are shared by the generation."""
    a = generation_seeds(5, 2, 6, shared=False)
    assert np.array_equal(a, generation_seeds(5, 2, 6, shared=False))
    assert np.array_equal(a[:3], generation_seeds(5, 2, 3, shared=False))
    assert len(set(a.tolist())) == 6
    assert not np.array_equal(a, generation_seeds(5, 3, 6, shared=False))
    shared = generation_seeds(5, 2, 6, shared=True)
    assert len(set(shared.tolist())) == 1
    assert not np.array_equal(shared, generation_seeds(6, 2, 6, shared=True))


def test_dry_run_passes_for_a_matching_brain(template):
    """The start-up dry run does one reset, one brain step and one env step; a brain whose
    actions do not fit the env's action space is refused with both named."""
    runner = spec().make()
    try:
        runner.dry_run(template)
        assert runner.env.get_wrapper_attr("_elapsed_steps") == 1  # reset, then one env step
    finally:
        runner.close()
    runner = spec().make()
    box_actions = gym.spaces.Box(-1.0, 1.0, (2,))  # CartPole takes Discrete(2)
    mismatched = make_template(
        template.config, runner.env.observation_space, box_actions, np.random.default_rng(0)
    )
    try:
        with pytest.raises(ValueError, match=r"not in the action space Discrete\(2\) of CartPole"):
            runner.dry_run(mismatched)
    finally:
        runner.close()


def test_episode_rules_score_scalars_and_batches_alike() -> None:
    """A cut episode loses the penalty and counts as truncated, terminated wins over truncated,
    fitness is the mean return; one batch array gives what each individual's scalars give."""
    rules = EpisodeRunnerConfig(number_fitness_runs=2, max_steps_per_run=10, max_steps_penalty=5.0)
    individuals = [  # per individual: two episodes of (return, steps, terminated, truncated, cut)
        [EpisodeOutcome(10.0, 10, False, False, True), EpisodeOutcome(4.0, 3, True, True, False)],
        [EpisodeOutcome(7.0, 8, False, True, False), EpisodeOutcome(1.0, 2, True, False, False)],
    ]
    assert rules.score(individuals[0], training=True) == ((5.0 + 4.0) / 2, 13, 1, 1)
    assert rules.score(individuals[1], training=True) == ((7.0 + 1.0) / 2, 10, 1, 1)
    batch = [
        EpisodeOutcome(*(np.array([ind[k][field] for ind in individuals]) for field in range(5)))
        for k in range(2)
    ]
    fitness, steps, terminated, truncated = rules.score(batch, training=True)
    for i, individual in enumerate(individuals):
        assert (fitness[i], steps[i], terminated[i], truncated[i]) == rules.score(
            individual, training=True
        )
    assert rules.reached_limit(10) and not rules.reached_limit(9)
    assert not EpisodeRunnerConfig(max_steps_per_run=0).reached_limit(10**9)
