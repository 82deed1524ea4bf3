"""A brain's ``normalize_input``: a fixed gain on bounded Box inputs, from the space's bounds.

Every Box observation element whose bounds both lie strictly within ±``NORMALIZE_LIMIT`` is
mapped from [low, high] to [-target, target] (u' = u * scale + shift); the others stay as they
are (scale 1, shift 0). A brain folds this into its input weights and biases when it is filled,
so a step costs nothing more. Unlike the run's ``observation_normalization`` (running statistics
that change every generation), the gain is fixed by the env.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from neuro_evolution.core.schema import ConfigError

NORMALIZE_LIMIT = 1e5  # Box bounds at or beyond this magnitude count as unbounded
NORMALIZE_DOC = (
    "scale Box observation elements with both bounds within ±1e5 from [low, high] to "
    "[-target, target]; elements with larger or infinite bounds stay as they are"
)


def input_scaling(enabled: bool, target: float, space: gym.Space) -> tuple[np.ndarray, np.ndarray]:
    """(scale, shift) of the flattened observation, both empty when ``enabled`` is false."""
    if not enabled:
        return np.zeros(0), np.zeros(0)
    if not isinstance(space, gym.spaces.Box):
        raise ConfigError(
            "brain.normalize_input",
            f"needs a Box observation space, got {space}; set it to false for this env",
        )
    low = np.asarray(space.low, dtype=np.float64).ravel()
    high = np.asarray(space.high, dtype=np.float64).ravel()
    bounded = (low > -NORMALIZE_LIMIT) & (high < NORMALIZE_LIMIT) & (high > low)
    scale = np.ones_like(low)
    shift = np.zeros_like(low)
    scale[bounded] = 2.0 * target / (high[bounded] - low[bounded])
    shift[bounded] = -target - low[bounded] * scale[bounded]
    return scale, shift


def fold_input_scaling(
    weights: np.ndarray, bias: np.ndarray, scale: np.ndarray, shift: np.ndarray
) -> None:
    """Fold u' = u * scale + shift into (..., inputs, outputs) ``weights`` and (..., outputs)
    ``bias``, in place: bias += shift · weights, then weights *= scale (per input row). Row by
    row, so one brain and a batch of them compute the same bits."""
    for row in range(scale.size):
        if shift[row] != 0.0:
            bias += shift[row] * weights[..., row, :]
    weights *= scale[:, None]
