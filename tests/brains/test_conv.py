"""The conv front end: its kernels and brains against the plain-loop reference, batch and JAX
paths against the single brain, its config errors, and its genome on a CarRacing-sized image."""

from __future__ import annotations

from typing import Any

import conv_reference
import gymnasium as gym
import numpy as np
import pytest
from conv_reference import ReferenceConv
from helpers import require

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.brains.conv_ops import convolve, pool
from neuro_evolution.support.errors import ConfigError, UnsupportedSpaceError

TOLERANCE = 1e-12
RAW = gym.spaces.Box(-1.0, 1.0, (3,), dtype=np.float64)  # action == raw output
IMAGE = gym.spaces.Box(0.0, 1.0, (13, 11, 2), dtype=np.float64)

# (kernel, stride, padding) and (pool kind, size, stride)
CONVOLUTIONS = [(1, 1, 0), (3, 1, 0), (3, 2, 1), (4, 3, 2), (5, 2, 0), (2, 1, 3)]
POOLS = [("max", 2, 2), ("average", 2, 2), ("max", 3, 1), ("average", 3, 2), ("max", 1, 1)]

LAYER_CASES: list[dict[str, Any]] = [
    {"layers": [{"channels": 3, "kernel": 3}]},
    {"layers": [{"channels": 2, "kernel": 3, "stride": 2, "padding": 1, "pool": "max"}]},
    {
        "layers": [
            {"channels": 3, "kernel": 3, "padding": 1, "activation": "tanh", "pool": "average"},
            {"channels": 2, "kernel": 2, "stride": 2, "activation": "none"},
        ],
        "use_bias": False,
        "input_scale": 0.5,
    },
    {"layers": [{"channels": 4, "kernel": 5, "pool": "max", "pool_size": 3, "pool_stride": 1}]},
]


def template_for(options: dict[str, Any], space: gym.Space = IMAGE, action: gym.Space = RAW):
    config = parse_brain_config({"type": "conv", **options}, "brain")
    return make_template(config, space, action, np.random.default_rng(0))


@pytest.mark.parametrize(("kernel", "stride", "padding"), CONVOLUTIONS)
def test_convolution_matches_the_plain_loops_for_each_of_a_batch(kernel, stride, padding):
    """A stack of 3 images with 3 kernels: image p convolved with kernel p, as the loops say."""
    rng = np.random.default_rng(kernel * 10 + stride)
    images = rng.normal(size=(3, 9, 7, 2))
    kernels = rng.normal(size=(3, 2, kernel, kernel, 4))
    bias = rng.normal(size=(3, 4))
    got = convolve(images, kernels, bias, stride, padding)
    for p in range(3):
        expected = conv_reference.convolve(
            images[p].tolist(), kernels[p].tolist(), bias[p].tolist(), stride, padding
        )
        assert got[p].shape == np.shape(expected)
        assert np.max(np.abs(got[p] - np.array(expected))) <= TOLERANCE
        alone = convolve(images[p : p + 1], kernels[p : p + 1], bias[p : p + 1], stride, padding)
        np.testing.assert_array_equal(alone[0], got[p])  # a batch of one: bit-identical


def test_blocks_of_images_give_bit_identical_results(monkeypatch) -> None:
    """The im2col runs over blocks of images; any block size computes the same numbers."""
    from neuro_evolution.brains import conv_ops

    rng = np.random.default_rng(5)
    images, kernels = rng.normal(size=(7, 12, 10, 3)), rng.normal(size=(7, 3, 3, 3, 4))
    whole = convolve(images, kernels, None, 2, 1)
    for block_bytes in (1, 2 * 6 * 5 * 27 * 8, 1 << 30):  # one image, two, all at once
        monkeypatch.setattr(conv_ops, "BLOCK_BYTES", block_bytes)
        np.testing.assert_array_equal(convolve(images, kernels, None, 2, 1), whole)


