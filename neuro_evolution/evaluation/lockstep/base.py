"""The interface of P copies of one environment stepped in lockstep (:class:`LockstepEnv`):
the numpy and Gymnasium implementations are in ``vector_env.py``, the gymnax one in
``jax/lockstep.py``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

StepResult = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class LockstepEnv(ABC):
    """``num_envs`` copies of one env; ``step`` only has to advance the ``active`` ones."""

    num_envs: int

    @abstractmethod
    def reset(self, seeds: Sequence[int]) -> np.ndarray:
        """Reset copy i with ``seeds[i]`` exactly as ``env.reset(seed=seeds[i])``; batched obs."""

    @abstractmethod
    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        """Step the active copies: (observations, rewards, terminated, truncated), all length P.

        Entries of inactive copies are meaningless; callers read only active ones.
        """

    @abstractmethod
    def close(self) -> None:
        """Close the env(s)."""
