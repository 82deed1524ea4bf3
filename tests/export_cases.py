"""Shared by the export tests: a template and genome per built-in brain type, episodes stepped
by the framework's brain and by the exported policies side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.export.loaded import NumpyPolicy, OnnxPolicy
from neuro_evolution.export.numpy_file import policy_files
from neuro_evolution.export.onnx_model import model_bytes
from neuro_evolution.export.policy import policy_graph
from neuro_evolution.run.experiment import build_template

CARTPOLE = {"id": "CartPole-v1"}
PENDULUM = {"id": "Pendulum-v1"}
FROZEN_LAKE = {"id": "FrozenLake-v1", "kwargs": {"is_slippery": False}}
BREAKOUT = {"id": "minatar:MinAtar/Breakout-v1"}
CONV_LAYERS = [
    {"channels": 3, "kernel": 3, "padding": 1, "activation": "tanh", "pool": "average"},
    {"channels": 2, "kernel": 2, "stride": 2, "activation": "none", "pool": "max",
     "pool_size": 2, "pool_stride": 1},
]  # fmt: skip

# name -> (environment, brain section, whether the run normalizes observations)
BRAIN_CASES: dict[str, tuple[dict[str, Any], dict[str, Any], bool]] = {
    "ctrnn": (CARTPOLE, {"type": "CTRNN", "number_neurons": 5}, True),
    "ctrnn-masks": (
        CARTPOLE,
        {
            "type": "CTRNN",
            "number_neurons": 7,
            "v_mask": "random",
            "v_mask_param": 0.5,
            "w_mask": "logarithmic",
            "w_mask_param": 1.5,
            "t_mask": "learned",
            "t_mask_param": 50,
            "use_bias": False,
            "optimize_y0": True,
            "optimize_state_boundaries": "per_neuron",
            "set_principle_diagonal_elements_of_W_negative": True,
        },
        True,
    ),  # fmt: skip
    "ctrnn-inplace": (
        PENDULUM,
        {
            "type": "CTRNN",
            "number_neurons": 4,
            "neuron_activation": "relu",
            "neuron_activation_inplace": True,
            "normalize_input": True,
            "delta_t": 0.5,
            "optimize_state_boundaries": "global",
            "w_mask": "learned",
            "w_mask_param": 30,
        },
        False,
    ),  # fmt: skip
    "ctrnn-discrete-observation": (FROZEN_LAKE, {"type": "CTRNN", "number_neurons": 3}, False),
    "ffnn": (CARTPOLE, {"type": "FFNN", "hidden_layers": [6, 5]}, True),
    "ffnn-relu-identity": (
        CARTPOLE,
        {
            "type": "FFNN",
            "hidden_layers": [4],
            "activation": "relu",
            "use_bias": False,
            "output_activation": "identity",
        },
        False,
    ),  # fmt: skip
    "ffnn-box": (PENDULUM, {"type": "FFNN", "hidden_layers": [3]}, True),
    "ffnn-clip-linear": (
        PENDULUM,
        {"type": "FFNN", "hidden_layers": [], "output_activation": "clip"},
        True,
    ),
    "lstm": (
        PENDULUM,
        {"type": "LSTM", "number_layers": 2, "hidden_size": 3, "normalize_input": True},
        True,
    ),
    "lstm-no-bias": (CARTPOLE, {"type": "LSTM", "hidden_size": 4, "use_bias": False}, False),
    "conv": (BREAKOUT, {"type": "conv", "layers": CONV_LAYERS, "input_scale": 0.5}, False),
    "composed-minatar": (
        BREAKOUT,
        {
            "type": "composed",
            "parts": [
                {"type": "conv", "layers": [{"channels": 4, "kernel": 3, "pool": "max"}]},
                {"type": "CTRNN", "number_neurons": 6},
            ],
        },
        False,
    ),
    "composed-egocentric": (
        BREAKOUT,
        {
            "type": "composed",
            "parts": [
                {"type": "egocentric", "size": 5},
                {"type": "FFNN", "hidden_layers": [], "output_activation": "identity"},
            ],
        },
        False,
    ),
    "composed-ffnn-lstm": (
        CARTPOLE,
        {
            "type": "composed",
            "parts": [{"type": "FFNN", "hidden_layers": [4]}, {"type": "LSTM", "hidden_size": 3}],
            "sizes": [5],
        },
        True,
    ),
}


def case_config(environment: dict[str, Any], brain: dict[str, Any], normalize: bool) -> Any:
    """The parsed experiment config of a case (its template is made exactly as a run makes it)."""
    data: dict[str, Any] = {
        "environment": environment,
        "random_seed": 3,
        "number_generations": 1,
        "optimizer": {"type": "PGPE", "population_size": 4},
        "brain": brain,
        "evaluation": {"handler": "sequential"},
    }
    if normalize:
        data["observation_normalization"] = {}
    return parse_config(data)


def case_parts(name: str) -> tuple[Any, BrainTemplate, np.ndarray, ObservationScaler | None]:
    """(config, template, genome, scaler) of a case: a random genome and scaler of seed 0."""
    config = case_config(*BRAIN_CASES[name])
    template = build_template(config)
    rng = np.random.default_rng(0)
    genome = rng.normal(0.0, 1.0, template.genome_size)
    scaler = None
    if config.observation_normalization is not None:
        env = config.environment.make()
        size = int(np.prod(env.observation_space.shape))
        env.close()
        scaler = ObservationScaler(
            mean=rng.normal(0.0, 0.3, size), scale=rng.uniform(0.5, 2.0, size), clip=2.5
        )
    return config, template, genome, scaler


def exported_pair(
    folder: Path,
    template: BrainTemplate,
    genome: np.ndarray,
    scaler: ObservationScaler | None,
    space: gym.Space,
) -> tuple[OnnxPolicy, NumpyPolicy]:
    """The ONNX model and the numpy file of a policy, written into ``folder`` and loaded."""
    graph = policy_graph(template, genome, scaler, space)
    (folder / "policy.onnx").write_bytes(model_bytes(graph, {"genome": "candidate"}, "test"))
    source, arrays = policy_files(graph, {"genome": "candidate"}, "test", "policy")
    (folder / "policy.py").write_text(source)
    np.savez(folder / "policy.npz", **arrays)
    return OnnxPolicy(folder / "policy.onnx"), NumpyPolicy(folder / "policy.py")


def scaled(scaler: ObservationScaler | None, observation: Any) -> Any:
    return observation if scaler is None else scaler.apply(observation)
