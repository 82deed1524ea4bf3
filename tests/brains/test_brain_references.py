"""Every fast brain agrees with its slow reference in tests/brain_references.py."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from brain_references import REFERENCES, reference_logarithmic_mask
from helpers import ACTION_SPACE, CTRNN_CASES, OBSERVATION_SPACE, random_ctrnn_cases

from neuro_evolution.brains import brain_types, get_brain_type, make_template
from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.brains.masks import logarithmic_mask, make_mask

TOLERANCE = 1e-12
STEPS = 300


def compare(brain_type: str, options: dict[str, Any], observation_space: gym.Space, seed: int):
    """Step the fast brain and its reference on the same observations; return the worst gap."""
    config = parse_brain_config({"type": brain_type, **options}, "brain")
    template = make_template(config, observation_space, ACTION_SPACE, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    observation_space.seed(seed)  # Discrete observations come from space.sample(): seeded
    genome = rng.normal(0.0, 0.7, template.genome_size)
    brain = template.build(genome)
    reference = REFERENCES[brain_type](template, genome, observation_space)
    worst = 0.0
    for episode in range(2):
        brain.reset(np.random.default_rng([seed, episode]))
        reference.reset(np.random.default_rng([seed, episode]))
        for _ in range(STEPS // 2):
            observation = observation_space.sample()
            if isinstance(observation_space, gym.spaces.Box):
                observation = rng.normal(0.0, 2.0, observation_space.shape)
            action = brain.step(observation)
            expected = reference.step(observation)
            worst = max(worst, float(np.max(np.abs(np.asarray(action) - expected))))
    return worst


@pytest.mark.parametrize("options", CTRNN_CASES + random_ctrnn_cases(12, seed=2024))
def test_ctrnn_matches_reference(options: dict[str, Any]) -> None:
    """The CTRNN fast path computes the documented update for every option combination."""
    options = {"number_neurons": 6, **options}
    assert compare("CTRNN", options, OBSERVATION_SPACE, seed=3) <= TOLERANCE


@pytest.mark.parametrize(
    "options",
    [
        {"hidden_size": 1},
        {"hidden_size": 4, "number_layers": 2},
        {"hidden_size": 3, "number_layers": 3, "use_bias": False},
        {"hidden_size": 3, "number_layers": 2, "normalize_input": True},
        {"hidden_size": 2, "normalize_input": True, "normalize_input_target": 20.0},
    ],
)
def test_lstm_matches_reference(options: dict[str, Any]) -> None:
    """The LSTM fast path computes the documented gates, cell and output for stacked layers."""
    assert compare("LSTM", options, OBSERVATION_SPACE, seed=4) <= TOLERANCE


@pytest.mark.parametrize(
    "options", [{"hidden_layers": [6]}, {"hidden_layers": [5, 3], "activation": "relu"},
                {"hidden_layers": [4], "use_bias": False}],
)  # fmt: skip
def test_ffnn_matches_reference(options: dict[str, Any]) -> None:
    """The FFNN computes the documented layers."""
    assert compare("FFNN", options, OBSERVATION_SPACE, seed=5) <= TOLERANCE


NOISY = {"parameter_perturbations": 0.1}
COMPOSED_CASES: list[dict[str, Any]] = [
    {"parts": [{"type": "FFNN", "hidden_layers": [4]}, {"type": "CTRNN", "number_neurons": 5}],
     "sizes": [3]},
    {"parts": [{"type": "conv", "layers": [{"channels": 2, "kernel": 2, "padding": 1,
                                            "pool": "max"}]},
               {"type": "LSTM", "hidden_size": 3}]},
    {"parts": [{"type": "CTRNN", "number_neurons": 4, **NOISY},
               {"type": "FFNN", "hidden_layers": []},
               {"type": "CTRNN", "number_neurons": 3, **NOISY}], "sizes": [4, 2]},
]  # fmt: skip


@pytest.mark.parametrize("options", COMPOSED_CASES, ids=range(len(COMPOSED_CASES)))
def test_composed_matches_reference(options: dict[str, Any]) -> None:
    """A composed brain is its parts' references chained on their genome slices, raw outputs
    passed on, noisy parts drawing from the one episode generator in part order."""
    assert compare("composed", options, OBSERVATION_SPACE, seed=7) <= TOLERANCE


EGOCENTRIC_CASES: list[dict[str, Any]] = [
    {"parts": [{"type": "egocentric", "size": 3}, {"type": "FFNN", "hidden_layers": [4]}]},
    {"parts": [{"type": "egocentric", "size": 5, "channel": 2},
               {"type": "CTRNN", "number_neurons": 3, **NOISY}]},
]  # fmt: skip


@pytest.mark.parametrize("options", EGOCENTRIC_CASES, ids=range(len(EGOCENTRIC_CASES)))
def test_egocentric_front_ends_match_reference(options: dict[str, Any]) -> None:
    """The window around the agent (the largest value of its channel), chained into the next
    part, on (6, 5, 3) images of normal noise."""
    image = gym.spaces.Box(-np.inf, np.inf, (6, 5, 3), dtype=np.float64)
    assert compare("composed", options, image, seed=9) <= TOLERANCE


def test_conv_on_a_vector_observation_matches_reference() -> None:
    """A vector observation is a 1 x n single-channel image (images: tests/brains/test_conv.py)."""
    options = {"layers": [{"channels": 3, "kernel": 3, "padding": 1, "activation": "tanh"}]}
    assert compare("conv", options, OBSERVATION_SPACE, seed=8) <= TOLERANCE


@pytest.mark.parametrize("brain_type", sorted(set(REFERENCES) - {"egocentric"}))  # cuts images
@pytest.mark.parametrize("space", [gym.spaces.Discrete(16), gym.spaces.Discrete(5, start=3)])
def test_discrete_observations_match_reference(brain_type: str, space: gym.Space) -> None:
    """Discrete observations are one-hot inputs (``start`` subtracted) for every brain type."""
    options = {
        "CTRNN": {"number_neurons": 4},
        "LSTM": {"hidden_size": 3},
        "conv": {"layers": [{"channels": 2, "kernel": 3, "padding": 1}]},
    }.get(brain_type, {})
    assert compare(brain_type, options, space, seed=6) <= TOLERANCE


def test_every_built_in_brain_type_has_a_reference() -> None:
    """A new built-in brain type needs a slow reference here too (types registered by other
    modules, such as the guide's example, are not built in)."""
    built_in = {
        name
        for name in brain_types()
        if get_brain_type(name)[1].__module__.startswith("neuro_evolution.")
    }
    assert {"CTRNN", "FFNN", "LSTM", "composed", "conv", "egocentric"} <= built_in
    assert built_in <= set(REFERENCES)


@pytest.mark.parametrize(
    ("rows", "cols", "base"), [(6, 6, 2.0), (10, 3, 1.5), (3, 10, 2.0), (7, 1, 1.05), (1, 5, 3.0)]
)
def test_logarithmic_mask_matches_predecessor_algorithm(rows: int, cols: int, base: float) -> None:
    """The logarithmic mask is the predecessor's: offsets ±floor(base**k) from a pseudo-diagonal,
    and every row has a connection."""
    mask = logarithmic_mask(rows, cols, base)
    assert mask.tolist() == reference_logarithmic_mask(rows, cols, base)
    assert mask.any(axis=1).all()


def test_logarithmic_masks_connect_every_row_and_column_as_the_predecessor_drew_them() -> None:
    """A logarithmic mask of any shape (up to 24 x 24, but 2 x 2) has an entry in every row and
    every column: no input is ignored, no neuron or output is cut off. Masks as wide as V
    (inputs <= N) and the square W are the transpose of the predecessor's pattern, which it drew
    target x source; e.g. 4 inputs x 6 neurons at base 2 would otherwise ignore input 3."""
    rng = np.random.default_rng(0)
    for rows in range(1, 25):
        for cols in range(1, 25):
            for base in (1.05, 1.5, 2.0, 3.0):
                mask = make_mask("logarithmic", rows, cols, base, rng)
                if (rows, cols) != (2, 2):
                    assert mask.any(axis=1).all() and mask.any(axis=0).all(), (rows, cols, base)
                if cols >= rows:
                    predecessor = np.array(reference_logarithmic_mask(cols, rows, base)).T
                    assert mask.tolist() == predecessor.tolist(), (rows, cols, base)
