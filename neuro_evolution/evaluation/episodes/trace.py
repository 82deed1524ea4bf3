"""A step-by-step record of one episode: what the brain saw, did, got, and carried.

Row t of every array belongs to step t: the observation the env showed (raw, before any
observation scaler), the action the brain answered with, the reward the env gave for it, and the
brain's internal state right after that step (:meth:`Brain.internal_state`). ``replay
--brain-state DIR`` writes these arrays (npz, no pickle) and a picture of them.

The trace is a recorder (:mod:`neuro_evolution.measures.recorder`) of the scalar loop only: a
lockstep batch brain and the compiled JAX program keep no per-lane internal-state history, so
:class:`Trace` refuses their forms in one line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from neuro_evolution.brains.base import Brain
from neuro_evolution.measures.recorder import EpisodeRecording, EpisodeShapes, Recorder

# array names of the npz; a brain's own state arrays are stored as "state.<name>"
OBSERVATIONS, ACTIONS, REWARDS, STATE_PREFIX = "observations", "actions", "rewards", "state."


class EpisodeTrace(EpisodeRecording):
    """Collects one episode's steps; :meth:`arrays` stacks them, row t = step t."""

    def __init__(self) -> None:
        self.observations: list[np.ndarray] = []
        self.actions: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.states: dict[str, list[np.ndarray]] = {}

    def act(self, observation: Any, action: Any, brain: Brain) -> None:
        """Record the observation shown, the action answered and the brain's state after it."""
        self.observations.append(np.array(observation, dtype=np.float64))
        self.actions.append(np.array(action, dtype=np.float64))
        state = brain.internal_state()
        if not self.states:
            self.states = {name: [] for name in state}
        for name, value in state.items():
            self.states[name].append(value)

    def step(self, action: Any, observation: Any, reward: Any, info: Mapping[str, Any]) -> None:
        """Record the reward of the step just recorded."""
        self.rewards.append(float(reward))

    def value(self) -> dict[str, np.ndarray]:
        """The episode's :meth:`arrays`."""
        return self.arrays()

    @property
    def has_state(self) -> bool:
        """Whether the brain reported any internal state."""
        return bool(self.states)

    def arrays(self) -> dict[str, np.ndarray]:
        """observations (T, ...), actions (T, ...), rewards (T,), state.<name> (T, ...)."""
        arrays = {
            OBSERVATIONS: np.stack(self.observations),
            ACTIONS: np.stack(self.actions),
            REWARDS: np.array(self.rewards),
        }
        for name, values in self.states.items():
            arrays[STATE_PREFIX + name] = np.stack(values)
        return arrays


@dataclasses.dataclass(frozen=True)
class Trace(Recorder):
    """The step-by-step trace as a recorder (one episode; the scalar loop only)."""

    name = "trace"

    def scalar(self, env: Any, shapes: EpisodeShapes) -> EpisodeRecording:
        return EpisodeTrace()
