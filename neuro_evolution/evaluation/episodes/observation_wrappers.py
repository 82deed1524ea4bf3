"""Observation wrappers for any env with a Box observation, named in ``environment.wrappers``.

- :class:`ObservationIndices` keeps (``keep``) or removes (``drop``) elements of a 1-D Box
  observation, e.g. LunarLander without its velocities: ``{"name": "ObservationIndices",
  "kwargs": {"drop": [2, 3, 5]}}``. The observation space shrinks with it (low/high sliced).
- :class:`ObservationNoise` adds Gaussian noise (``std``, one value or one per element). Its draws
  come from the seed the episode was reset with (:func:`~neuro_evolution.support.seeds.
  observation_noise_rng`), never from a global or per-worker generator: an episode reset with the
  same seed sees the same noise on every handler, worker and replay.
- :class:`FramesAsChannels` makes the (k, H, W) stack of ``FrameStackObservation`` one
  channel-last (H, W, k) image for a convolutional front end.

Indices count the observation as the wrappers listed before this one leave it. A bad argument is
a :class:`~neuro_evolution.evaluation.episodes.wrappers.WrapperArgumentError`, i.e. one ConfigError
line on ``environment.wrappers[i].kwargs.<argument>`` with the valid range: the checks that need
no env when the config is read (``check_kwargs``), the others when the env is wrapped at start-up.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from neuro_evolution.evaluation.episodes.wrappers import WrapperArgumentError
from neuro_evolution.support.seeds import observation_noise_rng


def _is_integer(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _box(env: gym.Env, wrapper: str, one_dimensional: bool) -> gym.spaces.Box:
    """The env's observation space, which must be a (1-D) Box; else the wrapper-level error."""
    space = env.observation_space
    if isinstance(space, gym.spaces.Box) and (not one_dimensional or len(space.shape) == 1):
        return space
    shape = "1-D Box" if one_dimensional else "Box"
    raise WrapperArgumentError(
        "",
        f"{wrapper} needs a {shape} observation, this env's is {space}; list FlattenObservation "
        "before it",
    )


