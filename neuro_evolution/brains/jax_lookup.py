"""The JAX batch brain of a template: the built-in ones by brain type (``jax_brains.py``), the conv
front end and composed brains (``jax_conv.py``, whose composed brain gets its parts from here)."""

from __future__ import annotations

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.brains.jax_brains import JAX_BRAINS, JaxBrain
from neuro_evolution.brains.jax_conv import ComposedJaxBrain, ConvJaxBrain
from neuro_evolution.support.errors import ConfigError


def jax_brain(template: BrainTemplate) -> JaxBrain:
    """The JAX batch brain of ``template``'s type; a one-line ConfigError if it has none (for a
    composed brain: if one of its parts has none)."""
    name = template.config.type_name()
    if name == "composed":
        return ComposedJaxBrain(template, jax_brain)
    brains: dict[str, type[JaxBrain]] = {**JAX_BRAINS, "conv": ConvJaxBrain}
    if name not in brains:
        known = sorted([*brains, "composed"])
        raise ConfigError(
            "brain.type",
            f"brain type {name!r} has no JAX implementation (JAX brains: "
            f"{', '.join(known)}); use another evaluation handler for it",
        )
    return brains[name](template)
