"""The run's side of per-episode measures: a start-up check against the env, and the (P, M)
array of a generation's results (see :mod:`neuro_evolution.measures`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from neuro_evolution.evaluation.episode import EvaluationResult
from neuro_evolution.measures import MeasureConfig, check_against_spaces

MEASURES_PATH = "optimizer.descriptors"  # where the measures of a QD optimizer are configured


def space_size(space: Any) -> int:
    """Elements of one flattened value of ``space`` (a Discrete action is one number)."""
    return int(np.asarray(space.sample()).size)


def check_measures_fit(
    measures: Sequence[MeasureConfig], env: Any, path: str = MEASURES_PATH
) -> None:
    """Observation/action indices of ``measures`` exist in ``env``'s spaces: a one-line
    ConfigError on ``path[i].index`` (or ``.event``) at start-up otherwise."""
    check_against_spaces(
        measures, path, space_size(env.observation_space), space_size(env.action_space)
    )


def result_measures(results: Sequence[EvaluationResult], count: int) -> np.ndarray:
    """(P, count) measures of ``results`` in submission order; a RuntimeError when a handler
    returned a result without them (it must run the episode loop that computes them)."""
    rows = []
    for index, result in enumerate(results):
        if result.measures is None or result.measures.shape != (count,):
            raise RuntimeError(
                f"evaluation {index} returned no per-episode measures (expected {count}); the "
                "handler's episode loop must compute RunnerSpec.measures"
            )
        rows.append(result.measures)
    return np.stack(rows) if rows else np.zeros((0, count))
