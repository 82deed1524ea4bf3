"""The LSTM's normalize_input: batch and single brains agree bit for bit, the shift needs biases,
and a template saved before the option existed restores without scaling.
(The scaled step itself is checked against the slow reference in test_brain_references.py.)"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import BrainTemplate, parse_brain_config
from neuro_evolution.core.schema import ConfigError

# bounds not symmetric about 0 (so inputs are shifted), one unbounded element
SHIFTED = gym.spaces.Box(
    low=np.array([-1.0, 0.0, -3.0, -np.inf, -5.0]),
    high=np.array([3.0, 1.0, 5.0, np.inf, 5.0]),
    dtype=np.float64,
)
SYMMETRIC = gym.spaces.Box(-2.0, 2.0, (5,), dtype=np.float64)
ACTIONS = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float64)


def lstm(space: gym.Space, **options: object) -> BrainTemplate:
    config = parse_brain_config({"type": "LSTM", "hidden_size": 3, **options}, "brain")
    return make_template(config, space, ACTIONS, np.random.default_rng(0))


def inputs(count: int, steps: int) -> np.ndarray:
    return np.random.default_rng(2).normal(0.0, 2.0, (steps, count, 5))


def test_batch_of_scaled_lstms_equals_single_brains() -> None:
    """Brain i of a batch acts bit for bit like a single brain of genome i with the inputs
    scaled and shifted (both fold the same rows in the same order)."""
    template = lstm(SHIFTED, number_layers=2, normalize_input=True, normalize_input_target=4.0)
    count, steps = 4, 200
    genomes = np.random.default_rng(1).normal(0.0, 1.0, (count, template.genome_size))
    observed = inputs(count, steps)
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(i) for i in range(count)])
    actions = np.array([batch.step(observed[t]) for t in range(steps)])
    for i in range(count):
        brain = template.build(genomes[i])
        brain.reset(np.random.default_rng(i))
        single = np.array([brain.step(observed[t, i]) for t in range(steps)])
        np.testing.assert_array_equal(actions[:, i], single)


def test_scaling_changes_the_brain_and_leaves_the_genome_alone() -> None:
    """The same genome acts differently with normalize_input on, and fill never writes into it."""
    plain, scaled = lstm(SHIFTED), lstm(SHIFTED, normalize_input=True, normalize_input_target=3.0)
    genome = np.random.default_rng(3).normal(0.0, 1.0, plain.genome_size)
    kept = genome.copy()
    a, b = plain.build(genome), scaled.build(genome)
    a.reset(np.random.default_rng(0))
    b.reset(np.random.default_rng(0))
    observation = inputs(1, 1)[0, 0]
    assert not np.allclose(a.step(observation), b.step(observation))
    np.testing.assert_array_equal(genome, kept)


def test_a_shift_without_biases_is_one_config_line() -> None:
    """Asymmetric bounds shift the inputs, which needs the gate biases; symmetric ones do not."""
    needs_bias = r"^brain\.normalize_input: .*set brain\.use_bias to true"
    with pytest.raises(ConfigError, match=needs_bias):
        lstm(SHIFTED, normalize_input=True, use_bias=False)
    template = lstm(SYMMETRIC, normalize_input=True, use_bias=False)
    assert template.input_shift.tolist() == [0.0] * 5
    assert template.input_scale.tolist() == [0.5] * 5


def test_normalize_input_needs_a_box_observation() -> None:
    with pytest.raises(ConfigError, match=r"^brain\.normalize_input: needs a Box"):
        lstm(gym.spaces.Discrete(4), normalize_input=True)


def test_a_template_saved_before_the_option_restores_without_scaling(tmp_path: Path) -> None:
    """An LSTM template state without input_scale/input_shift (saved by an older version, whose
    config had no normalize_input) restores and acts as a template without scaling."""
    template = lstm(SHIFTED)
    state = template.to_state()
    old = {key: value for key, value in state.items() if key not in ("input_scale", "input_shift")}
    config = str(np.asarray(old["config"]))
    old["config"] = config.replace(', "normalize_input": false', "").replace(
        ', "normalize_input_target": 1.0', ""
    )
    assert "normalize_input" not in old["config"]
    np.savez(tmp_path / "old.npz", **old)
    with np.load(tmp_path / "old.npz", allow_pickle=False) as saved:
        restored = BrainTemplate.from_state(dict(saved))
    genome = np.random.default_rng(4).normal(0.0, 1.0, template.genome_size)
    a, b = template.build(genome), restored.build(genome)
    a.reset(np.random.default_rng(0))
    b.reset(np.random.default_rng(0))
    for observation in inputs(1, 50)[:, 0]:
        np.testing.assert_array_equal(a.step(observation), b.step(observation))
