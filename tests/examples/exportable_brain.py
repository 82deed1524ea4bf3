"""The Elman example brain with the export hook: ``export_step`` adds its step to a policy graph
(the worked example of docs/export.md)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from examples.elman_brain import ElmanBrain, ElmanConfig, ElmanTemplate
from neuro_evolution.brains import register_brain
from neuro_evolution.core.schema import config_class
from neuro_evolution.export import PolicyGraph
from neuro_evolution.support.frozen import frozen_dataclass


@config_class
class ExportableElmanConfig(ElmanConfig):
    """Options of the ``ExportableElman`` brain (those of ``Elman``)."""


@register_brain("ExportableElman", config=ExportableElmanConfig)
@frozen_dataclass(eq=False)
class ExportableElmanTemplate(ElmanTemplate):
    """The Elman template, exportable."""

    def export_step(self, brain: ElmanBrain, graph: PolicyGraph, inputs: str) -> str:
        """h' = tanh(W_in·x + W_rec·h + b), out = tanh(W_out·h'), with h a state from zero."""
        h = graph.state("hidden_state", np.zeros(self.config.hidden_size))
        total = graph.add(
            graph.add(
                graph.matmul(graph.constant("w_in", brain.w_in), inputs),
                graph.matmul(graph.constant("w_rec", brain.w_rec), h),
            ),
            graph.constant("b", brain.b),
        )
        new = graph.tanh(total)
        graph.next_state(h, new)
        return graph.tanh(graph.matmul(graph.constant("w_out", brain.w_out), new))


def exportable_template(
    observation_space: gym.Space, action_space: gym.Space
) -> ExportableElmanTemplate:
    """The template of a 3-unit exportable Elman brain for these spaces."""
    config = ExportableElmanConfig(hidden_size=3)
    return ExportableElmanTemplate.from_config(
        config, observation_space, action_space, np.random.default_rng(0)
    )
