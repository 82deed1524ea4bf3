"""Mapping between Gymnasium spaces and the flat float vectors that brains compute with.

A :class:`SpaceAdapter` is made once per template. ``encode`` turns an observation into a flat
float64 input vector (Box as is, Discrete one-hot). Any other observation space (Tuple,
MultiDiscrete, MultiBinary, Dict) is refused with one line naming Gymnasium's FlattenObservation
wrapper, which encodes it the same way: one-hot Discrete and MultiDiscrete parts, a Tuple's
parts concatenated. (Encoding them here would need new adapter fields, and every field is saved
in every template state: old checkpoints would lack them, new ones would differ in bytes.)
``decode`` turns the brain's outputs
(in [-1, 1] for bounded actions) into an action of the env's action space:

- ``Discrete(n, start)``: n outputs, action = start + argmax;
- ``Box`` with finite bounds: one output per element, scaled from [-1, 1] to [low, high];
- ``Box`` with an infinite bound: the raw outputs;
- ``MultiBinary(n)``: n outputs, action = outputs > 0;
- ``MultiDiscrete(nvec)``: sum(nvec) outputs, one argmax per block (+ start).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from neuro_evolution.support.errors import UnsupportedSpaceError
from neuro_evolution.support.frozen import ReadOnlyRecord, frozen_dataclass


def one_line(space: gym.Space, limit: int = 120) -> str:
    """``str(space)`` on one line (numpy wraps long arrays), cut to ``limit`` characters."""
    text = " ".join(str(space).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _empty() -> np.ndarray:
    return np.zeros(0)


@frozen_dataclass(eq=False)
class SpaceAdapter(ReadOnlyRecord):
    """Read-only description of an env's observation and action spaces, plus the mapping."""

    observation_kind: Literal["box", "discrete"]
    input_size: int
    observation_start: int = 0
    action_kind: Literal["discrete", "box", "multibinary", "multidiscrete"]
    output_size: int
    action_start: np.ndarray = dataclasses.field(
        default_factory=_empty
    )  # Discrete/MultiDiscrete start values
    action_low: np.ndarray = dataclasses.field(default_factory=_empty)  # Box lower bounds (flat)
    action_high: np.ndarray = dataclasses.field(default_factory=_empty)  # Box upper bounds (flat)
    action_nvec: np.ndarray = dataclasses.field(
        default_factory=_empty
    )  # MultiDiscrete sizes (flat)
    action_shape: tuple[int, ...] = ()
    action_dtype: str = "float64"
    bounded: bool = True

    @classmethod
    def from_spaces(cls, observation_space: gym.Space, action_space: gym.Space) -> SpaceAdapter:
        """Describe two Gymnasium spaces; UnsupportedSpaceError if one does not fit."""
        fields: dict[str, Any] = {}
        if isinstance(observation_space, gym.spaces.Discrete):
            fields.update(
                observation_kind="discrete",
                input_size=int(observation_space.n),
                observation_start=int(observation_space.start),
            )
        elif isinstance(observation_space, gym.spaces.Box):
            fields.update(observation_kind="box", input_size=int(np.prod(observation_space.shape)))
        else:
            raise UnsupportedSpaceError(
                f"observation space {one_line(observation_space)} is not supported: brains take "
                "a Box or a Discrete observation; list FlattenObservation in "
                "environment.wrappers, which one-hot encodes Discrete and MultiDiscrete parts, "
                "0/1 for MultiBinary, and concatenates the parts of a Tuple or Dict"
            )
        if isinstance(action_space, gym.spaces.Discrete):
            fields.update(
                action_kind="discrete",
                output_size=int(action_space.n),
                action_start=np.array([action_space.start], dtype=np.int64),
                action_dtype=str(action_space.dtype),
            )
        elif isinstance(action_space, gym.spaces.Box):
            low = np.asarray(action_space.low, dtype=np.float64).ravel()
            high = np.asarray(action_space.high, dtype=np.float64).ravel()
            fields.update(
                action_kind="box",
                output_size=low.size,
                action_low=low,
                action_high=high,
                action_shape=tuple(action_space.shape),
                action_dtype=str(action_space.dtype),
                bounded=bool(np.all(np.isfinite(low)) and np.all(np.isfinite(high))),
            )
        elif isinstance(action_space, gym.spaces.MultiBinary):
            shape = tuple(np.atleast_1d(action_space.n).tolist())
            fields.update(
                action_kind="multibinary",
                output_size=int(np.prod(shape)),
                action_shape=shape,
                action_dtype=str(action_space.dtype),
            )
        elif isinstance(action_space, gym.spaces.MultiDiscrete):
            nvec = np.asarray(action_space.nvec, dtype=np.int64).ravel()
            fields.update(
                action_kind="multidiscrete",
                output_size=int(nvec.sum()),
                action_nvec=nvec,
                action_start=np.asarray(action_space.start, dtype=np.int64).ravel(),
                action_shape=tuple(action_space.shape),
                action_dtype=str(action_space.dtype),
            )
        else:
            raise UnsupportedSpaceError(
                f"action space {one_line(action_space)} is not supported: brains act in "
                "Discrete, Box, MultiBinary or MultiDiscrete spaces"
            )
        return cls(**fields)

    def encode(self, observation: Any) -> np.ndarray:
        """Flat float64 input vector for one observation."""
        if self.observation_kind == "discrete":
            vector = np.zeros(self.input_size)
            vector[int(observation) - self.observation_start] = 1.0
            return vector
        return np.asarray(observation, dtype=np.float64).reshape(-1)

    def encode_batch(self, observations: Any) -> np.ndarray:
        """(P, input_size) float64 inputs for a batch of observations."""
        if self.observation_kind == "discrete":
            index = np.asarray(observations, dtype=np.int64).reshape(-1) - self.observation_start
            vectors = np.zeros((index.size, self.input_size))
            vectors[np.arange(index.size), index] = 1.0
            return vectors
        observations = np.asarray(observations, dtype=np.float64)
        return observations.reshape(observations.shape[0], -1)

    def decode(self, outputs: np.ndarray) -> Any:
        """The action for one output vector (values in [-1, 1] for bounded spaces)."""
        kind = self.action_kind
        if kind == "discrete":
            return int(outputs.argmax()) + int(self.action_start[0])
        if kind == "box":
            if self.bounded:
                outputs = self.action_low + (outputs + 1.0) * 0.5 * (
                    self.action_high - self.action_low
                )
            return outputs.astype(self.action_dtype).reshape(self.action_shape)
        if kind == "multibinary":
            return (outputs > 0).astype(self.action_dtype).reshape(self.action_shape)
        return self.decode_batch(outputs[None, :])[0]

    def decode_batch(self, outputs: np.ndarray) -> np.ndarray:
        """Actions for a (P, output_size) batch of outputs, stacked along the first axis."""
        kind = self.action_kind
        count = outputs.shape[0]
        if kind == "discrete":
            return (outputs.argmax(axis=1) + self.action_start[0]).astype(self.action_dtype)
        if kind == "box":
            if self.bounded:
                outputs = self.action_low + (outputs + 1.0) * 0.5 * (
                    self.action_high - self.action_low
                )
            return outputs.astype(self.action_dtype).reshape((count, *self.action_shape))
        if kind == "multibinary":
            return (outputs > 0).astype(self.action_dtype).reshape((count, *self.action_shape))
        actions = np.empty((count, self.action_nvec.size), dtype=np.int64)
        offset = 0
        for i, n in enumerate(self.action_nvec):
            actions[:, i] = outputs[:, offset : offset + n].argmax(axis=1) + self.action_start[i]
            offset += n
        return actions.astype(self.action_dtype).reshape((count, *self.action_shape))


class FeatureSpace(gym.spaces.Box):
    """What an intermediate part of a composed brain outputs: ``size`` unbounded float64 values,
    handed raw to the next part (an unbounded Box decodes without any action scaling)."""

    def __init__(self, size: int):
        super().__init__(-np.inf, np.inf, (int(size),), dtype=np.float64)
