"""A gymnax env's P copies for the lockstep handler: one jitted, vmapped reset and step over all
lanes, results as numpy arrays.

The copies step the same pure functions as :class:`~neuro_evolution.evaluation.jax.envs.JaxGymEnv`
(which the sequential runner, the process pool and ``replay`` step one env at a time), vmapped:
lane i reset with seed s is that env's ``reset(seed=s)``, and its steps give the same bits. One
compiled step serves every lane; a SyncVectorEnv of JaxGymEnvs would compile its step once per
copy and call it once per copy and step.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np

from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.jax.envs import JaxEnv, reset_keys
from neuro_evolution.evaluation.lockstep.base import LockstepEnv, StepResult


class BatchedFunctions(NamedTuple):
    """One env's jitted, vmapped reset and step (compiled once per lane count)."""

    env: JaxEnv
    reset: Callable[[jax.Array], tuple[jax.Array, Any]]
    step: Callable[[Any, jax.Array], tuple[jax.Array, Any, jax.Array, jax.Array]]


_FUNCTIONS: dict[str, BatchedFunctions] = {}


def batched_functions(environment: EnvironmentConfig) -> BatchedFunctions:
    """The env's batched functions, made once per process and env config: every lockstep env of
    the same env (each wave size, validation, the memory probe) shares their compilations."""
    key = json.dumps([environment.backend, environment.id, dict(environment.kwargs)], default=str)
    functions = _FUNCTIONS.get(key)
    if functions is None:
        env = environment.make_jax_env()
        functions = BatchedFunctions(env, jax.jit(jax.vmap(env.reset)), jax.jit(jax.vmap(env.step)))
        _FUNCTIONS[key] = functions
    return functions


def padded_lanes(count: int) -> int:
    """The lanes compiled for ``count``: the next power of two, so that a few sizes (training,
    validation, a last wave) share few compilations; the padding lanes are stepped and ignored."""
    return 1 << max(0, count - 1).bit_length()


class JaxLockstepEnv(LockstepEnv):
    """``count`` copies of a gymnax env stepped by one jitted ``vmap`` of its step over
    :func:`padded_lanes` lanes; every lane steps every time (a finished or padding lane gets
    ``neutral_action``, and its results are ignored)."""

    def __init__(self, environment: EnvironmentConfig, count: int, neutral_action: Any):
        self.num_envs = count
        self._functions = batched_functions(environment)
        self.env = self._functions.env
        self._lanes = padded_lanes(count)
        self._discrete = isinstance(self.env.action_space, gym.spaces.Discrete)
        self._neutral = neutral_action
        self._actions = np.array([neutral_action] * self._lanes)  # padding lanes keep it
        self._state: Any = None
        self._steps = np.zeros(count, dtype=np.int64)

    def reset(self, seeds: Sequence[int]) -> np.ndarray:
        lane_seeds = np.zeros(self._lanes, dtype=np.uint64)
        lane_seeds[: self.num_envs] = np.asarray(seeds, dtype=np.uint64)
        observations, self._state = self._functions.reset(jnp.asarray(reset_keys(lane_seeds)))
        self._steps[:] = 0
        return np.asarray(observations[: self.num_envs], dtype=np.float64)

    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        count, lanes = self.num_envs, self._actions
        lanes[:count] = actions
        lanes[:count][~active] = self._neutral
        # as JaxGymEnv's jnp.asarray(action) without 64-bit mode: int32 or float32
        step = jnp.asarray(lanes, dtype=jnp.int32 if self._discrete else jnp.float32)
        observations, self._state, rewards, terminated = self._functions.step(self._state, step)
        self._steps += 1
        return (
            np.asarray(observations[:count], dtype=np.float64),
            np.asarray(rewards[:count], dtype=np.float64),
            np.asarray(terminated[:count], dtype=bool),
            self._steps >= self.env.time_limit,
        )

    def close(self) -> None:
        self._state = None
