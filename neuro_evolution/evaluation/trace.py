"""A step-by-step record of one episode: what the brain saw, did, got, and carried.

Row t of every array belongs to step t: the observation the env showed (raw, before any
observation scaler), the action the brain answered with, the reward the env gave for it, and the
brain's internal state right after that step (:meth:`Brain.internal_state`). ``replay
--brain-state DIR`` writes these arrays (npz, no pickle) and a picture of them.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import numpy as np

from neuro_evolution.brains.base import Brain

# array names of the npz; a brain's own state arrays are stored as "state.<name>"
OBSERVATIONS, ACTIONS, REWARDS, STATE_PREFIX = "observations", "actions", "rewards", "state."


class EpisodeTrace:
    """Collects one episode's steps; :meth:`arrays` stacks them, row t = step t."""

    def __init__(self) -> None:
        self.observations: list[np.ndarray] = []
        self.actions: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.states: dict[str, list[np.ndarray]] = {}

    def step(self, observation: Any, action: Any, brain: Brain) -> None:
        """Record the observation shown, the action answered and the brain's state after it."""
        self.observations.append(np.array(observation, dtype=np.float64))
        self.actions.append(np.array(action, dtype=np.float64))
        state = brain.internal_state()
        if not self.states:
            self.states = {name: [] for name in state}
        for name, value in state.items():
            self.states[name].append(value)

    def reward(self, reward: SupportsFloat) -> None:
        """Record the reward of the step just recorded."""
        self.rewards.append(float(reward))

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
