"""A user's recorder: how often an evaluation took each discrete action, in all three loops.

``ActionCounts(actions=2)`` in ``RunnerSpec(extra_recorders=...)`` puts a vector of counts (one
per action, summed over the evaluation's episodes) into ``EvaluationResult.records
["action_counts"]`` on every handler: the scalar form counts each step's action, the lockstep
form each stepping lane's, the JAX form each active lane's, written to its task when the
episode ends. Counts are whole numbers, so every loop gives the same bits.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from neuro_evolution.measures.recorder import (
    EpisodeRecording,
    EpisodeShapes,
    JaxRecording,
    JaxStep,
    LaneRecording,
    Recorder,
)


class Counts(EpisodeRecording):
    """Scalar loop: one evaluation's counts."""

    def __init__(self, actions: int):
        self.counts = np.zeros(actions)

    def act(self, observation: Any, action: Any, brain: Any) -> None:
        self.counts[int(action)] += 1

    def value(self) -> np.ndarray:
        return self.counts


class LaneCounts(LaneRecording):
    """Lockstep loop: each lane's counts of its episode."""

    def __init__(self, lanes: int, actions: int):
        self.counts = np.zeros((lanes, actions))

    def act(self, observations: np.ndarray, actions: np.ndarray, stepping: np.ndarray) -> None:
        rows = np.flatnonzero(stepping)
        self.counts[rows, np.asarray(actions, dtype=np.int64).reshape(-1)[rows]] += 1

    def values(self, steps: np.ndarray) -> np.ndarray:
        return self.counts


class JaxCounts(JaxRecording):
    """JAX program: each lane's counts, written into its task's row when the episode ends."""

    def __init__(self, actions: int):
        self.actions = actions

    def init(self, lanes: int, tasks: int, dtype: Any) -> Any:
        import jax.numpy as jnp

        return jnp.zeros((lanes, self.actions), dtype), jnp.zeros((tasks, self.actions), dtype)

    def step(self, state: Any, view: JaxStep) -> Any:
        import jax

        lane, task = state
        taken = jax.nn.one_hot(view.actions.reshape(-1), self.actions, dtype=lane.dtype)
        return lane + taken * view.active[:, None], task

    def end(self, state: Any, done: Any, slot: Any) -> Any:
        import jax.numpy as jnp

        lane, task = state
        return jnp.where(done[:, None], 0, lane), task.at[slot].set(lane, mode="drop")

    def output(self, state: Any, runs: int, count: int) -> Any:
        return state[1].reshape(runs, count, self.actions)

    def finish(self, output: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return output.astype(np.float64).sum(axis=0)


@dataclasses.dataclass(frozen=True)
class ActionCounts(Recorder):
    """Counts of each of ``actions`` discrete actions over an evaluation's episodes."""

    actions: int = 2

    name = "action_counts"

    def scalar(self, env: Any, shapes: EpisodeShapes) -> EpisodeRecording:
        return Counts(self.actions)

    def lanes(self, count: int, shapes: EpisodeShapes) -> LaneRecording:
        return LaneCounts(count, self.actions)

    def join(self, episodes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return episodes.sum(axis=0)

    def jax_form(self, shapes: EpisodeShapes) -> JaxRecording:
        return JaxCounts(self.actions)
