"""``NumpyOnlyElman``: the Elman example with its numpy form only, as a brain type written
without the optional forms is; the refusal and fallback tests use it."""

from __future__ import annotations

from examples.elman_brain import ElmanConfig, ElmanTemplate
from neuro_evolution.brains import BrainTemplate, register_brain
from neuro_evolution.core.schema import config_class
from neuro_evolution.support.frozen import frozen_dataclass


@config_class
class NumpyOnlyConfig(ElmanConfig):
    """Options of ``NumpyOnlyElman`` (as Elman's)."""


@register_brain("NumpyOnlyElman", config=NumpyOnlyConfig)
@frozen_dataclass(eq=False)
class NumpyOnlyTemplate(ElmanTemplate):
    """The Elman template without batch, JAX and export forms (the base class's refusals)."""

    batch_brain = BrainTemplate.batch_brain
    jax_brain = BrainTemplate.jax_brain
    export_step = BrainTemplate.export_step
