"""DoublePoleVectorEnv: N double-pole carts in one numpy Gymnasium ``VectorEnv``.

Copy i is bit-identical to ``DoublePoleEnv`` reset with the same seed and given the same actions:
both step a :class:`~neuro_evolution.envs.double_pole_task.Carts` (the single env one of N = 1).
No autoreset: a copy whose episode has ended is frozen (its rewards 0, its flags False) until the
next reset. ``reset(seed=s)`` resets copy i with ``s + i``, ``reset(seed=[...])`` copy i with the
i-th seed.

The vectorized handler resets copies with per-copy seeds through its native-vector-env adapter
(``evaluation/lockstep/vector_env.py``): :meth:`reset_state_of` reads a reset single env,
:meth:`load_reset_states` starts the copies from such states, and :meth:`incompatibility` says
why a single env was made with other options.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from neuro_evolution.envs import double_pole_physics as physics
from neuro_evolution.envs.double_pole import ACTION_SPACE, observation_space
from neuro_evolution.envs.double_pole_task import Carts, DoublePoleTask


class DoublePoleVectorEnv(VectorEnv):
    """``num_envs`` independent carts with two poles, stepped together."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(self, num_envs: int = 1, **task: Any):
        """``task``: the keyword arguments of :class:`DoublePoleEnv` (checked there when the
        config is read), so both envs play the same task."""
        self.task = DoublePoleTask(**task)
        self.num_envs = num_envs
        self.single_observation_space = observation_space(self.task)
        self.single_action_space = ACTION_SPACE
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.carts = Carts(self.task, num_envs)

    def reset(
        self,
        *,
        seed: int | Sequence[int] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every copy as ``DoublePoleEnv.reset`` would with its seed."""
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int | np.integer):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = [int(s) for s in seed]
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} copies")
        super().reset(seed=seeds[0])
        states = np.stack([self.task.start_state(s) for s in seeds], axis=1)
        self.carts.load(states, np.array([self.task.episode_kind(s) for s in seeds]))
        return self.carts.observations(), {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step the copies still running; (N, 1) or (N,) actions in [-1, 1]."""
        values = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)[:, 0]
        rewards, terminated, truncated = self.carts.step(values)
        return self.carts.observations(), rewards, terminated, truncated, {}

    @staticmethod
    def reset_state_of(env: gym.Env) -> np.ndarray:
        """(7,) what a reset ``DoublePoleEnv`` starts from: its state and its episode kind."""
        single: Any = env.unwrapped  # a DoublePoleEnv (the adapter table says so)
        return np.append(single.state, float(single.episode_kind))

    def load_reset_states(self, states: np.ndarray) -> None:
        """Start copy i from ``states[i]`` (rows of :meth:`reset_state_of`)."""
        states = np.asarray(states, dtype=np.float64)
        self.carts.load(states[:, : physics.STATE_SIZE].T, states[:, physics.STATE_SIZE])

    def incompatibility(self, env: gym.Env) -> str | None:
        """Why copies of this env would differ from ``env`` (None: they do not)."""
        other = getattr(env.unwrapped, "task", None)
        if other != self.task:
            return f"its options {self.task} differ from the single env's {other}"
        return None
