"""JAX environments (gymnax classic control, Brax locomotion) behind one small interface.

An env of ``"environment": {"id": ..., "backend": "gymnax" | "brax"}`` is a :class:`JaxEnv`:
pure ``reset(key) -> (observation, state)`` and ``step(state, action) -> (observation, state,
reward, terminated)`` for ONE env (the JAX handler vmaps them over P individuals), a time limit
(``truncated`` when an episode has run that many steps, as Gymnasium's TimeLimit does), and the
Gymnasium spaces the brain template is made for.

Everything outside the JAX handler (template, dry run, the other handlers, ``replay``) steps the
same env through :class:`JaxGymEnv`, a Gymnasium ``Env`` around the jitted functions: a run
trained on the JAX path replays on the same dynamics, and ``reset(seed=s)`` starts exactly where
the JAX handler's episode with reset seed ``s`` starts (:func:`reset_keys`).

How the envs differ from the Gymnasium env of the same name: ``docs/jax.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np

from neuro_evolution.support.errors import ConfigError

GYMNAX_ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0",
               "Pendulum-v1")  # fmt: skip
BRAX_ENVS = ("ant", "halfcheetah", "hopper", "humanoid", "inverted_pendulum",
             "inverted_double_pendulum", "pusher", "reacher", "walker2d")  # fmt: skip
BRAX_EPISODE_STEPS = 1000  # as Gymnasium's MuJoCo locomotion envs (Brax envs have no limit)
NO_LIMIT = 2**30  # gymnax's own time limit is switched off: truncation is ours


@dataclasses.dataclass(frozen=True)
class JaxEnv:
    """One JAX env: pure single-env functions, its time limit and its Gymnasium spaces."""

    name: str
    reset: Callable[[jax.Array], tuple[jax.Array, Any]]
    step: Callable[[Any, jax.Array], tuple[jax.Array, Any, jax.Array, jax.Array]]
    time_limit: int
    observation_space: gym.Space
    action_space: gym.Space


def reset_keys(seeds: np.ndarray) -> np.ndarray:
    """(n, 2) uint32 raw PRNG keys for reset seeds (up to 64 bits): ``[seed >> 32, seed & M]``,
    which is ``jax.random.PRNGKey(seed)`` for every seed, without needing 64-bit mode."""
    seeds = np.asarray(seeds, dtype=np.uint64).reshape(-1)
    return np.stack([seeds >> np.uint64(32), seeds & np.uint64(0xFFFFFFFF)], axis=1).astype(
        np.uint32
    )


def _gym_space(space: Any) -> gym.Space:
    """A gymnax space as the Gymnasium space of the same shape and bounds."""
    if hasattr(space, "n"):
        return gym.spaces.Discrete(int(space.n))
    shape = tuple(space.shape)
    low = np.broadcast_to(np.asarray(space.low, dtype=np.float32), shape)
    high = np.broadcast_to(np.asarray(space.high, dtype=np.float32), shape)
    return gym.spaces.Box(low, high, shape, dtype=np.float32)


def _check_kwargs(kwargs: dict, allowed: set[str], name: str, path: str) -> None:
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise ConfigError(
            path,
            f"{name} takes no argument {unknown[0]!r}; it takes: {', '.join(sorted(allowed))}",
        )


def make_gymnax(env_id: str, kwargs: dict, path: str = "environment") -> JaxEnv:
    """A gymnax classic-control env; ``kwargs``: ``max_episode_steps`` and EnvParams fields."""
    import gymnax

    if env_id not in GYMNAX_ENVS:
        raise ConfigError(
            f"{path}.id",
            f"{env_id!r} is not a gymnax env supported here; use one of {', '.join(GYMNAX_ENVS)}",
        )
    env, params = gymnax.make(env_id)
    fields = {f.name for f in dataclasses.fields(params)} - {"max_steps_in_episode"}
    _check_kwargs(kwargs, fields | {"max_episode_steps"}, env_id, f"{path}.kwargs")
    time_limit = int(kwargs.get("max_episode_steps", params.max_steps_in_episode))
    params = params.replace(
        max_steps_in_episode=NO_LIMIT,
        **{k: v for k, v in kwargs.items() if k != "max_episode_steps"},
    )
    step_key = jax.random.PRNGKey(0)  # classic-control steps draw nothing from their key

    def reset(key: jax.Array) -> tuple[jax.Array, Any]:
        return env.reset_env(key, params)

    def step(state: Any, action: jax.Array) -> tuple[jax.Array, Any, jax.Array, jax.Array]:
        observation, state, reward, done, _ = env.step_env(step_key, state, action, params)
        return observation, state, jnp.reshape(reward, ()), jnp.reshape(done, ())

    return JaxEnv(
        name=env_id,
        reset=reset,
        step=step,
        time_limit=time_limit,
        observation_space=_gym_space(env.observation_space(params)),
        action_space=_gym_space(env.action_space(params)),
    )


def make_brax(env_id: str, kwargs: dict, path: str = "environment") -> JaxEnv:
    """A Brax env (``kwargs``: ``max_episode_steps`` and the env's own, e.g. ``backend``)."""
    try:
        from brax import envs
    except ImportError as error:
        raise ConfigError(
            "environment.backend",
            f"'brax' needs the optional 'brax' extra ({error}): pip install "
            "'neuro_evolution[brax]'",
        ) from None
    if env_id not in BRAX_ENVS:
        raise ConfigError(
            f"{path}.id", f"{env_id!r} is not a Brax env; use one of {', '.join(BRAX_ENVS)}"
        )
    options = {k: v for k, v in kwargs.items() if k != "max_episode_steps"}
    options.setdefault("backend", "spring")  # the fastest to compile and run on a CPU
    try:
        env = envs.get_environment(env_id, **options)
    except TypeError as error:
        raise ConfigError(f"{path}.kwargs", f"Brax {env_id}: {error}") from None

    def reset(key: jax.Array) -> tuple[jax.Array, Any]:
        state = env.reset(key)
        return state.obs, state

    def step(state: Any, action: jax.Array) -> tuple[jax.Array, Any, jax.Array, jax.Array]:
        state = env.step(state, action)
        return state.obs, state, state.reward, state.done > 0

    size = int(env.observation_size)
    return JaxEnv(
        name=env_id,
        reset=reset,
        step=step,
        time_limit=int(kwargs.get("max_episode_steps", BRAX_EPISODE_STEPS)),
        observation_space=gym.spaces.Box(-np.inf, np.inf, (size,), dtype=np.float32),
        action_space=gym.spaces.Box(-1.0, 1.0, (int(env.action_size),), dtype=np.float32),
    )


MAKERS: dict[str, Callable[[str, dict, str], JaxEnv]] = {"gymnax": make_gymnax, "brax": make_brax}


def make_jax_env(backend: str, env_id: str, kwargs: dict, path: str = "environment") -> JaxEnv:
    """The JAX env ``env_id`` of ``backend`` ("gymnax" or "brax")."""
    return MAKERS[backend](env_id, dict(kwargs), path)


class JaxGymEnv(gym.Env):
    """A :class:`JaxEnv` as a Gymnasium env (jitted single-env functions, its own time limit),
    for everything that steps one env at a time: dry run, the other handlers, ``replay``."""

    metadata = {"render_modes": []}

    def __init__(self, env: JaxEnv):
        self.env = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self._reset = jax.jit(env.reset)
        self._step = jax.jit(env.step)
        self._state: Any = None
        self._steps = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**32))
        observation, self._state = self._reset(jnp.asarray(reset_keys(np.array([seed]))[0]))
        self._steps = 0
        return np.asarray(observation), {}

    def step(self, action: Any):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        observation, self._state, reward, terminated = self._step(self._state, jnp.asarray(action))
        self._steps += 1
        truncated = self._steps >= self.env.time_limit
        return np.asarray(observation), float(reward), bool(terminated), truncated, {}
