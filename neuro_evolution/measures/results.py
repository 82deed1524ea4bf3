"""The run's side of per-episode measures: start-up checks against the env's spaces and one
step, and the (P, M) array of a generation's results (see :mod:`neuro_evolution.measures.base`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from neuro_evolution.core.schema import ConfigError, join
from neuro_evolution.measures.base import MeasureConfig, check_against_spaces
from neuro_evolution.measures.info_keys import check_final_info_keys

if TYPE_CHECKING:  # the episode loops import this package's base: results are only typed here
    from neuro_evolution.evaluation.episodes.runner import EvaluationResult

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


def check_step_measures(
    measures: Sequence[MeasureConfig], env: Any, path: str = MEASURES_PATH
) -> None:
    """Reward indices and per-step info keys of ``measures`` exist in one step of ``env`` (a
    reset with seed 0 and a sampled action): a one-line ConfigError on ``path[i].index`` or
    ``.key`` at start-up otherwise, not an error inside a worker later."""
    check_final_info_keys(measures, env, path)  # reduce last: the key of the final info dict
    per_step = [
        (position, measure)
        for position, measure in enumerate(measures)
        if measure.source == "reward" or (measure.source == "info" and measure.reduce != "last")
    ]
    if not per_step:
        return
    env.reset(seed=0)
    _, reward, _, _, info = env.step(env.action_space.sample())
    size = int(np.asarray(reward).size)
    for position, measure in per_step:
        where = f"{path}[{position}]"
        if measure.source == "reward" and measure.index >= size:
            raise ConfigError(
                join(where, "index"),
                f"the env's reward has {size} value{'s' if size != 1 else ''} per step "
                f"(0..{size - 1}), got {measure.index}",
            )
        if measure.source == "info":
            if measure.key not in info:
                known = ", ".join(sorted(map(str, info))) or "none"
                raise ConfigError(
                    join(where, "key"),
                    f"{measure.key!r} is not in a step's info dict (keys: {known})",
                )
            count = int(np.asarray(info[measure.key]).size)
            if measure.index >= count:
                raise ConfigError(
                    join(where, "index"),
                    f"info[{measure.key!r}] has {count} values (0..{count - 1}), got "
                    f"{measure.index}",
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
