"""Episode seeds: a pure function of (run seed, generation, individual index), never of workers.

``generation_seeds`` gives one base seed per individual (one shared base seed for the whole
generation when ``fix_seed_for_generation``). Episode k of an evaluation with base seed s resets
the env with ``episode_seed(s, k)`` and drives the brain's noise with ``brain_rng(s, k)``.
"""

from __future__ import annotations

import numpy as np


def generation_seeds(run_seed: int, generation: int, count: int, shared: bool) -> np.ndarray:
    """(count,) uint32 base seeds for the individuals of one generation."""
    if shared:
        seed = np.random.SeedSequence([run_seed, generation]).generate_state(1)[0]
        return np.full(count, seed, dtype=np.uint32)
    return np.array(
        [
            np.random.SeedSequence([run_seed, generation, i]).generate_state(1)[0]
            for i in range(count)
        ],
        dtype=np.uint32,
    )


def episode_seed(base_seed: int, episode: int) -> int:
    """The ``env.reset(seed=...)`` value of episode ``episode`` of an evaluation."""
    return int(np.random.SeedSequence([int(base_seed), episode]).generate_state(1)[0])


def _brain_entropy(base_seed: int, episode: int) -> list[int]:
    return [int(base_seed), episode, 1]


def brain_rng(base_seed: int, episode: int) -> np.random.Generator:
    """The generator handed to ``brain.reset`` for episode ``episode`` of an evaluation."""
    return np.random.default_rng(_brain_entropy(base_seed, episode))


def episode_seeds(base_seeds: np.ndarray, episode: int) -> list[int]:
    """``episode_seed(s, episode)`` for every base seed, derived once per distinct seed."""
    cache: dict[int, int] = {}
    for seed in map(int, base_seeds):
        if seed not in cache:
            cache[seed] = episode_seed(seed, episode)
    return [cache[seed] for seed in map(int, base_seeds)]


def brain_rngs(base_seeds: np.ndarray, episode: int) -> list[np.random.Generator]:
    """``brain_rng(s, episode)`` for every base seed, made twice as fast: ``default_rng(entropy)``
    is ``Generator(PCG64(SeedSequence(entropy)))``, and the SeedSequence is made once per distinct
    seed (a test holds this equal to :func:`brain_rng`)."""
    sequences: dict[int, np.random.SeedSequence] = {}
    for seed in map(int, base_seeds):
        if seed not in sequences:
            sequences[seed] = np.random.SeedSequence(_brain_entropy(seed, episode))
    return [np.random.Generator(np.random.PCG64(sequences[int(seed)])) for seed in base_seeds]
