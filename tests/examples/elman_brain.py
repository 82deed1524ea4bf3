"""An Elman network brain: the worked example of docs/writing-a-brain.md.

    h   ← tanh(W_in·x + W_rec·h + b)
    out = tanh(W_out·h)                  (mapped to the env's action space by the SpaceAdapter)

Genome layout, in this order, every matrix row-major: W_in (hidden × inputs),
W_rec (hidden × hidden), b (hidden), W_out (outputs × hidden).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from neuro_evolution.brains import Brain, BrainConfig, BrainTemplate, register_brain
from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.core.schema import config_class, option
from neuro_evolution.support.frozen import frozen_dataclass


@config_class
class ElmanConfig(BrainConfig):
    """Options of the ``Elman`` brain: the config section ``{"type": "Elman", ...}``."""

    hidden_size: int = option(8, doc="hidden units of the Elman network", ge=1)


class ElmanBrain(Brain):
    """One Elman network: weights owned by the brain, and the hidden state h."""

    __slots__ = ("io", "w_in", "w_rec", "b", "w_out", "h")

    def __init__(self, io: SpaceAdapter, hidden_size: int):
        self.io = io
        self.w_in = np.zeros((hidden_size, io.input_size))
        self.w_rec = np.zeros((hidden_size, hidden_size))
        self.b = np.zeros(hidden_size)
        self.w_out = np.zeros((io.output_size, hidden_size))
        self.h = np.zeros(hidden_size)

    def reset(self, rng: np.random.Generator) -> None:
        """Zero the hidden state (this brain has no noise, so ``rng`` is unused)."""
        self.h[...] = 0.0

    def step(self, observation: Any) -> Any:
        x = self.io.encode(observation)
        self.h = np.tanh(self.w_in @ x + self.w_rec @ self.h + self.b)
        return self.io.decode(np.tanh(self.w_out @ self.h))

    def internal_state(self) -> dict[str, np.ndarray]:
        """The hidden state h, for ``replay --brain-state`` (optional: the default says the
        brain keeps no state)."""
        return {"hidden_state": self.h.copy()}


@register_brain("Elman", config=ElmanConfig)
@frozen_dataclass(eq=False)
class ElmanTemplate(BrainTemplate):
    """Everything fixed per experiment: the config, the env's spaces and the genome size."""

    config: ElmanConfig
    io: SpaceAdapter
    genome_size: int

    @classmethod
    def from_config(
        cls,
        config: ElmanConfig,
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> ElmanTemplate:
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        hidden = config.hidden_size
        size = hidden * io.input_size + hidden * hidden + hidden + io.output_size * hidden
        return cls(config=config, io=io, genome_size=size)

    def new_brain(self) -> ElmanBrain:
        return ElmanBrain(self.io, self.config.hidden_size)

    def fill(self, brain: ElmanBrain, genome: np.ndarray) -> None:
        offset = 0
        for array in (brain.w_in, brain.w_rec, brain.b, brain.w_out):
            array[...] = genome[offset : offset + array.size].reshape(array.shape)
            offset += array.size
