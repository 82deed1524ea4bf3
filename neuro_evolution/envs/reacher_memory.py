"""ReacherMemory: Gymnasium's Reacher-v5 in three phases, so that reaching needs memory.

An episode is ``observation_frames + memory_frames + action_frames`` steps (20 + 20 + 50 = 90 by
default). With ``t`` the number of steps taken before a step (0 for the first one):

- **observe** (``t < observation_frames``): the observation returned is Reacher's own; the reset
  observation is Reacher's own too, so the brain sees the target in ``observation_frames + 1``
  observations (the reset one and those of steps 1..20);
- **memory** (from ``t == observation_frames``): every observation returned has its target
  entries set to 0: the target position (indices 4, 5) and the fingertip-minus-target vector
  (indices 8, 9);
- **action** (from ``t == observation_frames + memory_frames``): the reward is Reacher's.
  Before it the reward is 0.

The brain's action is replaced by zeros while ``t <= observation_frames + memory_frames``, so the
first rewarded step (step 41) is taken with a zero action (Reacher's reward minus no control
cost) and the brain's own action first moves the arm at step 42. The episode is truncated at
step ``observation_frames + memory_frames + action_frames`` (90); it never terminates.

This is the predecessor's ``ReacherMemory-v0`` (``reacher_memory_env.py``), written against
Reacher-v5 instead of Gym's Reacher-v2, with the same boundaries. Where v5 differs from v2:

- the observation has 10 entries, not 11: v2's fingertip-minus-target vector had a z entry
  (index 10, masked there too), which v5 drops, so the masked indices are 4, 5, 8, 9;
- v5 scores the fingertip's distance after the step's simulation, v2 before it;
- v2's env ended an episode at its 91st step and its registration's ``TimeLimit`` at the 90th;
  here the env keeps its own time (no ``TimeLimit``), so the frame counts alone set the length.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import utils
from gymnasium.envs.mujoco.reacher_v5 import ReacherEnv
from numpy.typing import NDArray

TARGET_INDICES = (4, 5, 8, 9)  # target x, y; fingertip - target x, y (Reacher-v5's observation)
PHASES = ("observe", "memory", "action")


class ReacherMemoryEnv(ReacherEnv):
    """Reacher-v5 with an observe, a memory and an action phase (rule: module docstring)."""

    def __init__(
        self,
        observation_frames: int = 20,
        memory_frames: int = 20,
        action_frames: int = 50,
        **kwargs: Any,
    ) -> None:
        for name, value in (
            ("observation_frames", observation_frames),
            ("memory_frames", memory_frames),
            ("action_frames", action_frames),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        super().__init__(**kwargs)
        # ReacherEnv records its own arguments positionally; record ours for pickling and copies.
        utils.EzPickle.__init__(
            self,
            observation_frames=observation_frames,
            memory_frames=memory_frames,
            action_frames=action_frames,
            **kwargs,
        )
        self.observation_frames = observation_frames
        self.memory_frames = memory_frames
        self.action_frames = action_frames
        self.episode_steps = observation_frames + memory_frames + action_frames
        self.t = 0  # steps taken since reset

    @property
    def phase(self) -> str:
        """The phase of the next step: ``observe``, ``memory`` or ``action``."""
        if self.t < self.observation_frames:
            return PHASES[0]
        return PHASES[1] if self.t < self.observation_frames + self.memory_frames else PHASES[2]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reacher's reset (its observation unmasked); the step count starts again at 0."""
        observation, info = super().reset(seed=seed, options=options)
        self.t = 0
        return observation, info

    def step(
        self, action: np.ndarray
    ) -> tuple[NDArray[np.float64], np.float64, bool, bool, dict[str, np.float64]]:
        """One Reacher step with the phase's action, observation and reward (module docstring)."""
        t = self.t
        hidden_until = self.observation_frames + self.memory_frames
        if t <= hidden_until:
            action = np.zeros(np.shape(action), dtype=np.float64)
        observation, reward, terminated, _, info = super().step(action)
        if t >= self.observation_frames:
            observation[list(TARGET_INDICES)] = 0.0
        if t < hidden_until:
            reward = np.float64(0.0)
        self.t = t + 1
        return observation, np.float64(reward), terminated, self.t >= self.episode_steps, info
