"""Function measures the package ships (``source: function``, ``function: module:name``), each
a function of one episode's :class:`~neuro_evolution.measures.base.TrajectorySummary`.

- :func:`lunar_lander_fuel`: ``neuro_evolution.measures.functions:lunar_lander_fuel``, the fuel
  LunarLander-v3 burnt: index 0 the fuel cost the env subtracts from the reward (0.30 per
  main-engine frame at full power, 0.03 per side-engine frame, the throttle in between for
  the continuous env; Gymnasium's ``lunar_lander.py``), 1 the main-engine frames, 2 the
  side-engine frames.
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.measures.base import TrajectorySummary

MAIN_ENGINE_COST = 0.30  # reward -= m_power * 0.30 (gymnasium/envs/box2d/lunar_lander.py)
SIDE_ENGINE_COST = 0.03  # reward -= s_power * 0.03


def lunar_lander_powers(actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(main, side) engine power of each step, as LunarLander-v3's ``step`` sets them: the
    discrete env fires the main engine on action 2, a side engine on 1 or 3 (power 1); the
    continuous one the main engine when action[0] > 0 (power 0.5..1), a side engine when
    |action[1]| > 0.5 (power 0.5..1)."""
    actions = np.asarray(actions, dtype=np.float64).reshape(len(actions), -1)
    if actions.shape[1] == 1:
        main = (actions[:, 0] == 2).astype(np.float64)
        side = np.isin(actions[:, 0], (1, 3)).astype(np.float64)
        return main, side
    throttle, lateral = actions[:, 0], np.abs(actions[:, 1])
    main = np.where(throttle > 0.0, (np.clip(throttle, 0.0, 1.0) + 1.0) * 0.5, 0.0)
    side = np.where(lateral > 0.5, np.clip(lateral, 0.5, 1.0), 0.0)
    return main, side


def lunar_lander_fuel(summary: TrajectorySummary) -> np.ndarray:
    """[fuel cost, main-engine frames, side-engine frames] of one LunarLander-v3 episode."""
    main, side = lunar_lander_powers(summary.actions)
    fuel = MAIN_ENGINE_COST * main.sum() + SIDE_ENGINE_COST * side.sum()
    return np.array([fuel, np.count_nonzero(main), np.count_nonzero(side)], dtype=np.float64)