@pytest.mark.parametrize(("kind", "size", "stride"), POOLS)
def test_pooling_matches_the_plain_loops(kind: str, size: int, stride: int) -> None:
    images = np.random.default_rng(size).normal(size=(3, 8, 7, 3))
    got = pool(images, kind, size, stride)
    for p in range(3):
        expected = np.array(conv_reference.pool(images[p].tolist(), kind, size, stride))
        assert got[p].shape == expected.shape
        assert np.max(np.abs(got[p] - expected)) <= TOLERANCE


def run_brains(template, genomes: np.ndarray, observations: np.ndarray):
    """Actions of single brains (steps, P, ...) and of one batch brain on the same inputs."""
    singles = [template.build(g) for g in genomes]
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(i) for i in range(len(genomes))])
    single_actions, batch_actions = [], []
    for row in observations:
        single_actions.append([brain.step(o) for brain, o in zip(singles, row)])
        batch_actions.append(batch.step(row))
    return np.array(single_actions), np.array(batch_actions)


@pytest.mark.parametrize("options", LAYER_CASES, ids=range(len(LAYER_CASES)))
@pytest.mark.parametrize("action", ["raw", "features"])
def test_conv_brain_matches_reference_and_batch_equals_single(options, action) -> None:
    """The brain computes the documented layers (dense head or raw features), and row i of a
    batch brain is bit-identical to single brain i."""
    template = template_for(options)
    if action == "features":  # as an intermediate part: the features themselves, raw
        from neuro_evolution.brains.spaces import FeatureSpace

        size = template.feature_size(template.config, IMAGE)
        template = template_for(options, action=FeatureSpace(size))
        assert not template.head and template.io.output_size == size
    genomes = np.random.default_rng(1).normal(0.0, 0.7, (3, template.genome_size))
    observations = np.random.default_rng(2).random((4, 3, *IMAGE.shape))
    single, batch = run_brains(template, genomes, observations)
    np.testing.assert_array_equal(batch, single)
    for i, genome in enumerate(genomes):
        reference = ReferenceConv(template, genome, IMAGE)
        expected = np.array([reference.step(row[i]) for row in observations])
        assert np.max(np.abs(single[:, i] - expected)) <= TOLERANCE


@pytest.mark.parametrize(
    ("space", "shape"),
    [
        (gym.spaces.Box(0, 255, (10, 9), dtype=np.uint8), (10, 9, 1)),
        (gym.spaces.Box(-1, 1, (7,)), (1, 7, 1)),
        (gym.spaces.Discrete(6, start=2), (1, 6, 1)),
    ],
)
def test_grayscale_vector_and_discrete_observations_are_one_channel_images(space, shape):
    options = {"layers": [{"channels": 2, "kernel": 1}], "input_scale": 0.25}
    template = template_for(options, space=space)
    assert template.image_shape == shape
    genome = np.random.default_rng(3).normal(size=template.genome_size)
    brain, reference = template.build(genome), ReferenceConv(template, genome, space)
    space.seed(0)
    for _ in range(5):
        observation = space.sample()
        assert np.max(np.abs(brain.step(observation) - reference.step(observation))) <= 1e-12


def test_frame_stacked_images_keep_their_channels_and_genome_follows_the_layout() -> None:
    """(H, W, 4) stacked frames: the kernel sees 4 channels; genome = K0 + b0 + D + d."""
    space = gym.spaces.Box(0, 255, (12, 12, 4), dtype=np.uint8)
    template = template_for({"layers": [{"channels": 5, "kernel": 4, "stride": 2}]}, space=space)
    features = 5 * 5 * 5
    assert template.image_shape == (12, 12, 4)
    assert template.genome_size == 4 * 4 * 4 * 5 + 5 + features * 3 + 3


BAD = [
    ({"layers": []}, "brain.layers", "at least one"),
    ({"layers": [{"kernel": 20}]}, "brain.layers[0].kernel", "does not fit the 13x11"),
    ({"layers": [{"kernel": 3, "stride": 4, "pool": "max", "pool_size": 4}]},
     "brain.layers[0].pool_size", "does not fit the 3x3"),
    ({"layers": [{"channels": 0}]}, "brain.layers[0].channels", "integer >= 1"),
    ({"layers": [{"pool": "min"}]}, "brain.layers[0].pool", "one of"),
    ({"layers": [{"kernal": 3}]}, "brain.layers[0].kernal", "Did you mean `kernel`"),
]  # fmt: skip


