"""DoublePoleEnv: double-pole balancing as a Gymnasium env (physics, task: see the sibling modules).

Observation: (x, x', theta_1, theta_1', theta_2, theta_2') in m, m/s, rad, rad/s with
``markov=True``, else (x, theta_1, theta_2); unscaled (the Box bounds, twice the failure limits,
let a brain's ``normalize_input`` scale positions and angles). Action: one float in [-1, 1]
(clipped), the force 10 N times the action, at least ``min_force`` in magnitude. An episode ends by
termination when the cart leaves +-2.4 m or a pole passes +-36 degrees, and by truncation after
its length (``max_steps`` for training, 1000 or ``long_steps`` for validation): the env keeps its
own time, so leave ``episode_runner.max_steps_per_run`` at 0 -- a cut episode never reaches the
step that pays its return.
"""

from __future__ import annotations

from typing import Any, Literal

import gymnasium as gym
import numpy as np

from neuro_evolution.envs import double_pole_physics as physics
from neuro_evolution.envs.double_pole_task import Carts, DoublePoleTask

# Observation bounds: twice the failure limits for x and the angles (as CartPole's), so even the
# failing state lies inside; unbounded velocities. A brain's ``normalize_input`` then scales
# x by 1/4.8 and the angles by 1/1.26 (NEAT's code: 1/4.8 and 1/0.52).
STATE_HIGH = np.array(
    [
        2 * physics.TRACK_LIMIT,
        np.inf,
        2 * physics.FAILURE_ANGLE,
        np.inf,
        2 * physics.FAILURE_ANGLE,
        np.inf,
    ]
)


def observation_space(task: DoublePoleTask) -> gym.spaces.Box:
    """The Box of one cart's observation."""
    high = STATE_HIGH[list(task.observation_rows)]
    return gym.spaces.Box(-high, high, dtype=np.float64)


ACTION_SPACE = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float64)


class DoublePoleEnv(gym.Env[np.ndarray, np.ndarray]):
    """One cart with two poles (Wieland 1991; Gomez et al. 2008, Appendix A)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        markov: bool = False,
        fitness: Literal["standard", "damping"] = "damping",
        max_steps: int = 1000,
        validation: Literal["generalization", "long"] = "generalization",
        long_steps: int = 100_000,
        min_force: float = physics.MIN_FORCE,
        training_starts: Literal["standard", "random"] = "standard",
    ):
        self.task = DoublePoleTask(
            markov=markov,
            fitness=fitness,
            max_steps=max_steps,
            validation=validation,
            long_steps=long_steps,
            min_force=min_force,
            training_starts=training_starts,
        )
        self.observation_space = observation_space(self.task)
        self.action_space = ACTION_SPACE
        self.carts = Carts(self.task, 1)
        self._started = False

    @property
    def state(self) -> np.ndarray:
        """The cart's (6,) physical state (a copy)."""
        return self.carts.state[:, 0].copy()

    @property
    def episode_kind(self) -> int:
        """TRAINING, GENERALIZATION or LONG (see double_pole_task)."""
        return int(self.carts.kind[0])

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; its kind and start state follow from ``seed`` alone."""
        super().reset(seed=seed)
        kind = self.task.episode_kind(seed)
        self.carts.load(self.task.start_state(seed)[:, None], np.array([kind]))
        self._started = True
        return self.carts.observations()[0], {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("DoublePoleEnv.step() before reset()")
        if self.carts.done[0]:
            raise RuntimeError("DoublePoleEnv.step() after the episode ended: reset() first")
        value = np.asarray(action, dtype=np.float64).reshape(-1)
        rewards, terminated, truncated = self.carts.step(value[:1])
        return (
            self.carts.observations()[0],
            float(rewards[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            {},
        )
