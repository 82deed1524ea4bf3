"""The exported egocentric window reads every cell outside the image as 0, as the brain does:
with the agent on the image's edge or corner, the exported model's raw outputs equal the
in-process brain's."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
from export_cases import exported_pair
from helpers import require

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import parse_brain_config

require("export")

SIZE = 5  # the window reaches 2 cells past the agent on every side
IMAGE = (6, 7, 3)  # channel 0 marks the agent


def agent_at(row: int, column: int, rng: np.random.Generator) -> np.ndarray:
    """An image with the agent at (row, column) and positive values in every other channel."""
    image = np.zeros(IMAGE)
    image[..., 1:] = rng.uniform(0.5, 1.5, (*IMAGE[:2], IMAGE[2] - 1))
    image[row, column, 0] = 1.0
    return image


def test_the_exported_window_reads_cells_outside_the_image_as_zero(tmp_path: Path) -> None:
    """A linear policy on the 5 x 5 window, raw outputs (unbounded Box actions): on agents at
    the four corners and on each edge (windows that leave the image), and at the centre, the
    ONNX model's outputs are the brain's within 1e-6 and the numpy file's exactly."""
    observation_space = gym.spaces.Box(0.0, 2.0, IMAGE, dtype=np.float64)
    action_space = gym.spaces.Box(-np.inf, np.inf, (4,), dtype=np.float64)
    section = parse_brain_config(
        {
            "type": "composed",
            "parts": [
                {"type": "egocentric", "size": SIZE},
                {"type": "FFNN", "hidden_layers": [], "output_activation": "identity"},
            ],
        },
        "brain",
    )
    template = make_template(section, observation_space, action_space, np.random.default_rng(0))
    genome = np.random.default_rng(1).normal(0.0, 1.0, template.genome_size)
    onnx_policy, numpy_policy = exported_pair(tmp_path, template, genome, None, observation_space)
    brain = template.build(genome)
    rng = np.random.default_rng(2)
    height, width = IMAGE[0] - 1, IMAGE[1] - 1
    cells = [(0, 0), (0, width), (height, 0), (height, width), (0, 3), (height, 3), (2, 0),
             (3, width), (1, 1), (3, 3)]  # fmt: skip
    for row, column in cells:
        observation = agent_at(row, column, rng)
        brain.reset(np.random.default_rng(0))
        expected = np.asarray(brain.step(observation), dtype=np.float64)
        onnx_action, _ = onnx_policy.step(observation, onnx_policy.initial_state())
        numpy_action, _ = numpy_policy.step(observation, numpy_policy.initial_state())
        assert np.array_equal(numpy_action, expected), (row, column)
        np.testing.assert_allclose(
            onnx_action, expected, rtol=0, atol=1e-6, err_msg=f"agent at {(row, column)}"
        )
