"""The FFNN's ``output_activation``: identity gives the raw outputs (a Discrete action is the
argmax of x·W itself, where tanh ties every output above ~19), in the single, batch and JAX
brains alike; a bounded Box action space refuses it in one line."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from brain_references import REFERENCES
from helpers import OBSERVATION_SPACE, installed

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.support.errors import ConfigError

LANDER_OBSERVATIONS = gym.spaces.Box(-np.inf, np.inf, (8,), dtype=np.float32)
LINEAR = {"type": "FFNN", "hidden_layers": [], "use_bias": False}


def template_for(options: dict, observations: gym.Space, actions: gym.Space):
    config = parse_brain_config(options, "brain")
    return make_template(config, observations, actions, np.random.default_rng(0))


@pytest.mark.parametrize("hidden", [[], [5], [4, 3]])
def test_identity_outputs_match_the_reference_on_an_unbounded_box(hidden: list[int]) -> None:
    actions = gym.spaces.Box(-np.inf, np.inf, (3,), dtype=np.float64)
    options = {"type": "FFNN", "hidden_layers": hidden, "output_activation": "identity"}
    template = template_for(options, OBSERVATION_SPACE, actions)
    rng = np.random.default_rng(7)
    genome = rng.normal(0.0, 3.0, template.genome_size)
    brain = template.build(genome)
    reference = REFERENCES["FFNN"](template, genome, OBSERVATION_SPACE)
    observations = rng.normal(0.0, 2.0, (50, *OBSERVATION_SPACE.shape))
    outputs = np.array([brain.step(o) for o in observations])
    expected = np.array([reference.step(o) for o in observations])
    assert np.max(np.abs(outputs - expected)) <= 1e-12
    assert np.max(np.abs(outputs)) > 1.0  # raw values, not squashed into [-1, 1]


def saturated_case() -> tuple[np.ndarray, np.ndarray]:
    """A linear policy (4 actions x 8 inputs) whose logits for one observation are
    (25, 40, -3, 30): tanh rounds 25, 40 and 30 to exactly 1.0."""
    weights = np.zeros((4, 8))
    weights[:, 0] = [25.0, 40.0, -3.0, 30.0]
    observation = np.zeros(8, dtype=np.float32)
    observation[0] = 1.0
    return weights.ravel(), observation


def test_identity_takes_the_argmax_of_the_logits_where_tanh_ties() -> None:
    genome, observation = saturated_case()
    actions = {}
    for name in ("tanh", "identity"):
        template = template_for(
            {**LINEAR, "output_activation": name}, LANDER_OBSERVATIONS, gym.spaces.Discrete(4)
        )
        single = template.build(genome).step(observation)
        batch = template.batch_brain(np.stack([genome, genome])).step(np.stack([observation] * 2))
        assert [single, single] == batch.tolist()
        actions[name] = single
    assert actions == {"tanh": 0, "identity": 1}  # tanh: a tie, the lowest action wins


def test_identity_on_the_jax_brain_is_the_numpy_brains_action() -> None:
    if not installed("jax"):
        pytest.skip("the jax extra is not installed")
    import jax
    import jax.numpy as jnp

    from neuro_evolution.brains.jax_brains import decode_actions, encode_inputs

    genome, observation = saturated_case()
    for name, expected in (("tanh", 0), ("identity", 1)):
        template = template_for(
            {**LINEAR, "output_activation": name}, LANDER_OBSERVATIONS, gym.spaces.Discrete(4)
        )
        with jax.enable_x64(True):
            brain = template.jax_brain()
            params = brain.params(genome[None, :], jnp.float64)
            inputs = encode_inputs(template.io, jnp.asarray(observation[None, :]), jnp.float64)
            _, outputs = brain.step(params, brain.initial_state(params), inputs, None)
            assert np.asarray(decode_actions(template.io, outputs)).tolist() == [expected]


def test_identity_on_a_bounded_box_action_space_is_one_config_error() -> None:
    bounded = gym.spaces.Box(-2.0, 2.0, (1,), dtype=np.float32)
    with pytest.raises(ConfigError) as error:
        template_for({**LINEAR, "output_activation": "identity"}, LANDER_OBSERVATIONS, bounded)
    message = str(error.value)
    assert message.startswith("brain.output_activation: identity leaves the outputs unbounded")
    assert message.endswith("use tanh") and "\n" not in message