class ObservationIndices(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Shows the brain only some elements of a 1-D Box observation.

    Give exactly one of ``keep`` (the indices shown, in that order) and ``drop`` (the indices
    removed; the rest keep their order). Indices run from 0 to size - 1, each at most once.
    """

    def __init__(self, env: gym.Env, keep: list[int] | None = None, drop: list[int] | None = None):
        self.check_kwargs(keep, drop)
        gym.utils.RecordConstructorArgs.__init__(self, keep=keep, drop=drop)
        gym.ObservationWrapper.__init__(self, env)
        space = _box(env, "ObservationIndices", one_dimensional=True)
        size = int(space.shape[0])
        argument, given = ("kwargs.keep", keep) if keep is not None else ("kwargs.drop", drop)
        assert given is not None  # check_kwargs: exactly one is given
        for index in given:
            if index >= size:
                raise WrapperArgumentError(
                    argument,
                    f"index {index} is out of range: the observation has {size} elements, "
                    f"indices 0..{size - 1}",
                )
        if keep is not None:
            indices = np.array(keep, dtype=np.intp)
        else:
            dropped = set(given)
            indices = np.array([i for i in range(size) if i not in dropped], dtype=np.intp)
            if indices.size == 0:
                raise WrapperArgumentError(
                    "kwargs.drop",
                    f"drops all {size} elements of the observation: keep at least one",
                )
        indices.flags.writeable = False
        self.indices = indices
        self.observation_space = gym.spaces.Box(
            low=space.low[indices], high=space.high[indices], dtype=space.dtype
        )

    @staticmethod
    def check_kwargs(keep: Any = None, drop: Any = None) -> None:
        """What needs no env: exactly one of keep/drop, a non-empty list of distinct indices."""
        if (keep is None) == (drop is None):
            raise WrapperArgumentError(
                "kwargs",
                "give exactly one of keep (the indices shown) and drop (the indices removed)",
            )
        argument, given = ("kwargs.keep", keep) if keep is not None else ("kwargs.drop", drop)
        if not isinstance(given, list | tuple) or not given:
            raise WrapperArgumentError(
                argument, f"must be a non-empty list of indices 0, 1, ..., got {given!r}"
            )
        seen: set[int] = set()
        for index in given:
            if not _is_integer(index) or index < 0:
                raise WrapperArgumentError(
                    argument, f"indices are integers 0, 1, ... (size - 1), got {index!r}"
                )
            if index in seen:
                raise WrapperArgumentError(argument, f"index {index} is listed twice")
            seen.add(int(index))

    def observation(self, observation: Any) -> np.ndarray:
        """The kept elements, in order."""
        return np.asarray(observation)[self.indices]


class ObservationNoise(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Adds N(0, std²) noise to every element of a Box observation, at reset and every step.

    ``std`` is one number for every element or a list with one per element (of the flattened
    observation, as the wrappers before this one leave it); 0 leaves an element exact. The draws
    of an episode come from the seed its ``reset(seed=...)`` got (one ``standard_normal`` of the
    observation's size per observation), so they are a function of the episode seed alone; a
    reset without a seed continues the last seeded stream (a fresh one if there was none), as a
    Gymnasium env does. The observation space keeps its bounds (noisy values may lie slightly
    outside, as a sensor's would); its dtype becomes float64 if it was an integer one.
    """

    def __init__(self, env: gym.Env, std: float | list[float]):
        self.check_kwargs(std)
        gym.utils.RecordConstructorArgs.__init__(self, std=std)
        gym.ObservationWrapper.__init__(self, env)
        space = _box(env, "ObservationNoise", one_dimensional=False)
        size = int(np.prod(space.shape, dtype=np.int64))
        if isinstance(std, list | tuple) and len(std) != size:
            raise WrapperArgumentError(
                "kwargs.std",
                f"has {len(std)} values, but the observation has {size} elements: give {size} "
                f"(one per index 0..{size - 1}) or one number for all",
            )
        self.std = np.broadcast_to(np.asarray(std, dtype=np.float64), (size,)).reshape(space.shape)
        self.std.flags.writeable = False
        floating = np.issubdtype(space.dtype, np.floating)
        self.dtype = space.dtype if floating else np.dtype(np.float64)
        if not floating:
            self.observation_space = gym.spaces.Box(
                low=space.low, high=space.high, shape=space.shape, dtype=np.float64
            )
        self._shape = space.shape
        self._rng: np.random.Generator | None = None

    @staticmethod
    def check_kwargs(std: Any = None) -> None:
        """``std``: a finite number >= 0, or a non-empty list of them."""
        values = std if isinstance(std, list | tuple) else [std]
        if not values:
            raise WrapperArgumentError(
                "kwargs.std", "must be a number >= 0 or a list of them, got []"
            )
        for value in values:
            if not _is_number(value) or not math.isfinite(value) or value < 0:
                raise WrapperArgumentError(
                    "kwargs.std", f"standard deviations are finite numbers >= 0, got {value!r}"
                )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the env; a seed also restarts the noise stream from that seed."""
        if seed is not None:
            self._rng = observation_noise_rng(seed)
        elif self._rng is None:
            self._rng = np.random.default_rng()
        return super().reset(seed=seed, options=options)

    def observation(self, observation: Any) -> np.ndarray:
        """The observation plus this step's noise, in the observation space's dtype."""
        if self._rng is None:
            raise RuntimeError("reset the env before stepping it")
        noise = self._rng.standard_normal(self._shape)
        noisy = np.asarray(observation, dtype=np.float64) + self.std * noise
        return noisy.astype(self.dtype, copy=False)


class FramesAsChannels(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Turns a stack of k image frames into one channel-last image, the layout a convolutional
    front end takes: (k, H, W) -> (H, W, k), and (k, H, W, C) -> (H, W, k * C) with channel
    ``t * C + c`` holding channel c of frame t (oldest frame first, as stacked).

    List it right after ``FrameStackObservation``, whose stacks have the frame axis first.
    Values and dtype are unchanged; the observation space's bounds move with the axes.
    """

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        space = _box(env, "FramesAsChannels", one_dimensional=False)
        if len(space.shape) not in (3, 4):
            raise WrapperArgumentError(
                "",
                f"FramesAsChannels needs a stack of frames, (k, H, W) or (k, H, W, C); this env's "
                f"observation has shape {space.shape}: list FrameStackObservation before it",
            )
        self.observation_space = gym.spaces.Box(
            low=self._channel_last(space.low),
            high=self._channel_last(space.high),
            dtype=space.dtype,
        )

    @staticmethod
    def _channel_last(frames: np.ndarray) -> np.ndarray:
        """(k, H, W) -> (H, W, k); (k, H, W, C) -> (H, W, k * C), in a new contiguous array."""
        if frames.ndim == 3:
            return np.ascontiguousarray(np.moveaxis(frames, 0, -1))
        k, height, width, channels = frames.shape
        moved = np.moveaxis(frames, 0, 2)  # (H, W, k, C)
        return np.ascontiguousarray(moved).reshape(height, width, k * channels)

    def observation(self, observation: Any) -> np.ndarray:
        """The stacked frames as the channels of one image."""
        return self._channel_last(np.asarray(observation))
