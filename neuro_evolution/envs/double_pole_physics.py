"""Equations of motion of the double pole on a cart (Wieland 1991), integrated with RK4.

Source: Gomez, Schmidhuber & Miikkulainen (2008), "Accelerated neural evolution through
cooperatively coevolved synapses", JMLR 9:937-965, Appendix A (equations, parameter table) and
Sec. 5.3 (fourth-order Runge-Kutta with a step size of 0.01 s; the controller acts every 0.02 s;
|F| >= 10/256 N). For N unjointed poles on one cart::

    x''       = (F - mu_c sgn(x') + sum_i Ft_i) / (M + sum_i mt_i)
    theta_i'' = -3 / (4 l_i) * (x'' cos theta_i + g sin theta_i + mu_p theta_i' / (m_i l_i))
    Ft_i      = m_i l_i theta_i'^2 sin theta_i
                + 3/4 m_i cos theta_i (mu_p theta_i' / (m_i l_i) + g sin theta_i)
    mt_i      = m_i (1 - 3/4 cos^2 theta_i)

with g = -9.8 m/s^2 (the sign these equations take), M = 1 kg, m = (0.1, 0.01) kg, half-lengths
l = (0.5, 0.05) m, mu_c = 0.0005, mu_p = 0.000002. The same constants, g = -9.8 and two RK4 steps
of 0.01 s per action are in the public implementations read for this module: Stanley's NEAT C++
``experiments.cpp`` (physics by F. Gomez; it leaves out the cart friction mu_c) and Shark's
``PoleSimulators/DoublePole.h`` (Heidrich-Meisner & Igel; mu_c included, as here).

A state is a (6, N) array, one column per cart, rows (x, x', theta_1, theta_1', theta_2,
theta_2'). The equations are written once and run on floats for one cart (the single env) or on
(N,) arrays (the vector env): the same IEEE operations in the same order, so the two agree bit
for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

GRAVITY = -9.8  # m/s^2
CART_MASS = 1.0  # kg
POLE_MASSES = (0.1, 0.01)  # kg
POLE_HALF_LENGTHS = (0.5, 0.05)  # m
CART_FRICTION = 0.0005  # mu_c, cart on track
HINGE_FRICTION = 0.000002  # mu_p, each pole's hinge
FORCE_MAGNITUDE = 10.0  # N: an action of +-1
MIN_FORCE = FORCE_MAGNITUDE / 256  # N: the smallest |F| (Gomez et al. 2008, Sec. 5.3)
TAU = 0.01  # s: one RK4 step
STEPS_PER_ACTION = 2  # RK4 steps per action: the controller acts every 0.02 s
TRACK_LIMIT = 2.4  # m: failure beyond |x| > 2.4
FAILURE_ANGLE = math.radians(36.0)  # failure beyond |theta_i| > 36 deg
STATE_SIZE = 6


Trig = Callable[[Any, Any], tuple[Any, Any, Any, Any]]


def array_trig(theta_1: np.ndarray, theta_2: np.ndarray) -> tuple[Any, Any, Any, Any]:
    """(sin theta_1, sin theta_2, cos theta_1, cos theta_2) of (N,) arrays."""
    return np.sin(theta_1), np.sin(theta_2), np.cos(theta_1), np.cos(theta_2)


def float_trig(theta_1: float, theta_2: float) -> tuple[Any, Any, Any, Any]:
    """The same for one cart's floats, by the same numpy ufuncs (math.sin may differ in the
    last bit from np.sin, and the vector env must match the single env bit for bit)."""
    angles = np.array((theta_1, theta_2))
    sin_1, sin_2 = np.sin(angles).tolist()
    cos_1, cos_2 = np.cos(angles).tolist()
    return sin_1, sin_2, cos_1, cos_2


def array_sign(value: np.ndarray) -> np.ndarray:
    return np.sign(value)


def float_sign(value: float) -> float:
    return 1.0 if value > 0.0 else (-1.0 if value < 0.0 else 0.0)


def derivatives(state: Sequence[Any], force: Any, trig: Trig, sign: Callable) -> list[Any]:
    """d(state)/dt under a constant ``force`` (Appendix A's equations).

    One source for both kinds of numbers: ``state`` holds six (N,) arrays (with
    :func:`array_trig`, :func:`array_sign`) or six floats of one cart (:func:`float_trig`,
    :func:`float_sign`); each IEEE operation runs in the same order either way, so the results
    agree bit for bit.
    """
    _, x_dot, theta_1, theta_1_dot, theta_2, theta_2_dot = state
    sin_1, sin_2, cos_1, cos_2 = trig(theta_1, theta_2)
    (m_1, m_2), (l_1, l_2) = POLE_MASSES, POLE_HALF_LENGTHS
    hinge_1 = HINGE_FRICTION * theta_1_dot / (m_1 * l_1)
    hinge_2 = HINGE_FRICTION * theta_2_dot / (m_2 * l_2)
    effective_force_1 = m_1 * l_1 * theta_1_dot * theta_1_dot * sin_1 + 0.75 * m_1 * cos_1 * (
        hinge_1 + GRAVITY * sin_1
    )
    effective_force_2 = m_2 * l_2 * theta_2_dot * theta_2_dot * sin_2 + 0.75 * m_2 * cos_2 * (
        hinge_2 + GRAVITY * sin_2
    )
    effective_mass_1 = m_1 * (1.0 - 0.75 * cos_1 * cos_1)
    effective_mass_2 = m_2 * (1.0 - 0.75 * cos_2 * cos_2)
    x_acc = (force - CART_FRICTION * sign(x_dot) + effective_force_1 + effective_force_2) / (
        CART_MASS + effective_mass_1 + effective_mass_2
    )
    theta_1_acc = -0.75 * (x_acc * cos_1 + GRAVITY * sin_1 + hinge_1) / l_1
    theta_2_acc = -0.75 * (x_acc * cos_2 + GRAVITY * sin_2 + hinge_2) / l_2
    return [x_dot, x_acc, theta_1_dot, theta_1_acc, theta_2_dot, theta_2_acc]


def rk4_step(state: Sequence[Any], force: Any, trig: Trig, sign: Callable) -> list[Any]:
    """One classical fourth-order Runge-Kutta step of ``TAU`` seconds."""
    half = 0.5 * TAU
    k1 = derivatives(state, force, trig, sign)
    k2 = derivatives([s + half * k for s, k in zip(state, k1, strict=True)], force, trig, sign)
    k3 = derivatives([s + half * k for s, k in zip(state, k2, strict=True)], force, trig, sign)
    k4 = derivatives([s + TAU * k for s, k in zip(state, k3, strict=True)], force, trig, sign)
    sixth = TAU / 6.0
    return [
        s + sixth * (a + 2.0 * b + 2.0 * c + d)
        for s, a, b, c, d in zip(state, k1, k2, k3, k4, strict=True)
    ]


def advance(state: np.ndarray, force: np.ndarray) -> np.ndarray:
    """(6, N) states one action later: ``STEPS_PER_ACTION`` RK4 steps with the (N,) force held.
    One cart runs on floats (many times faster than numpy on arrays of one)."""
    if state.shape[1] == 1:
        return np.array(advance_one(state[:, 0].tolist(), float(force[0])))[:, None]
    rows = list(state)
    for _ in range(STEPS_PER_ACTION):
        rows = rk4_step(rows, force, array_trig, array_sign)
    return np.stack(rows)


def advance_one(state: list[float], force: float) -> list[float]:
    """:func:`advance` of one cart's six floats."""
    for _ in range(STEPS_PER_ACTION):
        state = rk4_step(state, force, float_trig, float_sign)
    return state


def action_force(action: np.ndarray, min_force: float) -> np.ndarray:
    """Force (N) of actions in [-1, 1] (clipped): 10 N times the action, but never smaller in
    magnitude than ``min_force`` (an action of exactly 0 pushes right)."""
    force = FORCE_MAGNITUDE * np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
    small = np.abs(force) < min_force
    return np.where(small, np.where(force < 0.0, -min_force, min_force), force)


def failed(state: np.ndarray) -> np.ndarray:
    """(N,) whether the cart has left the track or a pole is beyond 36 degrees."""
    return (
        (np.abs(state[0]) > TRACK_LIMIT)
        | (np.abs(state[2]) > FAILURE_ANGLE)
        | (np.abs(state[4]) > FAILURE_ANGLE)
    )


def action_force_one(action: float, min_force: float) -> float:
    """:func:`action_force` of one float."""
    force = FORCE_MAGNITUDE * min(max(action, -1.0), 1.0)
    if abs(force) < min_force:
        return -min_force if force < 0.0 else min_force
    return force


def failed_one(state: list[float]) -> bool:
    """:func:`failed` of one cart's six floats."""
    return (
        abs(state[0]) > TRACK_LIMIT
        or abs(state[2]) > FAILURE_ANGLE
        or abs(state[4]) > FAILURE_ANGLE
    )
