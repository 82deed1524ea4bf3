"""The seeding module: every stream is pinned, and validation seeds stay apart from training."""

from __future__ import annotations

import numpy as np
import pytest

from neuro_evolution.support.seeds import (
    NUMPY_LEGACY_PURPOSE,
    PYTHON_RANDOM_PURPOSE,
    brain_rng,
    episode_seed,
    generation_seeds,
    optimizer_generator_seed,
    optimizer_seed,
    run_stream_seed,
    template_rng,
    validation_seeds,
)


def test_every_training_stream_keeps_the_numbers_existing_runs_were_made_with() -> None:
    """A change to any derivation changes existing runs: it must come with a new checkpoint
    format version, so these numbers (run seed 1) may only change together with it."""
    assert run_stream_seed(1, 1) == 1189033389
    assert template_rng(1).integers(1 << 30) == np.random.default_rng(1189033389).integers(1 << 30)
    assert optimizer_seed(1) == 1596810411
    assert (
        optimizer_generator_seed(1596810411, PYTHON_RANDOM_PURPOSE)
        == 184527025323371815780099460637497850435
    )
    assert (
        optimizer_generator_seed(1596810411, NUMPY_LEGACY_PURPOSE)
        == 65132292059731158568382645562452755018
    )
    assert generation_seeds(1, 3, 3, shared=False).tolist() == [4010755824, 2234450039, 1536272198]
    assert generation_seeds(1, 3, 2, shared=True).tolist() == [4010755824, 4010755824]
    assert episode_seed(7, 2) == 1009178997
    assert brain_rng(7, 2).integers(1 << 30) == 218694985


def test_optimizer_generator_seed_refuses_a_negative_seed() -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        optimizer_generator_seed(-1, PYTHON_RANDOM_PURPOSE)


def test_validation_seeds_do_not_depend_on_how_many_are_asked_for() -> None:
    assert validation_seeds(5, 3).tolist() == validation_seeds(5, 10)[:3].tolist()
    assert validation_seeds(5, 3).min() >= 2**32
    assert validation_seeds(5, 3).tolist() != validation_seeds(6, 3).tolist()


@pytest.mark.parametrize("run_seed", [0, 1, 12345])
def test_validation_episodes_never_reset_with_a_training_episode_seed(run_seed: int) -> None:
    """Over 30 generations of 100 individuals x 5 episodes (shared and individual base seeds),
    no validation env reset seed is one that training used (they are >= 2**32)."""
    generations, population, episodes = 30, 100, 5
    train_bases: set[int] = set()
    for generation in range(generations):
        train_bases.update(generation_seeds(run_seed, generation, population, shared=False))
        train_bases.update(generation_seeds(run_seed, generation, 1, shared=True))
    train_resets = {episode_seed(b, k) for b in train_bases for k in range(episodes)}
    resets = [int(s) for s in validation_seeds(run_seed, 100)]
    assert len(set(resets)) == len(resets)
    assert not set(resets) & train_resets
    assert min(resets) >= 2**32 > max(train_resets)
