"""OPENAI_ES: the evolution strategy of Salimans, Ho, Chen, Sidor, Sutskever (2017), "Evolution
strategies as a scalable alternative to reinforcement learning" (arXiv:1703.03864).

Fixed isotropic sigma, antithetic sampling, centered-rank fitness shaping, L2 weight decay and
Adam on the center. Reference implementations: openai/evolution-strategies-starter, estool's
``OpenES``, evosax's ``Open_ES``.
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.schema import config_class, option
from neuro_evolution.optimizers.base import OPTIMIZERS
from neuro_evolution.optimizers.declared_state import Part
from neuro_evolution.optimizers.gaussian import (
    MirroredSearch,
    MirroredSearchConfig,
)
from neuro_evolution.optimizers.shaping import shape_fitness

NAME = "OPENAI_ES"


@config_class
class OpenAiEsConfig(MirroredSearchConfig):
    """Options of the ``OPENAI_ES`` optimizer (antithetic sampling, Adam, weight decay)."""

    sigma: float = option(0.1, doc="fixed stdev of the search distribution (every gene)", gt=0)
    learning_rate: float = option(0.01, doc="Adam step size of the center update", gt=0)
    weight_decay: float = option(
        0.005, doc="L2 coefficient: the center's gradient gets -weight_decay * center", ge=0
    )


def openai_es_gradient(
    noise: np.ndarray, sigma: np.ndarray, shaped: np.ndarray, center: np.ndarray, decay: float
) -> np.ndarray:
    """The ascent direction of the center: the search gradient minus the weight decay.

    Salimans et al. 2017, Algorithm 1: g = 1/(n sigma) sum_i F_i epsilon_i (here F shaped,
    epsilon the unscaled rows ``noise``, n the population); the L2 penalty (weight_decay / 2)
    ||center||^2 adds -weight_decay * center (evolution-strategies-starter's l2coeff).
    """
    return shaped @ noise / (len(noise) * sigma) - decay * center


@OPTIMIZERS.register(NAME, config=OpenAiEsConfig)
class OpenAiEs(MirroredSearch):
    """OpenAI-ES over float64 genomes; ``ask`` returns antithetic pairs (rows 2i and 2i+1)."""

    NAME = NAME
    STATE = (*MirroredSearch.STATE, Part("_adam", "adam"))

    def __init__(self, config: OpenAiEsConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, config.population_size)
        self.stdev = np.full(genome_size, config.sigma)
        self._adam = config.adam(genome_size, config.learning_rate)

    def _update(self, noise: np.ndarray, fitness: np.ndarray) -> None:
        shaped = shape_fitness(self.config.fitness_shaping, fitness)
        gradient = openai_es_gradient(
            noise, self.stdev, shaped, self.mean, self.config.weight_decay
        )
        self.mean = self.mean + self._adam.step(gradient)
