"""The FFNN's ``output_activation``: identity gives the raw outputs (a Discrete action is the
argmax of x·W itself, where tanh ties every output above ~19), in the single, batch and JAX
brains alike; a bounded Box action space refuses it in one line. clip gives the raw outputs
clipped to [-1, 1], scaled to a bounded Box as tanh's outputs are (ARS's clipped linear
policy)."""

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


def clip_reference_actions(
    template, genome: np.ndarray, observations: np.ndarray, actions: gym.spaces.Box
) -> np.ndarray:
    """low + (clip(outputs, -1, 1) + 1) / 2 (high - low), outputs from the reference network."""
    reference = REFERENCES["FFNN"](template, genome, OBSERVATION_SPACE)
    outputs = np.array([reference.step(o) for o in observations])
    return actions.low + (outputs + 1.0) * 0.5 * (actions.high - actions.low)


@pytest.mark.parametrize("hidden", [[], [5]])
def test_clip_is_the_clipped_raw_output_scaled_to_the_box(hidden: list[int]) -> None:
    """Single and batch brains give the reference's actions; with weights of stdev 3 some
    outputs are clipped (actions at the bounds) and some are not (actions strictly inside)."""
    actions = gym.spaces.Box(-2.0, 2.0, (3,), dtype=np.float64)
    template = template_for(
        {"type": "FFNN", "hidden_layers": hidden, "output_activation": "clip"},
        OBSERVATION_SPACE,
        actions,
    )
    rng = np.random.default_rng(7)
    genome = rng.normal(0.0, 0.7, template.genome_size)
    observations = rng.normal(0.0, 2.0, (60, *OBSERVATION_SPACE.shape))
    expected = clip_reference_actions(template, genome, observations, actions)
    single = np.array([template.build(genome).step(o) for o in observations])
    batch = template.batch_brain(np.stack([genome, genome])).step
    batched = np.array([batch(np.stack([o, o]))[1] for o in observations])
    assert np.max(np.abs(single - expected)) <= 1e-12
    assert np.array_equal(single, batched)
    at_bound = np.isclose(np.abs(single), 2.0)
    assert at_bound.any() and (~at_bound).any()


def test_clip_on_the_jax_brain_is_the_numpy_brains_output() -> None:
    if not installed("jax"):
        pytest.skip("the jax extra is not installed")
    import jax
    import jax.numpy as jnp

    from neuro_evolution.brains.jax_brains import encode_inputs

    actions = gym.spaces.Box(-1.0, 1.0, (3,), dtype=np.float64)
    template = template_for(
        {"type": "FFNN", "hidden_layers": [], "output_activation": "clip"},
        OBSERVATION_SPACE,
        actions,
    )
    rng = np.random.default_rng(3)
    genomes = rng.normal(0.0, 0.7, (4, template.genome_size))
    observations = rng.normal(0.0, 2.0, (4, *OBSERVATION_SPACE.shape))
    expected = template.batch_brain(genomes).step(observations)
    with jax.enable_x64(True):
        brain = template.jax_brain()
        params = brain.params(genomes, jnp.float64)
        inputs = encode_inputs(template.io, jnp.asarray(observations), jnp.float64)
        _, outputs = brain.step(params, brain.initial_state(params), inputs, None)
    assert np.max(np.abs(np.asarray(outputs) - expected)) <= 1e-12
    assert np.isclose(np.abs(expected), 1.0).any()
