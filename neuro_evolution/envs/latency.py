"""LatencyEnv: a step that waits ``step_seconds`` without using the CPU, for measuring scaling.

It stands in for a heavy simulator running on a core of its own: each step costs wall time but
(almost) no CPU of the machine that measures, so ``scripts/bench_scale.py`` can measure the
parallel efficiency of 32 workers on 2 cores honestly -- what limits it then is the handler's own
per-generation and per-task cost, not the cores.

The task itself is trivial and deterministic from the reset seed (so runs are identical across
handlers): a target on a circle moves by a seeded angle per step; the observation is the target
(cos, sin) and the step count scaled to [0, 1]; the action in [-1, 1] is scored by
``-(action - cos(angle))**2``. Every episode lasts exactly ``max_steps`` steps (truncation), so
every evaluation costs the same.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np

OBSERVATION_SPACE = gym.spaces.Box(-1.0, 1.0, shape=(3,), dtype=np.float64)
ACTION_SPACE = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float64)


class LatencyEnv(gym.Env[np.ndarray, np.ndarray]):
    """Fixed-length episodes whose steps sleep ``step_seconds`` each (0: no waiting)."""

    metadata = {"render_modes": []}

    def __init__(self, step_seconds: float = 0.0025, max_steps: int = 40) -> None:
        if step_seconds < 0 or max_steps < 1:
            raise ValueError(
                f"LatencyEnv needs step_seconds >= 0 and max_steps >= 1, got {step_seconds}, "
                f"{max_steps}"
            )
        self.step_seconds = float(step_seconds)
        self.max_steps = int(max_steps)
        self.observation_space = OBSERVATION_SPACE
        self.action_space = ACTION_SPACE
        self._angle = 0.0
        self._speed = 0.0
        self._steps = 0

    def _observation(self) -> np.ndarray:
        return np.array(
            [np.cos(self._angle), np.sin(self._angle), self._steps / self.max_steps],
            dtype=np.float64,
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._angle = float(self.np_random.uniform(-np.pi, np.pi))
        self._speed = float(self.np_random.uniform(0.05, 0.3))
        self._steps = 0
        return self._observation(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.step_seconds > 0:
            time.sleep(self.step_seconds)  # the simulator's latency: wall time, no CPU
        value = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1.0, 1.0))
        reward = -((value - np.cos(self._angle)) ** 2)
        self._angle += self._speed
        self._steps += 1
        return self._observation(), reward, False, self._steps >= self.max_steps, {}
