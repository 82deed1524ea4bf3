"""User brains with a mistake each, for the start-up refusal tests: ``WrongSizeElman``
declares one gene fewer than its ``fill`` reads; ``OversizedElman`` two genes more (its fill
copies genes), ``SquashedOversizedElman`` three more (its fill stores ``tanh`` of its genes);
``OutOfSpace`` returns an action outside the env's action space."""

from __future__ import annotations

from typing import Any

import numpy as np

from examples.elman_brain import ElmanBrain, ElmanConfig, ElmanTemplate
from neuro_evolution.brains import Brain, register_brain
from neuro_evolution.core.schema import config_class
from neuro_evolution.support.frozen import frozen_dataclass


@config_class
class WrongSizeConfig(ElmanConfig):
    """Options of ``WrongSizeElman`` (as Elman's)."""


@register_brain("WrongSizeElman", config=WrongSizeConfig)
@frozen_dataclass(eq=False)
class WrongSizeTemplate(ElmanTemplate):
    """The Elman template with a genome_size one gene short of what fill reads."""

    @classmethod
    def from_config(cls, config, observation_space, action_space, rng) -> WrongSizeTemplate:
        right = ElmanTemplate.from_config(config, observation_space, action_space, rng)
        return cls(config=config, io=right.io, genome_size=right.genome_size - 1)


@config_class
class OutOfSpaceConfig(ElmanConfig):
    """Options of ``OutOfSpace`` (as Elman's)."""


class OutOfSpaceBrain(ElmanBrain):
    """Returns 7, whatever the action space."""

    def step(self, observation: Any) -> Any:
        return np.int64(7)


@register_brain("OutOfSpace", config=OutOfSpaceConfig)
@frozen_dataclass(eq=False)
class OutOfSpaceTemplate(ElmanTemplate):
    """The Elman template building brains that answer 7."""

    def new_brain(self) -> Brain:
        return OutOfSpaceBrain(self.io, self.config.hidden_size)


@config_class
class OversizedConfig(ElmanConfig):
    """Options of ``OversizedElman`` (as Elman's)."""


@register_brain("OversizedElman", config=OversizedConfig)
@frozen_dataclass(eq=False)
class OversizedTemplate(ElmanTemplate):
    """The Elman template with a genome_size two genes past what fill reads."""

    @classmethod
    def from_config(cls, config, observation_space, action_space, rng) -> OversizedTemplate:
        right = ElmanTemplate.from_config(config, observation_space, action_space, rng)
        return cls(config=config, io=right.io, genome_size=right.genome_size + 2)


@config_class
class SquashedOversizedConfig(ElmanConfig):
    """Options of ``SquashedOversizedElman`` (as Elman's)."""


@register_brain("SquashedOversizedElman", config=SquashedOversizedConfig)
@frozen_dataclass(eq=False)
class SquashedOversizedTemplate(ElmanTemplate):
    """An Elman template whose fill stores tanh of each gene, with a genome_size three genes past
    what fill reads."""

    @classmethod
    def from_config(cls, config, observation_space, action_space, rng) -> SquashedOversizedTemplate:
        right = ElmanTemplate.from_config(config, observation_space, action_space, rng)
        return cls(config=config, io=right.io, genome_size=right.genome_size + 3)

    def fill(self, brain: ElmanBrain, genome: np.ndarray) -> None:
        offset = 0
        for array in (brain.w_in, brain.w_rec, brain.b, brain.w_out):
            array[...] = np.tanh(genome[offset : offset + array.size]).reshape(array.shape)
            offset += array.size