@pytest.mark.parametrize(("options", "field", "message"), BAD)
def test_bad_conv_configs_name_the_field(options: dict, field: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        template_for(options)
    text = str(error.value)
    assert text.startswith(field + ":") and message in text and "\n" not in text


def test_an_observation_of_four_dimensions_is_refused_in_one_line() -> None:
    with pytest.raises(UnsupportedSpaceError, match=r"images \(H, W, C\).*\(2, 3, 4, 5\)"):
        template_for({}, space=gym.spaces.Box(0, 1, (2, 3, 4, 5)))


CARRACING = gym.spaces.Box(0, 255, (96, 96, 3), dtype=np.uint8)  # CarRacing-v3's spaces
CARRACING_ACTIONS = gym.spaces.Box(np.array([-1, 0, 0]), np.array([1, 1, 1]), dtype=np.float32)
FRONT_END = {
    "type": "conv",
    "input_scale": 1 / 255,
    "layers": [
        {"channels": 8, "kernel": 8, "stride": 4, "pool": "max"},
        {"channels": 8, "kernel": 3, "stride": 2, "pool": "max"},
    ],
}


def test_a_front_end_shrinks_the_carracing_genome_to_a_few_thousand_genes() -> None:
    """A 10-neuron CTRNN on 96x96x3 pixels has 276,620 genes; behind the front end 2,588:
    96 -> conv 8/4 -> 23 -> pool -> 11 -> conv 3/2 -> 5 -> pool -> 2, so 2x2x8 = 32 features."""
    ctrnn = {"type": "CTRNN", "number_neurons": 10}
    rng = np.random.default_rng(0)
    flat = make_template(parse_brain_config(ctrnn, "brain"), CARRACING, CARRACING_ACTIONS, rng)
    assert flat.genome_size == 276_620
    config = parse_brain_config({"type": "composed", "parts": [FRONT_END, ctrnn]}, "brain")
    composed = make_template(config, CARRACING, CARRACING_ACTIONS, rng)
    conv_genes = (8 * 8 * 3 * 8 + 8) + (3 * 3 * 8 * 8 + 8)
    ctrnn_genes = 32 * 10 + 10 * 10 + 10 * 3 + 10
    assert composed.offsets == (0, conv_genes, conv_genes + ctrnn_genes)
    assert composed.genome_size == 2_588
    brain = composed.build(np.random.default_rng(1).normal(0.0, 0.1, composed.genome_size))
    brain.reset(np.random.default_rng(0))
    assert CARRACING_ACTIONS.contains(brain.step(CARRACING.sample()).astype(np.float32))


@pytest.mark.parametrize("options", LAYER_CASES, ids=range(len(LAYER_CASES)))
def test_jax_conv_brain_equals_the_numpy_batch_brain(options: dict[str, Any]) -> None:
    """float64: the JAX conv brain's outputs are the numpy brains' to 1e-9."""
    require("jax")
    import jax
    import jax.numpy as jnp

    from neuro_evolution.brains.jax_brains import encode_inputs

    template = template_for(options)
    genomes = np.random.default_rng(1).normal(0.0, 0.7, (3, template.genome_size))
    observations = np.random.default_rng(2).random((4, 3, *IMAGE.shape))
    batch = template.batch_brain(genomes)
    with jax.enable_x64(True):
        brain = template.jax_brain()
        params = brain.params(genomes, jnp.float64)
        state = brain.initial_state(params)
        step = jax.jit(brain.step)
        for row in observations:
            state, outputs = step(params, state, encode_inputs(template.io, row, jnp.float64))
            assert np.max(np.abs(np.asarray(outputs) - batch.step(row))) <= 1e-9
