"""Egocentric front end: the observation image cut to a window centred on the agent.

An image observation (H, W, C) in which one channel marks the agent (MinAtar's channel 0: the
chicken, the cannon, the paddle, the player) is cut to the ``size`` x ``size`` window whose
centre is the agent's cell: the cell of that channel with the largest value (the first in
row-major order on ties, so the top-left cell when no agent is on the screen). Cells of the
window outside the image read 0. The window holds every channel but the agent's (whose only
mark would always sit at the centre), and is flattened in (row, column, channel) order into
``size * size * (C - 1)`` features. It has no weights (genome size 0): it is the first part of
a composed brain, whose next part computes the action from the window, e.g. a linear policy
``{"type": "FFNN", "hidden_layers": [], "output_activation": "identity"}``.

Seen from the agent, "a car in the lane above me" is one input wherever the agent stands, so a
policy linear in the window can express it; on the whole image it is a conjunction of the
agent's and the car's positions, which a linear policy cannot express.

Every form (single, batch, JAX, export) computes the window with one index table of
(H·W, features) entries into the flattened image with one zero appended (the outside): row k
lists the window of an agent at cell k. The features are the observation's own values, copied,
so every form gives exactly the same numbers. The table holds H·W·size²·(C-1) int64 entries:
15,000 for Freeway-MinAtar's 5 x 5 window, 9.3 million (75 MB) for a 21 x 21 window over
84 x 84 x 4 frames.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.base import (
    BRAINS,
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    JaxBrain,
)
from neuro_evolution.brains.spaces import FeatureSpace, SpaceAdapter, one_line
from neuro_evolution.core.schema import ConfigError, config_class, option
from neuro_evolution.support.errors import UnsupportedSpaceError
from neuro_evolution.support.frozen import frozen_dataclass


@config_class
class EgocentricConfig(BrainConfig):
    """Options of the ``egocentric`` front end (see ``brains/egocentric.py``)."""

    channel: int = option(0, doc="the channel that marks the agent (MinAtar: 0)", ge=0)
    size: int = option(5, doc="side of the square window around the agent (odd)", ge=1)

    def validate(self, path: str) -> None:
        if self.size % 2 == 0:
            raise ConfigError(
                f"{path}.size",
                f"must be odd so that the agent's cell is the window's centre, got {self.size}; "
                f"use {self.size - 1} or {self.size + 1}",
            )


def image_of(space: gym.Space) -> tuple[int, int, int]:
    """(H, W, C) of an image observation space; an UnsupportedSpaceError otherwise."""
    shape = tuple(int(n) for n in getattr(space, "shape", None) or ())
    if not isinstance(space, gym.spaces.Box) or len(shape) != 3:
        raise UnsupportedSpaceError(
            f"the egocentric front end cuts images (H, W, C) with a channel that marks the "
            f"agent, got the observation space {one_line(space)}"
        )
    return shape


def feature_count(config: EgocentricConfig, image: tuple[int, int, int]) -> int:
    """Features of the window: size * size cells of every channel but the agent's."""
    return config.size * config.size * (image[2] - 1)


