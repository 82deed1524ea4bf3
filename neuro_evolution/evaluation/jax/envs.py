"""JAX environments (gymnax classic control and MinAtar, Brax locomotion) behind one interface.

An env of ``"environment": {"id": ..., "backend": "gymnax" | "brax"}`` is a :class:`JaxEnv`:
pure ``reset(key) -> (observation, state)`` and ``step(state, action) -> (observation, state,
reward, terminated)`` for ONE env (the JAX handler vmaps them over P individuals), a time limit
(``truncated`` when an episode has run that many steps, as Gymnasium's TimeLimit does), and the
Gymnasium spaces the brain template is made for.

Everything outside the JAX handler (template, dry run, the other handlers, ``replay``) steps the
same env through :class:`JaxGymEnv`, a Gymnasium ``Env`` around the jitted functions: a run
trained on the JAX path replays on the same dynamics, and ``reset(seed=s)`` starts exactly where
the JAX handler's episode with reset seed ``s`` starts (:func:`reset_keys`).

A gymnax env's state carries its own step key (``fold_in(reset key, STEP_STREAM)``, split once
per step), so MinAtar's random spawns are a function of the reset seed as everything else is; a
MinAtar game also carries its last action for the optional ``sticky_action_prob`` (the ``minatar``
package's sticky actions, which gymnax does not have).

How the envs differ from the Gymnasium env of the same name: ``docs/jax.md``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np

from neuro_evolution.support.errors import ConfigError

CLASSIC_ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0",
                "Pendulum-v1")  # fmt: skip
MINATAR_ENVS = ("Asterix-MinAtar", "Breakout-MinAtar", "Freeway-MinAtar", "SpaceInvaders-MinAtar")
GYMNAX_ENVS = CLASSIC_ENVS + MINATAR_ENVS
MINATAR_OPTIONS = {"sticky_action_prob", "use_minimal_action_set"}  # ours, not EnvParams fields
STEP_STREAM = 2  # fold_in(reset key, STEP_STREAM): the key a gymnax env's steps draw from
BRAX_ENVS = ("ant", "halfcheetah", "hopper", "humanoid", "inverted_pendulum",
             "inverted_double_pendulum", "pusher", "reacher", "walker2d")  # fmt: skip
BRAX_EPISODE_STEPS = 1000  # as Gymnasium's MuJoCo locomotion envs (Brax envs have no limit)
NO_LIMIT = 2**30  # gymnax's own time limit is switched off: truncation is ours
# What JAX warns about in gymnax 0.0.9's own MinAtar code, once per trace: the observation is
# built by setting ints and floats into a bool array, and Freeway asks for int64 cars without
# x64 (int32 holds them). The bits are right and nobody using this package can act on it, so
# these two are silenced inside gymnax's calls alone.
GYMNAX_NOISE: tuple[tuple[str, type[Warning]], ...] = (
    ("scatter inputs have incompatible types", FutureWarning),
    ("Explicitly requested dtype int64 requested in array is not available", UserWarning),
)


@contextlib.contextmanager
def _gymnax_quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        for message, category in GYMNAX_NOISE:
            warnings.filterwarnings("ignore", message=message, category=category)
        yield


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


class GymnaxState(NamedTuple):
    """A gymnax env's state as the JAX path carries it: gymnax's own, the key its next steps
    draw from, and the last action taken (0 at reset, as a fresh ``minatar`` game)."""

    env: Any
    key: jax.Array
    last_action: jax.Array


def _gymnax_env(env_id: str, kwargs: dict, path: str) -> tuple[Any, Any]:
    """gymnax's env and default params for ``env_id``, or a one-line ConfigError."""
    import gymnax

    if env_id not in GYMNAX_ENVS:
        extra = ""
        if env_id == "Seaquest-MinAtar":
            extra = (
                " (gymnax does not register it; play minatar:MinAtar/Seaquest-v1 on another "
                "handler)"
            )
        raise ConfigError(
            f"{path}.id",
            f"{env_id!r} is not a gymnax env supported here{extra}; use one of "
            f"{', '.join(GYMNAX_ENVS)}",
        )
    options = {}
    if env_id in MINATAR_ENVS and "use_minimal_action_set" in kwargs:
        options["use_minimal_action_set"] = bool(kwargs["use_minimal_action_set"])
    return gymnax.make(env_id, **options)


def _sticky_probability(kwargs: dict, path: str) -> float:
    probability = kwargs.get("sticky_action_prob", 0.0)
    if not isinstance(probability, int | float) or not 0.0 <= float(probability) < 1.0:
        raise ConfigError(
            f"{path}.kwargs.sticky_action_prob",
            f"must be a number in [0, 1) (minatar's default is 0.1), got {probability!r}",
        )
    return float(probability)


def make_gymnax(env_id: str, kwargs: dict, path: str = "environment") -> JaxEnv:
    """A gymnax classic-control or MinAtar env; ``kwargs``: ``max_episode_steps``, EnvParams
    fields, and for MinAtar ``sticky_action_prob`` (default 0: gymnax's game) and
    ``use_minimal_action_set`` (default true: the action set of ``MinAtar/<Game>-v1``)."""
    with _gymnax_quiet():
        env, params = _gymnax_env(env_id, kwargs, path)
    minatar = env_id in MINATAR_ENVS
    fields = {f.name for f in dataclasses.fields(params)} - {"max_steps_in_episode"}
    ours = {"max_episode_steps"} | (MINATAR_OPTIONS if minatar else set())
    _check_kwargs(kwargs, fields | ours, env_id, f"{path}.kwargs")
    time_limit = int(kwargs.get("max_episode_steps", params.max_steps_in_episode))
    params = params.replace(
        max_steps_in_episode=NO_LIMIT, **{k: v for k, v in kwargs.items() if k not in ours}
    )
    sticky = _sticky_probability(kwargs, path) if minatar else 0.0
    with _gymnax_quiet():
        observation_space = _gym_space(env.observation_space(params))
        action_space = _gym_space(env.action_space(params))
    if minatar:  # 0/1 planes, as the minatar package's Box(0, 1, (10, 10, C), bool)
        shape = observation_space.shape
        observation_space = gym.spaces.Box(0, 1, shape, dtype=bool)

    def observe(observation: jax.Array) -> jax.Array:
        return observation.astype(bool) if minatar else observation

    def reset(key: jax.Array) -> tuple[jax.Array, Any]:
        with _gymnax_quiet():
            observation, state = env.reset_env(key, params)
        step_key = jax.random.fold_in(key, STEP_STREAM)
        return observe(observation), GymnaxState(state, step_key, jnp.int32(0))

    def step(state: Any, action: jax.Array) -> tuple[jax.Array, Any, jax.Array, jax.Array]:
        key, env_key = jax.random.split(state.key)
        action = jnp.asarray(action)
        if sticky > 0.0:  # minatar: with probability p the game repeats the last action
            env_key, sticky_key = jax.random.split(env_key)
            repeat = jax.random.uniform(sticky_key) < sticky
            action = jnp.where(repeat, state.last_action.astype(action.dtype), action)
        with _gymnax_quiet():
            observation, inner, reward, done, _ = env.step_env(env_key, state.env, action, params)
        last = action.astype(jnp.int32) if minatar else state.last_action
        state = GymnaxState(inner, key, jnp.reshape(last, ()))
        return observe(observation), state, jnp.reshape(reward, ()), jnp.reshape(done, ())

    return JaxEnv(
        name=env_id,
        reset=reset,
        step=step,
        time_limit=time_limit,
        observation_space=observation_space,
        action_space=action_space,
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
