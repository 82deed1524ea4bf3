"""A CartPole that appends the seed of every ``reset`` to a file: which env seeds a run uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class SeedLoggingCartPole(CartPoleEnv):
    """CartPole writing one line per ``reset``: the seed, or ``None`` when none was given."""

    def __init__(self, log_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log_path = Path(log_path)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        with self.log_path.open("a") as log:
            log.write(f"{seed}\n")
        return super().reset(seed=seed, options=options)
