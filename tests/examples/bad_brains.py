"""Two user brains with a mistake each, for the start-up refusal tests: ``WrongSizeElman``
declares one gene fewer than its ``fill`` reads; ``OutOfSpace`` returns an action outside the
env's action space."""

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
