"""The JAX batch brains compute what the numpy single brains compute (float64: <= 1e-9 over 500
steps, for every option set of the reference tests; float32: the bound in docs/jax.md)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import ACTION_SPACE, CTRNN_CASES, OBSERVATION_SPACE, random_ctrnn_cases, require

require("jax")
import examples.elman_brain  # noqa: E402, F401  (registers the guide's Elman type)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from neuro_evolution.brains import make_template  # noqa: E402
from neuro_evolution.brains.base import parse_brain_config  # noqa: E402
from neuro_evolution.brains.jax_brains import decode_actions, encode_inputs  # noqa: E402
from neuro_evolution.support.errors import ConfigError  # noqa: E402

STEPS = 500
COUNT = 3
FLOAT64_TOLERANCE = 1e-9
LSTM_CASES = [
    {"hidden_size": 1},
    {"hidden_size": 4, "number_layers": 2},
    {"hidden_size": 3, "number_layers": 3, "use_bias": False},
    {"hidden_size": 3, "normalize_input": True, "normalize_input_target": 2.0},
]
FFNN_CASES = [
    {"hidden_layers": [6]},
    {"hidden_layers": [5, 3], "activation": "relu"},
    {"hidden_layers": [4], "use_bias": False},
]
CASES = (
    [("CTRNN", {"number_neurons": 6, **c}) for c in CTRNN_CASES + random_ctrnn_cases(12, 2024)]
    + [("LSTM", c) for c in LSTM_CASES]
    + [("FFNN", c) for c in FFNN_CASES]
    + [("Elman", {"hidden_size": 5})]  # a user's type: the guide's example, its own JAX form
)


def run_both(
    brain_type: str, options: dict[str, Any], space: gym.Space, seed: int, x64: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Raw outputs (STEPS, COUNT, outputs) of COUNT numpy single brains and of one JAX batch
    brain on the same inputs, the JAX brain fed the numpy generators' noise draws."""
    config = parse_brain_config({"type": brain_type, **options}, "brain")
    template = make_template(config, space, ACTION_SPACE, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    genomes = rng.normal(0.0, 0.7, (COUNT, template.genome_size))
    brains = [template.build(genome) for genome in genomes]
    for i, brain in enumerate(brains):
        brain.reset(np.random.default_rng([seed, i]))
    noise_rngs = [np.random.default_rng([seed, i]) for i in range(COUNT)]
    space.seed(seed)
    if isinstance(space, gym.spaces.Box):
        observations = rng.normal(0.0, 2.0, (STEPS, COUNT, *space.shape))
    else:
        observations = np.array([[space.sample() for _ in range(COUNT)] for _ in range(STEPS)])
    expected = np.array([[b.step(o) for b, o in zip(brains, row)] for row in observations])
    with jax.enable_x64(x64):
        dtype = jnp.float64 if x64 else jnp.float32
        jb = template.jax_brain()
        params = jb.params(genomes, dtype)
        state = jb.initial_state(params)
        step = jax.jit(jb.step)
        got = []
        for row in observations:
            noise = None
            if jb.noise_size:
                noise = jnp.asarray(
                    np.stack([r.standard_normal(jb.noise_size) for r in noise_rngs])
                )
            inputs = encode_inputs(template.io, jnp.asarray(row), dtype)
            state, outputs = step(params, state, inputs, noise)
            got.append(np.asarray(decode_actions(template.io, outputs)))
    return expected, np.array(got)


@pytest.mark.parametrize(("brain_type", "options"), CASES)
def test_jax_brain_equals_numpy_brains_in_float64(brain_type: str, options: dict) -> None:
    """Every reference option set: JAX batch brain i acts like numpy single brain i (<= 1e-9)."""
    expected, got = run_both(brain_type, options, OBSERVATION_SPACE, seed=3, x64=True)
    assert np.max(np.abs(got - expected)) <= FLOAT64_TOLERANCE


@pytest.mark.parametrize("brain_type", ["CTRNN", "FFNN", "LSTM"])
@pytest.mark.parametrize("space", [gym.spaces.Discrete(16), gym.spaces.Discrete(5, start=3)])
def test_jax_brain_one_hot_encodes_discrete_observations(brain_type: str, space) -> None:
    """Discrete observations are one-hot inputs (``start`` subtracted), as on the numpy path."""
    options = {"CTRNN": {"number_neurons": 4}, "LSTM": {"hidden_size": 3}}.get(brain_type, {})
    expected, got = run_both(brain_type, options, space, seed=6, x64=True)
    assert np.max(np.abs(got - expected)) <= FLOAT64_TOLERANCE


FLOAT32_TOLERANCE = 1e-4  # what docs/jax.md states for float32 (measured worst: 2.0e-5)


@pytest.mark.parametrize(("brain_type", "options"), CASES)
def test_jax_brain_in_float32_stays_within_the_documented_bound(brain_type, options) -> None:
    """In float32 the outputs stay within 1e-4 of float64 numpy over 500 steps."""
    expected, got = run_both(brain_type, options, OBSERVATION_SPACE, seed=3, x64=False)
    assert got.dtype == np.float32
    assert np.max(np.abs(got - expected)) <= FLOAT32_TOLERANCE


def test_brain_type_without_a_jax_form_is_refused_in_one_line_naming_the_method() -> None:
    """A template that does not write ``jax_brain`` refuses with a ConfigError naming
    brain.type, the type and the method to write; a composed brain names the part lacking it."""
    import examples.numpy_only_brain  # noqa: F401  (registers NumpyOnlyElman)

    config = parse_brain_config({"type": "NumpyOnlyElman"}, "brain")
    template = make_template(config, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0))
    refusal = (
        "brain type 'NumpyOnlyElman' has no JAX form; write NumpyOnlyTemplate.jax_brain() "
        "(see docs/writing-a-brain.md) or use another evaluation handler"
    )
    with pytest.raises(ConfigError) as single:
        template.jax_brain()
    assert str(single.value) == f"brain.type: {refusal}"
    parts = [{"type": "FFNN", "hidden_layers": []}, {"type": "NumpyOnlyElman"}]
    composed = {"type": "composed", "parts": parts, "sizes": [2]}
    config = parse_brain_config(composed, "brain")
    template = make_template(config, OBSERVATION_SPACE, ACTION_SPACE, np.random.default_rng(0))
    with pytest.raises(ConfigError) as part:
        template.jax_brain()
    assert str(part.value) == f"brain.parts[1].type: {refusal}"
