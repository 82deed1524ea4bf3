"""The egocentric front end: the window around the agent as a loop over the window's cells
computes it, the same in the single, batch and JAX forms and on the sequential and jax handlers,
and one-line refusals for what it cannot cut."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import require, sequential_and_jax_results

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import BrainTemplate, parse_brain_config
from neuro_evolution.brains.egocentric import EgocentricTemplate
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.evaluation.episodes.runner import RunnerSpec
from neuro_evolution.run.experiment import build_template
from neuro_evolution.support.errors import UnsupportedSpaceError

IMAGE = gym.spaces.Box(0.0, 1.0, (6, 7, 3), dtype=np.float64)
RAW = gym.spaces.Box(-np.inf, np.inf, (2,), dtype=np.float64)  # outputs as they are


def composed(size: int = 3, channel: int = 1, **ffnn: Any) -> dict[str, Any]:
    """An egocentric window into a linear FFNN."""
    linear = {"type": "FFNN", "hidden_layers": [], "output_activation": "identity", **ffnn}
    return {
        "type": "composed",
        "parts": [{"type": "egocentric", "size": size, "channel": channel}, linear],
    }


def template_for(brain: dict[str, Any], space: gym.Space = IMAGE, action: gym.Space = RAW):
    config = parse_brain_config(brain, "brain")
    return make_template(config, space, action, np.random.default_rng(0))


def reference_window(image: np.ndarray, channel: int, size: int) -> np.ndarray:
    """The window as the rule states it, one cell at a time."""
    height, width, channels = image.shape
    plane = image[:, :, channel]
    row, col = divmod(int(np.argmax(plane)), width)  # argmax: the first maximum, row-major
    half, values = size // 2, []
    for i in range(size):
        for j in range(size):
            r, c = row + i - half, col + j - half
            for k in range(channels):
                if k == channel:
                    continue
                inside = 0 <= r < height and 0 <= c < width
                values.append(image[r, c, k] if inside else 0.0)
    return np.array(values)


def images(count: int, seed: int) -> np.ndarray:
    """Random images with one agent cell each, some at the corners and edges, some with no
    agent (an all-zero agent channel) and some with two tied agent cells."""
    rng = np.random.default_rng(seed)
    found = rng.random((count, *IMAGE.shape))
    found[:, :, :, 1] = 0.0
    corners = [(0, 0), (0, 6), (5, 0), (5, 6), (2, 0), (0, 3)]
    for index in range(count):
        kind = index % 9
        if kind < len(corners):
            found[index, *corners[kind], 1] = 1.0
        elif kind == 6:
            found[index, rng.integers(6), rng.integers(7), 1] = 1.0
        elif kind == 7:
            found[index, 3, 5, 1] = found[index, 1, 2, 1] = 1.0  # a tie: the first, (1, 2)
    return found  # kind 8: no agent, the window centres on the top-left cell


@pytest.mark.parametrize("size", [1, 3, 5, 13])
def test_the_window_is_the_cells_around_the_agent_in_every_form(size: int) -> None:
    """Single brain and batch brain (all rows and an ``active`` subset) agree with the
    cell-by-cell rule exactly: the window is a copy of the observation's values (the export
    form: the ``composed-egocentric`` case of tests/export_cases.py)."""
    template = template_for(
        {
            "type": "composed",
            "parts": [
                {"type": "egocentric", "size": size, "channel": 1},
                {"type": "FFNN", "hidden_layers": [2]},
            ],
            "sizes": [0],
        }
    )
    front = template.parts[0]
    assert isinstance(front, EgocentricTemplate) and front.genome_size == 0
    observations = images(18, size)
    brain = front.build(np.zeros(0))
    batch = front.batch_brain(np.zeros((18, 0)))
    batch.reset([np.random.default_rng(i) for i in range(18)])
    expected = np.array([reference_window(image, 1, size) for image in observations])
    assert expected.shape == (18, size * size * 2)
    np.testing.assert_array_equal([brain.step(image) for image in observations], expected)
    np.testing.assert_array_equal(batch.step(observations), expected)
    active = np.arange(18) % 3 == 0
    shifted = observations[::-1].copy()
    out = batch.step(shifted, active)
    np.testing.assert_array_equal(out[active], expected[::-1][active])
    np.testing.assert_array_equal(out[~active], expected[~active])  # inactive rows kept


def test_the_jax_form_gives_the_numpy_windows_and_actions_exactly() -> None:
    """The JAX window is the numpy window bit for bit (float64, and float32 of the rounded
    images); the composed brain's outputs are the batch brain's to 1e-9 (float64), the bound of
    every JAX form (the FFNN's sums run in another order)."""
    require("jax")
    import jax
    import jax.numpy as jnp

    from neuro_evolution.brains.jax_brains import encode_inputs

    template = template_for(composed(size=5))
    genomes = np.random.default_rng(3).normal(0.0, 1.0, (18, template.genome_size))
    observations = images(18, 4)
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(i) for i in range(18)])
    expected = batch.step(observations)
    with jax.enable_x64(True):
        brain = template.jax_brain()
        params = brain.params(genomes, jnp.float64)
        state = brain.initial_state(params)
        _, got = brain.step(params, state, encode_inputs(template.io, observations, jnp.float64))
        np.testing.assert_allclose(np.asarray(got), expected, rtol=0, atol=1e-9)
        front = template.parts[0]
        window = front.jax_brain()
        small = window.params(np.zeros((18, 0)), jnp.float32)
        inputs = encode_inputs(front.io, observations, jnp.float32)
        _, cut = window.step(small, window.initial_state(small), inputs)
        rounded = observations.astype(np.float32).astype(np.float64)
        numpy_cut = front.batch_brain(np.zeros((18, 0))).step(rounded)
        np.testing.assert_array_equal(np.asarray(cut, dtype=np.float64), numpy_cut)
        small64 = window.params(np.zeros((18, 0)), jnp.float64)
        inputs64 = encode_inputs(front.io, observations, jnp.float64)
        _, cut64 = window.step(small64, window.initial_state(small64), inputs64)
        np.testing.assert_array_equal(
            np.asarray(cut64), front.batch_brain(np.zeros((18, 0))).step(observations)
        )


