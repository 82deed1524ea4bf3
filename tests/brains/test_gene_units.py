"""``BrainTemplate.gene_units``: which neuron (or output unit) each gene belongs to. The rule a
test can break: changing gene g changes the parameters of unit ``gene_units()[g]`` and of no
other unit, and every unit's genes are labelled alike (numbered in the order of first genes)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from neuro_evolution.brains import BrainTemplate, make_template
from neuro_evolution.brains.base import parse_brain_config, units_in_gene_order

OBSERVATION = gym.spaces.Box(-2.0, 2.0, (3,), dtype=np.float64)
ACTION = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float64)


def template_for(brain: dict[str, Any]) -> BrainTemplate:
    config = parse_brain_config(brain, "brain")
    return make_template(config, OBSERVATION, ACTION, np.random.default_rng(0))


def ffnn_parameters(brain: Any, first: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every parameter of an FFNN brain and, beside it, the unit it belongs to."""
    values, labels = [], []
    for weights, biases in zip(brain.weights, brain.biases):
        n_in, n_out = weights.shape
        values += [weights.ravel(), biases]
        labels += [np.tile(first + np.arange(n_out), n_in), first + np.arange(n_out)]
        first += n_out
    return values, labels


def ctrnn_parameters(brain: Any, first: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """M = dt·[V; W; b] and y0 and the state bounds column j: neuron j; T column o: output o."""
    rows, n = brain.M.shape
    n_out = brain.T.shape[1]
    values = [brain.M.ravel(), brain.T.ravel(), brain.y0, brain.low, brain.high]
    neurons = first + np.arange(n)
    labels = [np.tile(neurons, rows), np.tile(first + n + np.arange(n_out), n), neurons]
    return values, labels + [neurons, neurons]


def labelled_parameters(template: BrainTemplate, genome: np.ndarray) -> tuple[np.ndarray, ...]:
    brain = template.build(genome)
    if template.config.type_name() == "composed":
        first_values, first_labels = ffnn_parameters(brain.parts[0])
        offset = int(np.concatenate(first_labels).max()) + 1
        second_values, second_labels = ctrnn_parameters(brain.parts[1], offset)
        values, labels = first_values + second_values, first_labels + second_labels
    elif template.config.type_name() == "FFNN":
        values, labels = ffnn_parameters(brain)
    else:
        values, labels = ctrnn_parameters(brain)
    return np.concatenate(values), np.concatenate(labels)


def units_changed_by_each_gene(template: BrainTemplate) -> np.ndarray:
    """For every gene, the one unit whose parameters change when the gene changes."""
    genome = np.random.default_rng(1).normal(0.0, 0.5, template.genome_size)
    before, labels = labelled_parameters(template, genome)
    owners = np.empty(template.genome_size, dtype=np.int64)
    for gene in range(template.genome_size):
        changed = genome.copy()
        changed[gene] += 0.25
        after, _ = labelled_parameters(template, changed)
        units = np.unique(labels[after != before])
        assert len(units) == 1, f"gene {gene} changes units {units}"
        owners[gene] = units[0]
    return units_in_gene_order(owners)


CASES = {
    "linear policy": {"type": "FFNN", "hidden_layers": []},
    "two hidden layers": {"type": "FFNN", "hidden_layers": [4, 3]},
    "no bias": {"type": "FFNN", "hidden_layers": [2], "use_bias": False},
    "dense CTRNN": {"type": "CTRNN", "number_neurons": 3},
    "sparse CTRNN with every option": {
        "type": "CTRNN",
        "number_neurons": 4,
        "v_mask": "random",
        "v_mask_param": 0.5,
        "w_mask": "random",
        "w_mask_param": 0.5,
        "optimize_y0": True,
        "optimize_state_boundaries": "per_neuron",
        "normalize_input": True,
        "set_principle_diagonal_elements_of_W_negative": True,
    },
    "composed": {
        "type": "composed",
        "parts": [{"type": "FFNN", "hidden_layers": [5]}, {"type": "CTRNN", "number_neurons": 2}],
        "sizes": [3],
    },
}


@pytest.mark.parametrize("brain", CASES.values(), ids=CASES.keys())
def test_each_gene_belongs_to_the_unit_whose_parameters_it_changes(brain: dict) -> None:
    template = template_for(brain)
    units = template.gene_units()
    assert units is not None and units.shape == (template.genome_size,)
    np.testing.assert_array_equal(units, units_changed_by_each_gene(template))


def test_a_linear_policy_has_one_unit_per_output_owning_its_weights_and_bias() -> None:
    """3 inputs, 2 outputs: W column by column (3 genes each), then the 2 biases."""
    units = template_for(CASES["linear policy"]).gene_units()
    np.testing.assert_array_equal(units, [0, 0, 0, 1, 1, 1, 0, 1])


def test_a_global_state_bound_is_a_unit_of_its_own() -> None:
    template = template_for(
        {"type": "CTRNN", "number_neurons": 2, "optimize_state_boundaries": "global"}
    )
    units = template.gene_units()
    assert units is not None
    # 2 neurons and 2 outputs, then the lower and the upper bound
    assert list(units[-2:]) == [4, 5] and units.max() == 5


def test_a_brain_type_that_does_not_say_returns_none() -> None:
    conv = {"type": "conv", "layers": [{"channels": 2, "kernel": 3}]}
    image = gym.spaces.Box(0, 255, (6, 6, 1), dtype=np.uint8)
    config = parse_brain_config(
        {"type": "composed", "parts": [conv, {"type": "FFNN", "hidden_layers": []}]}, "brain"
    )
    template = make_template(config, image, ACTION, np.random.default_rng(0))
    assert template.gene_units() is None
