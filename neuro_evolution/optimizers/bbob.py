"""Four noiseless BBOB test functions, hand-written, for comparing an optimizer with a reference
implementation on one shared function (scripts/check_*_bbob.py and the reference tests).

Benchmarks do not use them: scripts/bench_coco.py and the BBOB cells of scripts/bench_matrix.py
run COCO's own bbob suite (cocoex, the ``coco`` extra), with COCO's instances and targets. These
follow Hansen, Finck, Ros & Auger (2009), "Real-Parameter Black-Box Optimization Benchmarking 2009:
Noiseless Functions Definitions" (INRIA RR-6829): f1 sphere, f2 separable ellipsoid, f3
separable Rastrigin and f8 Rosenbrock, each with its optimum moved to ``x_opt`` and reported as
f(x) - f_opt (so 0 at the optimum; f_opt is left out). ``x_opt`` is uniform in [-4, 4]^D
([-3, 3]^D for Rosenbrock) from the instance's seed. The functions are minimized; an optimizer
here maximizes, so it is told -f.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Function = Callable[[np.ndarray], np.ndarray]


def t_osz(x: np.ndarray) -> np.ndarray:
    """The oscillation transformation T_osz, element-wise (Sec. 0.2 of the definitions)."""
    magnitude = np.abs(x)
    x_hat = np.where(magnitude > 0, np.log(np.where(magnitude > 0, magnitude, 1.0)), 0.0)
    c1 = np.where(x > 0, 10.0, 5.5)
    c2 = np.where(x > 0, 7.9, 3.1)
    return np.sign(x) * np.exp(x_hat + 0.049 * (np.sin(c1 * x_hat) + np.sin(c2 * x_hat)))


def t_asy(x: np.ndarray, beta: float) -> np.ndarray:
    """The asymmetry transformation T_asy^beta along the last axis."""
    d = x.shape[-1]
    exponent = 1 + beta * np.arange(d) / max(d - 1, 1) * np.sqrt(np.maximum(x, 0.0))
    return np.where(x > 0, np.power(np.maximum(x, 0.0), exponent), x)


def conditioning(d: int, alpha: float) -> np.ndarray:
    """The diagonal of Lambda^alpha: alpha^(0.5 (i - 1) / (D - 1))."""
    return alpha ** (0.5 * np.arange(d) / max(d - 1, 1))


def sphere(z: np.ndarray) -> np.ndarray:
    """f1: ||z||^2."""
    return np.sum(z**2, axis=-1)


def ellipsoid(z: np.ndarray) -> np.ndarray:
    """f2: sum 10^(6 (i - 1) / (D - 1)) T_osz(z)_i^2."""
    d = z.shape[-1]
    return np.sum(10.0 ** (6 * np.arange(d) / max(d - 1, 1)) * t_osz(z) ** 2, axis=-1)


def rastrigin(z: np.ndarray) -> np.ndarray:
    """f3: 10 (D - sum cos(2 pi y_i)) + ||y||^2 with y = Lambda^10 T_asy^0.2(T_osz(z))."""
    d = z.shape[-1]
    y = conditioning(d, 10.0) * t_asy(t_osz(z), 0.2)
    return 10 * (d - np.sum(np.cos(2 * np.pi * y), axis=-1)) + np.sum(y**2, axis=-1)


def rosenbrock(z: np.ndarray) -> np.ndarray:
    """f8: sum 100 (y_i^2 - y_(i+1))^2 + (y_i - 1)^2 with y = max(1, sqrt(D)/8) z + 1."""
    y = max(1.0, np.sqrt(z.shape[-1]) / 8) * z + 1
    head, tail = y[..., :-1], y[..., 1:]
    return np.sum(100 * (head**2 - tail) ** 2 + (head - 1) ** 2, axis=-1)


FUNCTIONS: dict[str, tuple[Function, float]] = {
    "sphere": (sphere, 4.0),
    "ellipsoid": (ellipsoid, 4.0),
    "rastrigin": (rastrigin, 4.0),
    "rosenbrock": (rosenbrock, 3.0),
}


@dataclass(frozen=True)
class Problem:
    """One instance: ``name`` at ``dimension`` with its optimum ``x_opt``; call it on (P, D)."""

    name: str
    dimension: int
    x_opt: np.ndarray

    @classmethod
    def make(cls, name: str, dimension: int, instance: int = 1) -> Problem:
        """The instance ``instance`` (its x_opt drawn from that seed) of ``name``."""
        if name not in FUNCTIONS:
            raise ValueError(f"unknown BBOB function {name!r}; known: {', '.join(FUNCTIONS)}")
        spread = FUNCTIONS[name][1]
        rng = np.random.default_rng([instance, dimension, list(FUNCTIONS).index(name)])
        return cls(name, dimension, rng.uniform(-spread, spread, dimension))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """f(x) - f_opt for each row of ``x``."""
        return FUNCTIONS[self.name][0](np.asarray(x, dtype=np.float64) - self.x_opt)
