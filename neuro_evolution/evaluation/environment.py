"""The ``environment`` config section and making Gymnasium envs from it."""

from __future__ import annotations

import gymnasium as gym

from neuro_evolution.configtools import ConfigBase, ConfigError, config_class, did_you_mean, option
from neuro_evolution.frozen import FrozenDict


@config_class
class EnvironmentConfig(ConfigBase):
    """Which Gymnasium environment to evolve brains on."""

    id: str = option(doc="Gymnasium environment id, e.g. CartPole-v1")
    kwargs: dict = option(FrozenDict(), doc="keyword arguments passed to gymnasium.make")

    def validate(self, path: str) -> None:
        if self.id not in gym.registry:
            raise ConfigError(
                f"{path}.id" if path else "id",
                f"unknown Gymnasium environment {self.id!r}.{did_you_mean(self.id, gym.registry)}",
            )

    def make(self, render_mode: str | None = None) -> gym.Env:
        """A new env instance (the passive env checker is off: it costs time on every step)."""
        kwargs = dict(self.kwargs)
        if render_mode is not None:
            kwargs["render_mode"] = render_mode
        return gym.make(self.id, disable_env_checker=True, **kwargs)
