"""The double-pole task: start states, episode rules and returns, for N carts at once.

Training episodes (reset seeds < 2**32, every training seed of a run) start from the standard
state of the literature: the long pole at 4.0 degrees, everything else 0 (Gomez et al. 2008,
Sec. 5.3; NEAT's and Shark's code use 0.07 rad). The seed does not change it: the published
evaluation counts are for this one start state, and generalization is what validation measures.
With ``training_starts="random"`` each training seed starts from its own state instead, drawn
from ``default_rng(seed)`` uniformly within the generalization grid's ranges (x, x', theta_1,
theta_1'; the short pole upright and still).
Their return is

- ``fitness="standard"``: 1 for every step after which both poles are up and the cart on the
  track, i.e. the number of balanced steps t;
- ``fitness="damping"`` (Gruau, Whitley & Pyeatt 1996, as given by Gomez et al. 2008, Sec.
  5.5.2): ``0.1 f1 + 0.9 f2``, ``f1 = t / max_steps``, ``f2 = 0`` for t < 100, else ``0.75 /``
  the sum over the last 100 balanced states of ``|x| + |x'| + |theta_1| + |theta_1'|``, paid as
  the reward of the episode's last step (the window is 100 states, as in NEAT's and Shark's code).

Validation episodes (reset seeds >= 2**32, see ``support/seeds.py``) are the tests that define
"solved"; their return is paid at their last step:

- ``validation="generalization"`` (Gruau et al. 1996; Stanley & Miikkulainen 2002): start state
  ``seed % 625`` of the grid of x, x', theta_1, theta_1' each at 0.05, 0.25, 0.5, 0.75, 0.95 of
  the ranges +-2.16 m, +-1.35 m/s, +-3.6 deg, +-8.6 deg/s (theta_2 = theta_2' = 0); return 1.0 if
  balanced for 1000 steps, else 0.0. With 625 validation episodes (consecutive seeds) every grid
  state is run once, the mean is the fraction balanced, and 200 of 625 is a mean of 0.32;
- ``validation="long"`` (Gomez et al. 2008's criterion): the standard start, ``long_steps``
  (100,000) steps; return the fraction of them balanced, 1.0 when solved.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import numpy as np

from neuro_evolution.envs import double_pole_physics as physics
from neuro_evolution.support.seeds import TRAINING_SEED_LIMIT

START_ANGLE = math.radians(4.0)  # the long pole's angle in the standard start state
GRID_FRACTIONS = (0.05, 0.25, 0.5, 0.75, 0.95)
GRID_HALF_RANGES = (2.16, 1.35, math.radians(3.6), math.radians(8.6))  # x, x', theta_1, theta_1'
GRID_SIZE = len(GRID_FRACTIONS) ** len(GRID_HALF_RANGES)  # 625
GENERALIZATION_STEPS = 1000
DAMPING_WINDOW = 100

# Episode kinds, kept per cart (a float in the reset state the native vector env is handed).
TRAINING, GENERALIZATION, LONG = 0, 1, 2


@dataclasses.dataclass(frozen=True)
class DoublePoleTask:
    """The options of a double-pole env (its constructor keyword arguments)."""

    markov: bool = False  # observe all six state variables, else x, theta_1, theta_2
    fitness: Literal["standard", "damping"] = "damping"
    max_steps: int = 1000  # training episode length
    validation: Literal["generalization", "long"] = "generalization"
    long_steps: int = 100_000
    min_force: float = physics.MIN_FORCE
    training_starts: Literal["standard", "random"] = "standard"

    def __post_init__(self) -> None:
        if self.fitness not in ("standard", "damping"):
            raise ValueError(f"fitness: {self.fitness!r} is unknown: use standard or damping")
        if self.validation not in ("generalization", "long"):
            raise ValueError(
                f"validation: {self.validation!r} is unknown: use generalization or long"
            )
        for name in ("max_steps", "long_steps"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name}: must be a positive integer, got {getattr(self, name)!r}")
        if self.training_starts not in ("standard", "random"):
            raise ValueError(
                f"training_starts: {self.training_starts!r} is unknown: use standard or random"
            )
        if not 0.0 <= self.min_force <= physics.FORCE_MAGNITUDE:
            raise ValueError(f"min_force: must be in [0, 10] N, got {self.min_force!r}")

    @property
    def observation_rows(self) -> tuple[int, ...]:
        """State rows the controller sees."""
        return tuple(range(physics.STATE_SIZE)) if self.markov else (0, 2, 4)

    def episode_kind(self, seed: int | None) -> int:
        """TRAINING for seeds below 2**32 (and None), else the validation test."""
        if seed is None or seed < TRAINING_SEED_LIMIT:
            return TRAINING
        return GENERALIZATION if self.validation == "generalization" else LONG

    def start_state(self, seed: int | None) -> np.ndarray:
        """The (6,) start state of an episode reset with ``seed``."""
        if self.episode_kind(seed) == GENERALIZATION:
            assert seed is not None  # a generalization episode has a seed >= 2**32
            return generalization_state(int(seed) % GRID_SIZE)
        state = np.zeros(physics.STATE_SIZE)
        if self.training_starts == "random" and self.episode_kind(seed) == TRAINING:
            # uniform over the generalization ranges, drawn from the episode seed alone
            draw = np.random.default_rng(0 if seed is None else int(seed)).uniform(-1.0, 1.0, 4)
            state[:4] = draw * np.array(GRID_HALF_RANGES)
            return state
        state[2] = START_ANGLE
        return state

    def lengths(self, kinds: np.ndarray) -> np.ndarray:
        """Episode length in steps of each episode kind."""
        table = np.array([self.max_steps, GENERALIZATION_STEPS, self.long_steps], dtype=np.int64)
        return table[kinds]


def generalization_state(index: int) -> np.ndarray:
    """Start state ``index`` (0..624) of the generalization grid; x varies slowest."""
    state = np.zeros(physics.STATE_SIZE)
    base = len(GRID_FRACTIONS)
    for row, half_range, power in zip((0, 1, 2, 3), GRID_HALF_RANGES, (3, 2, 1, 0), strict=True):
        fraction = GRID_FRACTIONS[(index // base**power) % base]
        state[row] = fraction * 2.0 * half_range - half_range
    return state


def damping_fitness(balanced: int, window_total: float, max_steps: int) -> float:
    """Gruau et al.'s 0.1 f1 + 0.9 f2 of an episode with ``balanced`` balanced steps."""
    f1 = balanced / max_steps
    f2 = 0.0 if balanced < DAMPING_WINDOW else 0.75 / window_total
    return 0.1 * f1 + 0.9 * f2


