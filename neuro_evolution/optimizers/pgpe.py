"""PGPE: policy gradients with parameter-based exploration, with symmetric sampling.

Sehnke, Osendorfer, Rueckstiess, Graves, Peters, Schmidhuber (2010), "Parameter-exploring policy
gradients", Neural Networks 23(4). Center update by ClipUp (Toklu, Liskowski, Srivastava 2020)
or Adam; centered-rank fitness shaping instead of the paper's reward normalisation; a bounded
relative stdev change. Reference implementation: pgpelib / EvoTorch's ``PGPE`` (NNAISENSE).
"""

from __future__ import annotations

from math import sqrt
from typing import Literal

import numpy as np

from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.optimizers.base import OPTIMIZERS
from neuro_evolution.optimizers.declared_state import Entry, Part
from neuro_evolution.optimizers.gaussian import (
    Adam,
    ClipUp,
    MirroredSearch,
    MirroredSearchConfig,
)
from neuro_evolution.optimizers.shaping import shape_fitness

NAME = "PGPE"

_ADAM_DEFAULT_STEP = 0.01
DEFAULT_STDEV_INIT = 0.1  # per gene, when neither stdev_init nor radius_init is set


@config_class
class PgpeConfig(MirroredSearchConfig):
    """Options of the ``PGPE`` optimizer (symmetric sampling, ClipUp or Adam center update)."""

    stdev_init: float | None = option(
        None,
        doc="initial stdev of every gene (set at most one of stdev_init, radius_init; neither: "
        f"{DEFAULT_STDEV_INIT})",
        gt=0,
    )
    radius_init: float | None = option(
        None,
        doc="initial stdev as a radius: every gene gets radius_init / sqrt(genome size)"
        " (set at most one of stdev_init, radius_init)",
        gt=0,
    )
    center_update: Literal["clipup", "adam"] = option(
        "clipup", doc="how the center follows the gradient estimate: ClipUp or Adam"
    )
    center_learning_rate: float | None = option(
        None,
        doc="step size of the center update (null: max_speed / 2 for clipup, as Toklu et al."
        f" 2020 recommend; {_ADAM_DEFAULT_STEP} for adam)",
        gt=0,
    )
    max_speed: float = option(0.3, doc="ClipUp: largest change of the center per generation", gt=0)
    momentum: float = option(0.9, doc="ClipUp: decay of the velocity", ge=0, lt=1)
    stdev_learning_rate: float = option(0.1, doc="step size of the stdev update", ge=0)
    stdev_max_change: float = option(
        0.2, doc="largest relative change of each gene's stdev per generation", gt=0, lt=1
    )
    stdev_decay: float = option(
        1.0,
        doc="every gene's stdev is multiplied by this after each generation's update (1: no "
        "decay; 0.99 halves it in 69 generations): a shrinking search distribution lets the "
        "center settle on a sharp optimum late in a run",
        gt=0,
        le=1,
    )
    stdev_min: float = option(
        0.0, doc="floor of every gene's stdev after each update (0: none)", ge=0
    )

    def validate(self, path: str) -> None:
        MirroredSearchConfig.validate(self, path)  # (zero-argument super fails with slots)
        if self.stdev_init is not None and self.radius_init is not None:
            raise ConfigError(
                join(path, "stdev_init"),
                "set at most one of stdev_init (per gene) or radius_init (whole genome), got "
                f"stdev_init={self.stdev_init}, radius_init={self.radius_init}",
            )

    def step_size(self) -> float:
        """The center update's step size (``center_learning_rate`` or its default)."""
        if self.center_learning_rate is not None:
            return self.center_learning_rate
        return self.max_speed / 2 if self.center_update == "clipup" else _ADAM_DEFAULT_STEP

    def initial_stdev(self, genome_size: int) -> float:
        """Every gene's initial stdev."""
        if self.radius_init is not None:
            return self.radius_init / sqrt(genome_size)
        return self.stdev_init if self.stdev_init is not None else DEFAULT_STDEV_INIT


def pgpe_gradients(
    noise: np.ndarray, stdev: np.ndarray, shaped: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(center gradient, stdev gradient) of PGPE with symmetric sampling.

    ``noise`` rows are mirrored pairs (z, -z) scaled by ``stdev`` into epsilon = stdev * z;
    ``shaped`` is the shaped fitness of the rows (pair i: r+ = shaped[2i], r- = shaped[2i+1]).
    Sehnke et al. 2010, symmetric sampling, averaged over the n pairs:
      grad_mu    = 1/n sum_i epsilon_i (r+_i - r-_i) / 2
      grad_sigma = 1/n sum_i ((r+_i + r-_i) / 2 - b) (epsilon_i^2 - sigma^2) / sigma
    with the baseline b the mean shaped fitness of the generation.
    """
    # Written with z (epsilon = stdev * z) so that no (n, G) temporary is made:
    # grad_mu = stdev * sum_i w_i z_i and grad_sigma = stdev * (sum_i v_i z_i^2 - sum_i v_i).
    z = noise[0::2]
    plus, minus = shaped[0::2], shaped[1::2]
    pairs = len(plus)
    grad_center = stdev * (((plus - minus) / (2 * pairs)) @ z)
    weights = ((plus + minus) / 2 - shaped.mean()) / pairs
    grad_stdev = stdev * (np.einsum("i,ij,ij->j", weights, z, z) - weights.sum())
    return grad_center, grad_stdev


@OPTIMIZERS.register(NAME, config=PgpeConfig)
class Pgpe(MirroredSearch):
    """PGPE over float64 genomes; ``ask`` returns mirrored pairs (rows 2i and 2i+1)."""

    NAME = NAME

    def __init__(self, config: PgpeConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, config.population_size)
        self.stdev = np.full(genome_size, config.initial_stdev(genome_size))
        self._step: ClipUp | Adam
        if config.center_update == "clipup":
            self._step = ClipUp(genome_size, config.step_size(), config.momentum, config.max_speed)
        else:
            self._step = config.adam(genome_size, config.step_size())

    def state_entries(self) -> tuple[Entry, ...]:
        """The distribution's entries and the center update's, under its name."""
        return (*self.STATE, Part("_step", self.config.center_update))

    def _update(self, noise: np.ndarray, fitness: np.ndarray) -> None:
        config = self.config
        shaped = shape_fitness(config.fitness_shaping, fitness)
        grad_center, grad_stdev = pgpe_gradients(noise, self.stdev, shaped)
        self.mean = self.mean + self._step.step(grad_center)
        # Gradient step on the stdev, then each gene's change bounded relative to its old value
        # (pgpelib's stdev_max_change), which also keeps every stdev positive.
        allowed = config.stdev_max_change * self.stdev
        proposed = self.stdev + config.stdev_learning_rate * grad_stdev
        # Then the decay and the floor (defaults 1 and 0 leave every value bit-identical).
        stdev = np.clip(proposed, self.stdev - allowed, self.stdev + allowed) * config.stdev_decay
        self.stdev = np.maximum(stdev, config.stdev_min)
