"""The JAX forms of the recorders that have one (imported only by their ``jax_form``): pure
functions of the carried state and one step's outputs inside the compiled generation program
(:mod:`neuro_evolution.evaluation.jax.program`), in the program's dtype."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from neuro_evolution.measures.recorder import JaxRecording, JaxStep
from neuro_evolution.measures.samples import join_episode_samples


class JaxObservationStats(JaxRecording):
    """Per lane the running [count, sum, squares] of its episode's observations (weighted by the
    lane's mask), written into the task's row when the episode ends; an individual's sum over
    its episodes k = 0 .. R-1 is taken in the program."""

    def __init__(self, size: int):
        self.width = 1 + 2 * size

    def init(self, lanes: int, tasks: int, dtype: Any) -> Any:
        return (jnp.zeros((lanes, self.width), dtype=dtype), jnp.zeros((tasks, self.width), dtype))

    def step(self, state: Any, view: JaxStep) -> Any:
        lane, task = state
        raw = view.observations
        weight = view.active[:, None].astype(raw.dtype)
        lane = lane + jnp.concatenate([weight, raw * weight, raw * raw * weight], axis=1)
        return lane, task

    def end(self, state: Any, done: Any, slot: Any) -> Any:
        lane, task = state
        task = task.at[slot].set(lane, mode="drop")
        return jnp.where(done[:, None], 0, lane).astype(lane.dtype), task

    def output(self, state: Any, runs: int, count: int) -> Any:
        per_run = state[1].reshape(runs, count, self.width)
        total = per_run[0]
        for k in range(1, runs):
            total = total + per_run[k]
        return total

    def finish(self, output: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return output.astype(np.float64)


class JaxBehavior(JaxRecording):
    """A step's sample goes to row ``task * S + index`` of the task rows (S the cap, index the
    step's sample number in its episode); the host joins an individual's episodes in order."""

    def __init__(self, interval: int, max_length: int, source: str, width: int):
        self.interval, self.max_length = interval, max_length
        self.source, self.width = source, width

    def init(self, lanes: int, tasks: int, dtype: Any) -> Any:
        return jnp.zeros((tasks * self.max_length, self.width), dtype=dtype)

    def step(self, state: Any, view: JaxStep) -> Any:
        interval, cap = self.interval, self.max_length
        index = view.steps // interval
        taken = view.active & (view.steps % interval == 0) & (index < cap)
        row = jnp.where(taken, view.task * cap + index, view.tasks * cap)
        source = view.actions if self.source == "action" else view.next_observations
        value = source.reshape(source.shape[0], -1)
        return state.at[row].set(value.astype(state.dtype), mode="drop")

    def output(self, state: Any, runs: int, count: int) -> Any:
        return state.reshape(runs, count, self.max_length, self.width)

    def finish(self, output: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return join_episode_samples(output, steps, self.interval)
