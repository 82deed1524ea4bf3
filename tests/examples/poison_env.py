"""A CartPole whose process dies (SIGKILL) when it is reset with one given seed: an env that
segfaults on one genome's episode, for the mp handler's recovery tests."""

from __future__ import annotations

import os
import signal
from typing import Any

from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class PoisonCartPole(CartPoleEnv):
    """CartPole that kills its own process on ``reset(seed=die_on_seed)``."""

    def __init__(self, die_on_seed: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.die_on_seed = die_on_seed

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        if seed is not None and seed == self.die_on_seed:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().reset(seed=seed, options=options)
