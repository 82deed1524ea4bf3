"""Novelty search's behaviour as a recorder: samples of one source every ``interval`` steps.

A behaviour is sampled every ``interval`` steps of each episode, from its first, from
``source``: the action (sampled as the brain answers it), the observation the env answered, or
``env.unwrapped.state`` before the env steps; over the evaluation's episodes in order, capped at
``max_length`` samples, and stored as a fixed-size float vector: the samples zero-padded to the
cap, so an early ending is part of the behaviour. The lockstep and JAX loops keep each episode's
own samples and join an individual's episodes in order (:func:`join_episode_samples`); ``state``
needs the env object, which only the scalar loop has.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np

from neuro_evolution.core.schema import ConfigError
from neuro_evolution.measures.recorder import (
    EpisodeRecording,
    EpisodeShapes,
    JaxRecording,
    LaneRecording,
    Recorder,
)
from neuro_evolution.measures.samples import join_episode_samples

BehaviorSource = Literal["action", "observation", "state"]


class BehaviorSamples(EpisodeRecording):
    """The scalar loop's behaviour of one evaluation (samples in step order over its episodes)."""

    __slots__ = ("behavior", "samples", "countdown", "env")

    def __init__(self, behavior: Behavior, env: Any):
        self.behavior = behavior
        self.samples: list[np.ndarray] = []
        self.countdown = 0
        self.env = env

    @property
    def full(self) -> bool:
        """Whether the length cap is reached."""
        return len(self.samples) >= self.behavior.max_length

    def start_episode(self) -> None:
        self.countdown = 0  # the first step of every episode is sampled

    def act(self, observation: Any, action: Any, brain: Any) -> None:
        if self.behavior.source != "observation":
            self.offer(action)

    def step(self, action: Any, observation: Any, reward: Any, info: Any) -> None:
        if self.behavior.source == "observation":
            self.offer(observation)

    def offer(self, value: Any) -> None:
        """Offer one step's ``value`` (the action or observation; the env's state is read here);
        sampled every ``interval`` steps until the cap."""
        if self.countdown == 0 and not self.full:
            if self.behavior.source == "state":
                value = self.env.unwrapped.state
            self.samples.append(np.array(value, dtype=np.float64).reshape(-1))
        self.countdown = (self.countdown + 1) % self.behavior.interval

    def value(self) -> np.ndarray:
        """The behaviour as a fixed-size vector (samples zero-padded to the cap)."""
        if not self.samples:
            return np.zeros(0)
        width = self.samples[0].size
        padded = np.zeros((self.behavior.max_length, width))
        padded[: len(self.samples)] = np.stack(self.samples)
        return padded.reshape(-1)


class _LaneSamples(LaneRecording):
    def __init__(self, behavior: Behavior, count: int, width: int):
        self.behavior = behavior
        self.samples = np.zeros((count, behavior.max_length, width))
        self.steps = np.zeros(count, dtype=np.int64)

    def _take(self, values: np.ndarray, stepping: np.ndarray) -> None:
        interval, cap = self.behavior.interval, self.behavior.max_length
        index = self.steps // interval
        rows = np.flatnonzero(stepping & (self.steps % interval == 0) & (index < cap))
        if len(rows):
            flat = np.asarray(values, dtype=np.float64).reshape(len(stepping), -1)
            self.samples[rows, index[rows]] = flat[rows]

    def act(self, observations: np.ndarray, actions: np.ndarray, stepping: np.ndarray) -> None:
        if self.behavior.source == "action":
            self._take(actions, stepping)

    def step(
        self,
        actions: np.ndarray,
        observations: np.ndarray,
        rewards: np.ndarray,
        stepping: np.ndarray,
    ) -> None:
        if self.behavior.source == "observation":
            self._take(observations, stepping)
        self.steps += stepping

    def values(self, steps: np.ndarray) -> np.ndarray:
        return self.samples


@dataclasses.dataclass(frozen=True)
class Behavior(Recorder):
    """The behaviour novelty search compares (see the module docstring)."""

    source: BehaviorSource = "observation"
    interval: int = 1
    max_length: int = 100

    name = "behavior"
    path = "novelty.behavior_source"

    def width(self, shapes: EpisodeShapes) -> int:
        """Values per sample."""
        return shapes.action_size if self.source == "action" else shapes.observation_size

    def scalar(self, env: Any, shapes: EpisodeShapes) -> EpisodeRecording:
        return BehaviorSamples(self, env)

    def lanes(self, count: int, shapes: EpisodeShapes) -> LaneRecording:
        if self.source == "state":
            raise self.refusal("lanes", "env.unwrapped.state needs the env object")
        return _LaneSamples(self, count, self.width(shapes))

    def join(self, episodes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return join_episode_samples(episodes, steps, self.interval)

    def jax_form(self, shapes: EpisodeShapes) -> JaxRecording:
        if self.source == "state":
            raise ConfigError(
                self.path,
                "the JAX path records the action or the observation, not env.unwrapped.state "
                f"(recorder {self.name!r}: {type(self).__name__}.jax_form()); use action or "
                "observation, or another evaluation handler",
            )
        from neuro_evolution.measures.jax_forms import JaxBehavior

        return JaxBehavior(self.interval, self.max_length, self.source, self.width(shapes))
