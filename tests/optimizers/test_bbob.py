"""The BBOB functions of the optimizer matrix: zero at x_opt, the definitions' transformations."""

from __future__ import annotations

import numpy as np
import pytest

from neuro_evolution.optimizers.bbob import FUNCTIONS, Problem, t_asy, t_osz


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dimension", [2, 10, 40])
def test_each_function_is_zero_at_its_optimum_and_positive_elsewhere(
    name: str, dimension: int
) -> None:
    problem = Problem.make(name, dimension)
    assert problem(problem.x_opt[None])[0] == 0.0
    away = problem.x_opt + np.random.default_rng(0).normal(0, 0.5, (20, dimension))
    assert (problem(away) > 0).all()
    spread = FUNCTIONS[name][1]
    assert (np.abs(problem.x_opt) <= spread).all()


def test_instances_differ_and_repeat() -> None:
    first, again = Problem.make("sphere", 10, 1), Problem.make("sphere", 10, 1)
    assert np.array_equal(first.x_opt, again.x_opt)
    assert not np.array_equal(first.x_opt, Problem.make("sphere", 10, 2).x_opt)


def test_transformations_by_hand() -> None:
    """T_osz(1) = exp(0.049 (sin 0 + sin 0)) = 1, T_osz(0) = 0, odd in its sign branch;
    T_asy leaves the first coordinate and negatives alone and raises the last positive one
    to the power 1 + beta sqrt(x)."""
    np.testing.assert_allclose(t_osz(np.array([1.0, 0.0, -1.0])), [1.0, 0.0, -1.0])
    x = np.exp(1.0)
    expected = np.exp(1 + 0.049 * (np.sin(10.0) + np.sin(7.9)))
    np.testing.assert_allclose(t_osz(np.array([x])), [expected])
    np.testing.assert_allclose(
        t_asy(np.array([4.0, -2.0, 4.0]), 0.5), [4.0, -2.0, 4.0 ** (1 + 0.5 * 2.0)]
    )


def test_sphere_and_ellipsoid_values() -> None:
    problem = Problem.make("ellipsoid", 3)
    z = np.array([[1.0, 1.0, 1.0]])
    assert problem(problem.x_opt + z)[0] == pytest.approx(1 + 1e3 + 1e6)
    assert Problem.make("sphere", 3)(Problem.make("sphere", 3).x_opt + z)[0] == pytest.approx(3)
