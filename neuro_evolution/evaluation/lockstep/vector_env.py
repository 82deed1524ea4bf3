"""P copies of one environment stepped in lockstep, with finished copies masked out.

Three implementations behind one small interface,
:class:`~neuro_evolution.evaluation.lockstep.base.LockstepEnv` (the third, a gymnax env's copies
stepped by one vmapped call, is
:class:`~neuro_evolution.evaluation.jax.lockstep.JaxLockstepEnv`):

- :class:`NativeLockstepEnv` wraps an env's own numpy vector env
  (``gymnasium.make_vec(id, vectorization_mode="vector_entry_point")``, e.g. CartPole-v1's
  ``CartPoleVectorEnv``). Such a vector env seeds all copies from *one* generator, so on its own it
  cannot reproduce ``env.reset(seed=s_i)`` per copy. A :class:`NativeAdapter` makes it exact: a
  reference single env (made like the sequential runner's) is reset with each copy's seed and its
  physical state is copied into the vector env. Only env classes with an adapter run natively,
  and only unwrapped: an env with ``environment.wrappers`` always takes the sync path.
- :class:`SyncLockstepEnv` holds a ``gymnasium.vector.SyncVectorEnv`` (autoreset disabled) of envs
  made exactly like the sequential runner's (``environment.make()``: same kwargs, same wrappers,
  same ``module:`` imports) and resets/steps its sub-envs itself, only the active
  ones: ``SyncVectorEnv.step`` would also step finished sub-envs (undefined behaviour in Gymnasium,
  and wasted time), and its batched observation buffer would cast observations to the space dtype,
  which the sequential runner does not do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.lockstep.base import LockstepEnv, StepResult

VectorMode = Literal["auto", "native", "sync"]


def _observation_buffer(space: gym.Space, count: int) -> np.ndarray:
    """Where sub-env observations are gathered: int64 for Discrete, float64 for Box (as the
    brains' ``encode`` would convert them; no lossy cast to the space dtype on the way)."""
    if isinstance(space, gym.spaces.Discrete):
        return np.zeros(count, dtype=np.int64)
    assert space.shape is not None  # a Box: brains take Box and Discrete observations only
    return np.zeros((count, *space.shape), dtype=np.float64)


class SyncLockstepEnv(LockstepEnv):
    """A ``SyncVectorEnv`` of runner-identical envs whose active sub-envs are stepped one by one."""

    def __init__(self, environment: EnvironmentConfig, count: int, discrete_actions: bool):
        self.num_envs = count
        self.vector_env = SyncVectorEnv(
            [environment.make for _ in range(count)],
            copy=False,
            autoreset_mode=AutoresetMode.DISABLED,
        )
        self._envs = self.vector_env.envs
        self._discrete_actions = discrete_actions
        self._observations = _observation_buffer(self.vector_env.single_observation_space, count)
        self._rewards = np.zeros(count)
        self._terminated = np.zeros(count, dtype=bool)
        self._truncated = np.zeros(count, dtype=bool)

    def reset(self, seeds: Sequence[int]) -> np.ndarray:
        for i, env in enumerate(self._envs):
            self._observations[i], _ = env.reset(seed=int(seeds[i]))
        return self._observations

    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        # The sequential runner hands Discrete envs a Python int (SpaceAdapter.decode).
        per_env = actions.tolist() if self._discrete_actions else actions
        envs, observations = self._envs, self._observations
        rewards, terminated, truncated = self._rewards, self._terminated, self._truncated
        for i in np.flatnonzero(active).tolist():
            observations[i], rewards[i], terminated[i], truncated[i], _ = envs[i].step(per_env[i])
        return observations, rewards, terminated, truncated

    def close(self) -> None:
        self.vector_env.close()


@dataclasses.dataclass(frozen=True)
class NativeAdapter:
    """How to put single-env reset states into one native vector env class."""

    read_state: Callable[[gym.Env], np.ndarray]  # physical state of a reset single env
    load_states: Callable[[Any, np.ndarray], None]  # (vector env, (P, state) array) -> None
    incompatibility: Callable[[Any, gym.Env], str | None]  # why the two envs differ, or None


def _cartpole_incompatibility(vector_env: Any, single: gym.Env) -> str | None:
    single_limit = single.spec.max_episode_steps if single.spec is not None else None
    if vector_env.max_episode_steps != single_limit:
        return (
            f"its max_episode_steps {vector_env.max_episode_steps} differs from the single "
            f"env's time limit {single_limit}"
        )
    unwrapped: Any = single.unwrapped  # a CartPoleEnv
    if vector_env._sutton_barto_reward != unwrapped._sutton_barto_reward:
        return "its sutton_barto_reward setting differs from the single env's"
    return None


def _cartpole_state(env: gym.Env) -> np.ndarray:
    unwrapped: Any = env.unwrapped  # a CartPoleEnv
    return np.array(unwrapped.state, dtype=np.float64)


def _cartpole_load_states(vector_env: Any, states: np.ndarray) -> None:
    vector_env.state = np.ascontiguousarray(states.T, dtype=np.float64)


def _native_adapters() -> dict[type, NativeAdapter]:
    """Native vector env classes whose resets can be made seed-exact (see module docstring)."""
    from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv

    from neuro_evolution.envs.double_pole_vector import DoublePoleVectorEnv

    return {
        CartPoleVectorEnv: NativeAdapter(
            read_state=_cartpole_state,
            load_states=_cartpole_load_states,
            incompatibility=_cartpole_incompatibility,
        ),
        DoublePoleVectorEnv: NativeAdapter(  # the package's own envs carry their adapter
            read_state=DoublePoleVectorEnv.reset_state_of,
            load_states=DoublePoleVectorEnv.load_reset_states,
            incompatibility=DoublePoleVectorEnv.incompatibility,
        ),
    }


class NativeLockstepEnv(LockstepEnv):
    """An env's own numpy vector env; every copy steps every time (finished ones are ignored)."""

    def __init__(
        self, environment: EnvironmentConfig, count: int, adapter: NativeAdapter, neutral: Any
    ):
        self.num_envs = count
        self.vector_env = _make_native(environment, count)
        self.reference = environment.make()
        self._adapter = adapter
        self._neutral = neutral  # a valid action for copies that have finished
        shape = self.reference.observation_space.shape
        assert shape is not None  # adapters exist for Box observation spaces only
        self._observations = np.zeros((count, *shape))
        self._states: np.ndarray | None = None
        reason = adapter.incompatibility(self.vector_env.unwrapped, self.reference)
        if reason is not None:
            self.close()
            raise ValueError(f"native vector env of {environment.label} cannot be used: {reason}")

    def reset(self, seeds: Sequence[int]) -> np.ndarray:
        unique, inverse = np.unique(np.asarray(seeds, dtype=np.int64), return_inverse=True)
        states, observations = [], []
        for seed in unique.tolist():
            observation, _ = self.reference.reset(seed=seed)
            states.append(self._adapter.read_state(self.reference))
            observations.append(np.asarray(observation, dtype=np.float64))
        # The vector env's own reset zeroes its step counters and done flags; its random draw
        # is then replaced by the single-env states.
        self.vector_env.reset(seed=int(unique[0]))
        self._adapter.load_states(self.vector_env.unwrapped, np.stack(states)[inverse])
        self._observations[...] = np.stack(observations)[inverse]
        return self._observations

    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        if not active.all():
            actions = actions.copy()
            actions[~active] = self._neutral
        observations, rewards, terminated, truncated, _ = self.vector_env.step(actions)
        return observations, rewards, terminated, truncated

    def close(self) -> None:
        self.vector_env.close()
        self.reference.close()


def _make_native(environment: EnvironmentConfig, count: int) -> Any:
    assert environment.id is not None  # native_adapter: only registered ids have one
    return gym.make_vec(
        environment.id,
        num_envs=count,
        vectorization_mode="vector_entry_point",
        **dict(environment.kwargs),
    )


def native_adapter(environment: EnvironmentConfig) -> tuple[NativeAdapter | None, str]:
    """The adapter for the env's native vector env, or None and the reason it has none.

    A wrapped env never runs natively: a native vector env steps the bare env class, and a
    wrapper's single-env code (observation, action and reward changes, its own time limit) would
    need a vector twin proven to give the same numbers. Each sub-env of a SyncVectorEnv is made by
    ``environment.make()`` instead -- the sequential runner's env, wrappers included.
    """
    if environment.backend != "gymnasium":
        return (
            None,
            f"a {environment.backend} env steps one at a time through its Gymnasium adapter",
        )
    if environment.wrappers:
        return None, "wrappers are applied to each sub-env of a SyncVectorEnv"
    if environment.entry_point is not None:
        return None, "an env given by entry_point has no registered native vector env"
    spec = environment.registered_spec()
    if spec.vector_entry_point is None:
        return None, f"{environment.label} has no native vector env"
    try:
        probe = _make_native(environment, 1)
    except Exception as error:  # e.g. a kwarg only the single env accepts
        return None, f"its native vector env could not be made ({error})"
    try:
        adapter = _native_adapters().get(type(probe.unwrapped))
        if adapter is None:
            return None, (
                f"no seed-exact reset is known for {type(probe.unwrapped).__name__} (add a "
                "NativeAdapter in neuro_evolution/evaluation/lockstep/vector_env.py)"
            )
        single = environment.make()
        try:
            reason = adapter.incompatibility(probe.unwrapped, single)
        finally:
            single.close()
        return (adapter, "") if reason is None else (None, reason)
    finally:
        probe.close()


LockstepMode = Literal["native", "batched", "sync"]  # batched: a gymnax env's vmapped step
BATCHED_BACKENDS = ("gymnax",)  # JAX backends whose lockstep copies step as one vmapped call


def make_lockstep_env(
    environment: EnvironmentConfig,
    count: int,
    mode: LockstepMode,
    adapter: NativeAdapter | None,
    neutral_action: Any,
    discrete_actions: bool,
) -> LockstepEnv:
    """A lockstep env of ``count`` copies in the chosen mode (``adapter`` needed for native)."""
    if mode == "batched":
        from neuro_evolution.evaluation.jax.lockstep import JaxLockstepEnv

        return JaxLockstepEnv(environment, count, neutral_action)
    if mode == "native":
        if adapter is None:
            raise ValueError("native mode needs a NativeAdapter")
        return NativeLockstepEnv(environment, count, adapter, neutral_action)
    return SyncLockstepEnv(environment, count, discrete_actions)