class Carts:
    """N carts stepped in lockstep under one task: physics, step counts, returns.

    The single env is one of these with N = 1, the vector env one with N = num_envs, so both
    compute every number with the same operations. A cart whose episode has ended is frozen
    (not stepped) until it is loaded again.
    """

    def __init__(self, task: DoublePoleTask, count: int):
        self.task = task
        self.count = count
        self.state = np.zeros((physics.STATE_SIZE, count))
        self.kind = np.zeros(count, dtype=np.int64)
        self.steps = np.zeros(count, dtype=np.int64)
        self.balanced = np.zeros(count, dtype=np.int64)
        self.done = np.zeros(count, dtype=bool)
        self.window = np.zeros((DAMPING_WINDOW, count))  # jiggle of the last balanced states
        self._length = np.zeros(count, dtype=np.int64)
        self._lanes = np.arange(count)
        self._observed = list(task.observation_rows)

    def load(self, states: np.ndarray, kinds: np.ndarray) -> None:
        """Start a new episode on every cart: (6, N) start states and (N,) episode kinds."""
        self.state = np.array(states, dtype=np.float64).reshape(physics.STATE_SIZE, self.count)
        self.kind = np.asarray(kinds, dtype=np.int64).reshape(self.count)
        self._length = self.task.lengths(self.kind)
        self.steps[:] = 0
        self.balanced[:] = 0
        self.done[:] = False
        self.window[:] = 0.0

    def observations(self) -> np.ndarray:
        """(N, observed) what each controller sees (a copy)."""
        return self.state[self._observed].T.copy()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply (N,) actions in [-1, 1] to the carts still running: (rewards, terminated,
        truncated), all zero/False for carts that had already ended."""
        if self.count == 1:
            return self._step_one(float(np.asarray(actions, dtype=np.float64).reshape(-1)[0]))
        rewards = np.zeros(self.count)
        terminated = np.zeros(self.count, dtype=bool)
        truncated = np.zeros(self.count, dtype=bool)
        running = ~self.done
        if not running.any():
            return rewards, terminated, truncated
        lanes = self._lanes if running.all() else self._lanes[running]
        values = np.asarray(actions, dtype=np.float64)[lanes]
        force = physics.action_force(values, self.task.min_force)
        state = physics.advance(self.state[:, lanes], force)
        self.state[:, lanes] = state
        fell = physics.failed(state)
        self.steps[lanes] += 1
        up = lanes[~fell]
        self.balanced[up] += 1
        self.window[(self.balanced[up] - 1) % DAMPING_WINDOW, up] = (
            np.abs(self.state[0, up])
            + np.abs(self.state[1, up])
            + np.abs(self.state[2, up])
            + np.abs(self.state[3, up])
        )
        terminated[lanes] = fell
        truncated[lanes] = ~fell & (self.steps[lanes] >= self._length[lanes])
        ended = terminated | truncated
        self.done |= ended
        if self.task.fitness == "standard":
            rewards[up] = np.where(self.kind[up] == TRAINING, 1.0, 0.0)
        for lane in np.flatnonzero(ended).tolist():
            rewards[lane] += self._final_reward(lane)
        return rewards, terminated, truncated

    def _step_one(self, action: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`step` of one cart in Python floats: the same numbers, a fifth of the time."""
        rewards = np.zeros(1)
        if self.done[0]:
            return rewards, np.zeros(1, dtype=bool), np.zeros(1, dtype=bool)
        rows = physics.advance_one(
            self.state[:, 0].tolist(), physics.action_force_one(action, self.task.min_force)
        )
        self.state[:, 0] = rows
        fell = physics.failed_one(rows)
        steps = int(self.steps[0]) + 1
        self.steps[0] = steps
        reward = 0.0
        if not fell:
            balanced = int(self.balanced[0]) + 1
            self.balanced[0] = balanced
            x, x_dot, theta_1, theta_1_dot = rows[:4]
            jiggle = abs(x) + abs(x_dot) + abs(theta_1) + abs(theta_1_dot)
            self.window[(balanced - 1) % DAMPING_WINDOW, 0] = jiggle
            if self.task.fitness == "standard" and self.kind[0] == TRAINING:
                reward = 1.0
        truncated = not fell and steps >= self._length[0]
        if fell or truncated:
            self.done[0] = True
            reward += self._final_reward(0)
        rewards[0] = reward
        return rewards, np.array([fell]), np.array([truncated])

    def _final_reward(self, lane: int) -> float:
        """What an episode pays at its last step, besides the per-step reward."""
        balanced = int(self.balanced[lane])
        kind = int(self.kind[lane])
        if kind == GENERALIZATION:
            return 1.0 if balanced == GENERALIZATION_STEPS else 0.0
        if kind == LONG:
            return balanced / self.task.long_steps
        if self.task.fitness != "damping":
            return 0.0
        total = 0.0  # the last 100 balanced states, oldest first
        for step in range(max(balanced - DAMPING_WINDOW, 0), balanced):
            total += float(self.window[step % DAMPING_WINDOW, lane])
        return damping_fitness(balanced, total, self.task.max_steps)
