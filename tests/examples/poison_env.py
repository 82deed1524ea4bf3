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


class RaisingCartPole(CartPoleEnv):
    """CartPole whose second ``reset`` raises, as an env with a bug does: the start-up dry run
    (one reset of its own env) passes, the first generation fails."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.resets = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        self.resets += 1
        if self.resets > 1:
            raise ValueError("RaisingCartPole.reset: a bug in the env")
        return super().reset(seed=seed, options=options)
