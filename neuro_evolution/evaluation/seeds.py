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


def brain_rng(base_seed: int, episode: int) -> np.random.Generator:
    """The generator handed to ``brain.reset`` for episode ``episode`` of an evaluation."""
    return np.random.default_rng([int(base_seed), episode, 1])
