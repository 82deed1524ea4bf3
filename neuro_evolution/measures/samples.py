"""Joining an individual's behaviour samples over its episodes, in order: what novelty's
behaviour recorder does on the host for every loop (scalar, lockstep, JAX)."""

from __future__ import annotations

import numpy as np


def join_episode_samples(samples: np.ndarray, steps: np.ndarray, interval: int) -> np.ndarray:
    """The behaviours of P individuals from each episode's own samples, as
    :class:`BehaviorSamples` records them over an evaluation's episodes in order.

    ``samples`` (R, P, S, B): episode k's samples from its first step, every ``interval`` steps,
    at most S (the cap) each; ``steps`` (R, P): the episodes' lengths. Episode k adds its
    ceil(steps / interval) samples after the earlier episodes' until S are taken; the rest is
    zero. Returns (P, S·B) float64.
    """
    runs, count, cap, width = samples.shape
    joined = np.zeros((count, cap, width))
    filled = np.zeros(count, dtype=np.int64)
    for k in range(runs):
        taken = np.minimum(-(-steps[k].astype(np.int64) // interval), cap - filled)
        for i in np.flatnonzero(taken):
            joined[i, filled[i] : filled[i] + taken[i]] = samples[k, i, : taken[i]]
        filled += taken
    return joined.reshape(count, cap * width)
