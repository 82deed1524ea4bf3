"""Every built-in brain type exported (ONNX and the numpy file) acts as the brain does.

The rule held: on real episodes, the numpy file returns the brain's actions and internal states
bit for bit; the ONNX model (float64 throughout) returns the same Discrete actions, Box actions
within 1e-6 (float32 actions of float64 values that differ in the last bits of a MatMul's sum),
and states within 1e-12.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from export_cases import BRAIN_CASES, case_parts, exported_pair, scaled
from helpers import environment_extras, require

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import parse_brain_config

require("export")

ONNX_STATE_TOLERANCE = 1e-12
ONNX_BOX_TOLERANCE = 1e-6


def check_action(expected: Any, numpy_action: Any, onnx_action: Any) -> None:
    expected = np.asarray(expected)
    assert np.asarray(numpy_action).dtype == expected.dtype
    assert np.array_equal(numpy_action, expected)
    assert np.asarray(onnx_action).dtype == expected.dtype
    assert np.asarray(onnx_action).shape == expected.shape
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(onnx_action, expected, rtol=0, atol=ONNX_BOX_TOLERANCE)
    else:
        assert np.array_equal(onnx_action, expected)


def check_state(expected: dict, numpy_state: dict, onnx_state: dict) -> None:
    assert set(numpy_state) == set(onnx_state) == set(expected)
    for name, value in expected.items():
        assert np.array_equal(numpy_state[name], value), name
        np.testing.assert_allclose(onnx_state[name], value, rtol=0, atol=ONNX_STATE_TOLERANCE)


@pytest.mark.parametrize("name", sorted(BRAIN_CASES))
def test_exports_give_the_brains_actions_and_states_on_recorded_episodes(
    name: str, tmp_path: Path
) -> None:
    """Two episodes of up to 60 steps, the env driven by the brain's actions; the exports see
    the raw observations (their scaler is inside them) and feed their states back."""
    for extra in environment_extras(BRAIN_CASES[name][0]):
        require(extra)
    config, template, genome, scaler = case_parts(name)
    env = config.environment.make()
    onnx_policy, numpy_policy = exported_pair(
        tmp_path, template, genome, scaler, env.observation_space
    )
    brain = template.build(genome)
    steps = 0
    for seed in (11, 12):
        observation, _ = env.reset(seed=seed)
        brain.reset(np.random.default_rng(seed))
        onnx_state, numpy_state = onnx_policy.initial_state(), numpy_policy.initial_state()
        for _ in range(60):
            action = brain.step(scaled(scaler, observation))
            onnx_action, onnx_state = onnx_policy.step(observation, onnx_state)
            numpy_action, numpy_state = numpy_policy.step(observation, numpy_state)
            check_action(action, numpy_action, onnx_action)
            check_state(brain.internal_state(), numpy_state, onnx_state)
            observation, _, terminated, truncated, _ = env.step(action)
            steps += 1
            if terminated or truncated:
                break
    env.close()
    assert steps >= 4


ACTION_SPACES = {
    "multidiscrete": gym.spaces.MultiDiscrete([3, 4], start=[1, -2]),
    "multibinary": gym.spaces.MultiBinary(3),
    "unbounded-box": gym.spaces.Box(-np.inf, np.inf, (2,), dtype=np.float64),
    "discrete-start": gym.spaces.Discrete(3, start=-1),
}


@pytest.mark.parametrize("kind", sorted(ACTION_SPACES))
@pytest.mark.parametrize("brain", ["CTRNN", "LSTM"])
def test_every_action_space_decodes_as_the_brain_decodes(
    kind: str, brain: str, tmp_path: Path
) -> None:
    """MultiDiscrete (one argmax per block, plus start), MultiBinary (out > 0), an unbounded
    Box (raw outputs) and a Discrete with a start, on 40 observations drawn from the space."""
    space = gym.spaces.Box(-2.0, 2.0, (5,), dtype=np.float32)
    section = parse_brain_config({"type": brain}, "brain")
    template = make_template(section, space, ACTION_SPACES[kind], np.random.default_rng(1))
    genome = np.random.default_rng(2).normal(0.0, 2.0, template.genome_size)
    onnx_policy, numpy_policy = exported_pair(tmp_path, template, genome, None, space)
    brain_ = template.build(genome)
    brain_.reset(np.random.default_rng(0))
    onnx_state, numpy_state = onnx_policy.initial_state(), numpy_policy.initial_state()
    space.seed(3)
    for _ in range(40):
        observation = space.sample()
        action = brain_.step(observation)
        onnx_action, onnx_state = onnx_policy.step(observation, onnx_state)
        numpy_action, numpy_state = numpy_policy.step(observation, numpy_state)
        check_action(action, numpy_action, onnx_action)
        assert ACTION_SPACES[kind].contains(np.asarray(onnx_action))


def test_tied_outputs_pick_the_lower_action_as_the_brain_does(tmp_path: Path) -> None:
    """With large weights tanh rounds two Discrete outputs to exactly 1.0: argmax takes the
    lower action in the brain, and so must both exports."""
    env = gym.make("CartPole-v1")
    section = parse_brain_config({"type": "FFNN", "hidden_layers": [3]}, "brain")
    template = make_template(
        section, env.observation_space, env.action_space, np.random.default_rng(0)
    )
    genome = np.random.default_rng(6).normal(0.0, 60.0, template.genome_size)
    onnx_policy, numpy_policy = exported_pair(
        tmp_path, template, genome, None, env.observation_space
    )
    brain = template.build(genome)
    space = gym.spaces.Box(-3.0, 3.0, (4,), dtype=np.float32)
    space.seed(7)
    ties = 0
    for _ in range(60):
        observation = space.sample()
        outputs = brain.outputs(template.io.encode(observation))
        ties += int(outputs[0] == outputs[1])
        action = brain.step(observation)
        check_action(action, numpy_policy.step(observation)[0], onnx_policy.step(observation)[0])
    assert ties >= 10