@lru_cache(maxsize=16)
def window_table(image: tuple[int, int, int], channel: int, size: int) -> np.ndarray:
    """(H·W, size·size·(C-1)) int64: row k indexes the window of an agent at cell k into the
    flattened (H, W, C) image with one zero appended (index H·W·C: outside the image).
    Read-only."""
    height, width, channels = image
    half = size // 2
    kept = np.array([c for c in range(channels) if c != channel], dtype=np.int64)
    cell = np.arange(height * width)
    rows = (cell // width)[:, None, None, None] + np.arange(size)[None, :, None, None] - half
    cols = (cell % width)[:, None, None, None] + np.arange(size)[None, None, :, None] - half
    inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
    flat = (rows * width + cols) * channels + kept[None, None, None, :]
    table = np.where(inside, flat, height * width * channels).reshape(height * width, -1)
    table = np.ascontiguousarray(table, dtype=np.int64)
    table.flags.writeable = False
    return table


def agent_cells(inputs: np.ndarray, channels: int, channel: int) -> np.ndarray:
    """The agent's cell index (H·W row-major) in each row of (P, H·W·C) flat images."""
    return np.argmax(inputs[:, channel::channels], axis=1)


def windows(table: np.ndarray, inputs: np.ndarray, channels: int, channel: int) -> np.ndarray:
    """The (P, features) windows of (P, H·W·C) flat float64 images."""
    cells = agent_cells(inputs, channels, channel)
    padded = np.concatenate([inputs, np.zeros((inputs.shape[0], 1))], axis=1)
    return np.take_along_axis(padded, table[cells], axis=1)


class EgocentricBrain(Brain):
    """One egocentric front end: stateless, weightless."""

    __slots__ = ("template", "table")

    def __init__(self, template: EgocentricTemplate):
        self.template = template
        self.table = template.table()

    def reset(self, rng: np.random.Generator) -> None:
        """Stateless: nothing to reset."""

    def step(self, observation: Any) -> Any:
        template = self.template
        x = template.io.encode(observation)[None, :]
        features = windows(self.table, x, template.image_shape[2], template.config.channel)
        return template.io.decode(features[0])


class EgocentricBatchBrain(BatchBrain):
    """P egocentric front ends; row i computes exactly what a single brain does."""

    __slots__ = ("template", "table", "o")

    def __init__(self, template: EgocentricTemplate, count: int):
        self.template = template
        self.table = template.table()
        self.o = np.zeros((count, template.io.output_size))

    def reset(self, rngs: list[np.random.Generator]) -> None:
        if len(rngs) != self.o.shape[0]:
            raise ValueError(f"reset got {len(rngs)} generators for {self.o.shape[0]} brains")

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        template = self.template
        x = template.io.encode_batch(observations)
        features = windows(self.table, x, template.image_shape[2], template.config.channel)
        if active is None:
            self.o[:] = features
        else:
            active = np.asarray(active, dtype=bool)
            self.o[active] = features[active]
        return template.io.decode_batch(self.o)


@BRAINS.register("egocentric", config=EgocentricConfig)
@frozen_dataclass(eq=False)
class EgocentricTemplate(BrainTemplate[EgocentricConfig, EgocentricBrain]):
    """The image shape; the window's index table is derived from it and the config."""

    config: EgocentricConfig
    io: SpaceAdapter
    genome_size: int
    image_shape: tuple[int, ...]  # (H, W, C)
    first_part_only: ClassVar[str] = "takes the observation image"

    def __post_init__(self) -> None:
        BrainTemplate.__post_init__(self)
        if self.genome_size != 0:
            raise ValueError(f"the egocentric front end has no weights, got {self.genome_size}")

    @classmethod
    def feature_size(cls, config: Any, observation_space: gym.Space) -> int | None:
        """The window's features: what the front end hands to the next part."""
        return feature_count(config, image_of(observation_space))

    @classmethod
    def from_config(
        cls,
        config: EgocentricConfig,
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> EgocentricTemplate:
        image = image_of(observation_space)
        if config.channel >= image[2]:
            raise ConfigError(
                "brain.channel",
                f"{config.channel} is not a channel of the {image[0]}x{image[1]}x{image[2]} "
                f"observation; use 0 to {image[2] - 1}",
            )
        if image[2] < 2:
            raise UnsupportedSpaceError(
                "the egocentric window holds every channel but the agent's, and this "
                f"observation has only {image[2]}: it needs at least 2 channels"
            )
        features = feature_count(config, image)
        if isinstance(action_space, FeatureSpace) and action_space.shape != (features,):
            raise ConfigError(
                "brain.type",
                f"egocentric outputs its {features} window features, not {action_space.shape[0]}; "
                "give it the size 0 (it decides) in the composed brain's sizes",
            )
        if not isinstance(action_space, FeatureSpace):
            raise ConfigError(
                "brain.type",
                "egocentric has no weights to choose an action: make it the first part of a "
                'composed brain, e.g. "parts": [{"type": "egocentric"}, {"type": "FFNN", '
                '"hidden_layers": [], "output_activation": "identity"}]',
            )
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        return cls(config=config, io=io, genome_size=0, image_shape=image)

    def table(self) -> np.ndarray:
        """The window's index table (module docstring)."""
        image = tuple(int(n) for n in self.image_shape)
        return window_table(image, self.config.channel, self.config.size)

    def new_brain(self) -> EgocentricBrain:
        return EgocentricBrain(self)

    def fill(self, brain: EgocentricBrain, genome: np.ndarray) -> None:
        """No weights: nothing to pour."""

    def batch_brain(self, genomes: np.ndarray) -> EgocentricBatchBrain:
        return EgocentricBatchBrain(self, self.check_genomes(genomes).shape[0])

    def jax_brain(self) -> JaxBrain:
        from neuro_evolution.brains.jax_egocentric import EgocentricJaxBrain  # jax: an extra

        channels = int(self.image_shape[2])
        return EgocentricJaxBrain(self, self.table(), channels, self.config.channel)

    def export_step(self, brain: EgocentricBrain, graph: Any, inputs: str) -> str:
        """The agent's cell (argmax of its channel), that cell's row of the index table, and
        the gather of the window from the input with one zero appended."""
        channels = int(self.image_shape[2])
        plane = np.arange(self.config.channel, self.io.input_size, channels, dtype=np.int64)
        agent = graph.op("gather", inputs, graph.constant("agent_plane", plane))
        cell = graph.op("argmax", agent, axis=0, keepdims=True)
        index = graph.op("gather", graph.constant("window_index", brain.table), cell)
        padded = graph.concat([inputs, graph.constant("outside", np.zeros(1))])
        return graph.reshape(graph.op("gather", padded, index), (-1,))