def test_the_template_round_trips_through_its_state() -> None:
    """A saved template (no pickle) rebuilds an equal one: same genome size, same windows."""
    template = template_for(composed(size=3))
    again = BrainTemplate.from_state(template.to_state())
    assert again.genome_size == template.genome_size == 3 * 3 * 2 * 2 + 2
    genome = np.random.default_rng(5).normal(size=template.genome_size)
    for image in images(9, 6):
        np.testing.assert_array_equal(
            again.build(genome).step(image), template.build(genome).step(image)
        )


def test_the_template_survives_pickle_with_every_array_read_only() -> None:
    """A template sent to a worker cuts the same windows; its arrays and the index table a
    brain holds are read-only."""
    template = template_for(composed(size=3))
    again = pickle.loads(pickle.dumps(template))
    front = again.parts[0]
    brain = front.build(np.zeros(0))
    assert not brain.table.flags.writeable and not front.table().flags.writeable
    for image in images(9, 8):
        np.testing.assert_array_equal(
            brain.step(image), template.parts[0].build(np.zeros(0)).step(image)
        )


@pytest.mark.parametrize(
    ("brain", "space", "path", "fragment"),
    [
        (composed(size=4), IMAGE, "brain.parts[0].size", "must be odd"),
        (composed(channel=3), IMAGE, "brain.parts[0].channel", "use 0 to 2"),
        ({"type": "egocentric"}, IMAGE, "brain.type", "first part of a composed brain"),
        (
            {
                "type": "composed",
                "parts": [{"type": "FFNN", "hidden_layers": [2]}, {"type": "egocentric"}],
                "sizes": [4],
            },
            IMAGE,
            "brain.parts[1].type",
            "only be the first part",
        ),
        (
            {
                "type": "composed",
                "parts": [{"type": "egocentric", "size": 3, "channel": 1}, {"type": "FFNN"}],
                "sizes": [7],
            },
            IMAGE,
            "brain.parts[0].type",
            "not 7",
        ),
    ],
)
def test_a_window_it_cannot_cut_is_one_line_naming_the_field(brain, space, path, fragment) -> None:
    with pytest.raises(ConfigError) as caught:
        template_for(brain, space)
    assert caught.value.path == path and fragment in caught.value.message
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("space", "fragment"),
    [
        (gym.spaces.Box(0.0, 1.0, (6, 7), dtype=np.float64), "cuts images (H, W, C)"),
        (gym.spaces.Box(0.0, 1.0, (6, 7, 1), dtype=np.float64), "at least 2 channels"),
    ],
)
def test_an_observation_without_channels_to_cut_is_refused_in_one_line(space, fragment) -> None:
    with pytest.raises(UnsupportedSpaceError) as caught:
        template_for(composed(channel=0), space)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_sequential_and_jax_handlers_score_freeway_the_same() -> None:
    """Freeway-MinAtar (gymnax): every genome's fitness and steps are the sequential runner's,
    float64, on cut episodes, training and validation alike."""
    require("jax")
    config = parse_config(
        {
            "environment": {"id": "Freeway-MinAtar", "backend": "gymnax"},
            "number_generations": 1,
            "optimizer": {"type": "SNES", "population_size": 6},
            "brain": composed(size=5, channel=0),
            "episode_runner": {"max_steps_per_run": 150},
        }
    )
    template = build_template(config)
    spec = RunnerSpec(environment=config.environment, episode_runner=config.episode_runner)
    genomes = np.random.default_rng(7).normal(0.0, 1.0, (6, template.genome_size))
    genomes[:, -3:] += np.array([0.0, 3.0, 0.0])  # a bias towards "up": some crossings
    seeds = np.array([21, 22, 23, 24, 25, 26])
    for expected, got in sequential_and_jax_results(template, spec, genomes, seeds):
        assert [(r.fitness, r.steps) for r in got] == [(r.fitness, r.steps) for r in expected]
    assert max(r.fitness for r in expected) > 0
