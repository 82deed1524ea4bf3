"""A small custom Gymnasium env, as a researcher's own package ships one (docs/environments.md).

A point on a line moves towards a target drawn at reset; the reward is minus the distance left.
Importing this module registers it as ``LineTarget-v0``, so a config can name it three ways:
``"imports": ["examples.line_target"]`` with ``"id": "LineTarget-v0"``; ``"id":
"examples.line_target:LineTarget-v0"``; or ``"entry_point": "examples.line_target:LineTargetEnv"``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class LineTargetEnv(gym.Env):
    """Observation ``[position, target]``; action: a step in [-1, 1] scaled by ``speed``."""

    metadata = {"render_modes": []}

    def __init__(self, speed: float = 0.1, max_steps: int = 40, render_mode: str | None = None):
        self.speed = float(speed)
        self.max_steps = int(max_steps)
        self.render_mode = render_mode
        self.observation_space = gym.spaces.Box(-2.0, 2.0, shape=(2,), dtype=np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self._position = self._target = 0.0
        self._steps = 0

    def _observation(self) -> np.ndarray:
        return np.array([self._position, self._target])

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._position = 0.0
        self._target = float(self.np_random.uniform(-1.0, 1.0))
        self._steps = 0
        return self._observation(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        move = float(np.clip(np.asarray(action, dtype=np.float64).ravel()[0], -1.0, 1.0))
        self._position = float(np.clip(self._position + self.speed * move, -2.0, 2.0))
        self._steps += 1
        distance = abs(self._target - self._position)
        terminated = distance < 0.05
        truncated = self._steps >= self.max_steps
        return self._observation(), -distance, terminated, truncated, {}


if "LineTarget-v0" not in gym.registry:
    gym.register(id="LineTarget-v0", entry_point=LineTargetEnv)
