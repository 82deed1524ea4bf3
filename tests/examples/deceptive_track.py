"""A deceptive one-dimensional task for novelty search tests: fitness points the wrong way.

A point starts at x = 0 and moves by ``SPEED * action`` (action in [-1, 1]) for ``STEPS`` steps;
it observes x. A wall stops it at x = ``WALL`` on the left. The only reward comes at the end:
``-x`` (so going left to the wall is the best a fitness gradient finds, 0.5), unless x reached
``GOAL`` on the right, which scores ``GOAL_REWARD``. Reaching the goal needs a mean action of at
least GOAL / (SPEED * STEPS) = 0.8 to the right, through ever worse fitness on the way.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

ENV_ID = "DeceptiveTrack-v0"
SPEED, STEPS, WALL, GOAL, GOAL_REWARD = 0.1, 20, -0.5, 1.6, 10.0


class DeceptiveTrack(gym.Env):
    """The deceptive track (see the module docstring); deterministic, so seeds do not matter."""

    observation_space = gym.spaces.Box(-1.0, 2.5, (1,), dtype=np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), dtype=np.float64)

    def __init__(self) -> None:
        self.x = 0.0
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.x, self.steps = 0.0, 0
        return np.array([self.x]), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        move = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1.0, 1.0))
        self.x = max(WALL, self.x + SPEED * move)
        self.steps += 1
        done = self.steps >= STEPS
        reward = 0.0
        if done:
            reward = GOAL_REWARD if self.x >= GOAL else -self.x
        return np.array([self.x]), reward, done, False, {}


def register() -> None:
    """Make ``ENV_ID`` known to ``gymnasium.make`` (idempotent)."""
    if ENV_ID not in gym.registry:
        gym.register(ENV_ID, entry_point=DeceptiveTrack)
