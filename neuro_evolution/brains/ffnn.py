"""Feed-forward network: input -> hidden layers -> outputs, tanh on the outputs.

Genome layout, layer by layer from the input: the weight matrix W_l (out_l x in_l, row-major),
then, when ``use_bias``, the bias vector b_l (out_l). A layer computes act(W_l x + b_l); the
hidden activation is ``activation``; the output layer always uses tanh (outputs in [-1, 1]).
"""

from __future__ import annotations

from typing import Literal

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.base import (
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    register_brain,
)
from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.configtools import config_class, option
from neuro_evolution.frozen import frozen_dataclass


@config_class
class FFNNConfig(BrainConfig):
    """Options of the ``FFNN`` brain."""

    hidden_layers: tuple[int, ...] = option((16,), doc="sizes of the hidden layers", ge=1)
    activation: Literal["tanh", "relu"] = option("tanh", doc="activation of hidden layers")
    use_bias: bool = option(True, doc="give every layer a bias vector")


def _activate(kind: str, x: np.ndarray) -> np.ndarray:
    return np.tanh(x) if kind == "tanh" else np.maximum(x, 0.0)


class FFNNBrain(Brain):
    """One feed-forward network; its matrices are owned copies filled from a genome."""

    __slots__ = ("io", "activation", "weights", "biases")

    def __init__(self, io: SpaceAdapter, activation: str, weights: list, biases: list):
        self.io = io
        self.activation = activation
        self.weights = weights
        self.biases = biases

    def reset(self, rng: np.random.Generator) -> None:
        """Stateless: nothing to reset."""

    def outputs(self, inputs: np.ndarray) -> np.ndarray:
        """The network's output vector for one input vector."""
        x = inputs
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = w @ x + b
            x = np.tanh(x) if i == last else _activate(self.activation, x)
        return x

    def step(self, observation):
        return self.io.decode(self.outputs(self.io.encode(observation)))


class FFNNBatchBrain(BatchBrain):
    """P feed-forward networks evaluated with one batched matmul per layer."""

    __slots__ = ("io", "activation", "weights", "biases")

    def __init__(self, io: SpaceAdapter, activation: str, weights: list, biases: list):
        self.io = io
        self.activation = activation
        self.weights = weights  # each (P, out, in)
        self.biases = biases  # each (P, out)

    def reset(self, rngs: list[np.random.Generator]) -> None:
        """Stateless: nothing to reset."""

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        x = self.io.encode_batch(observations)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            # matmul (not einsum) sums in the order the single brain's ``w @ x`` does, so brain i
            # of a batch gives bit-identical actions (the vectorized handler relies on it)
            x = np.matmul(w, x[:, :, None])[:, :, 0] + b
            x = np.tanh(x) if i == last else _activate(self.activation, x)
        return self.io.decode_batch(x)


@register_brain("FFNN", config=FFNNConfig)
@frozen_dataclass(eq=False)
class FFNNTemplate(BrainTemplate):
    """Layer sizes and the genome offsets of every weight matrix and bias vector."""

    config: FFNNConfig
    io: SpaceAdapter
    genome_size: int
    layer_sizes: tuple[int, ...]

    @classmethod
    def from_config(
        cls,
        config: FFNNConfig,
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> FFNNTemplate:
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        sizes = (io.input_size, *config.hidden_layers, io.output_size)
        genome_size = sum(o * i + (o if config.use_bias else 0) for i, o in zip(sizes, sizes[1:]))
        return cls(config=config, io=io, genome_size=genome_size, layer_sizes=sizes)

    def _slices(self):
        offset = 0
        for n_in, n_out in zip(self.layer_sizes, self.layer_sizes[1:]):
            w = slice(offset, offset + n_in * n_out)
            offset += n_in * n_out
            b = slice(offset, offset + (n_out if self.config.use_bias else 0))
            offset = b.stop
            yield n_in, n_out, w, b

    def new_brain(self) -> FFNNBrain:
        weights, biases = [], []
        for n_in, n_out, _, _ in self._slices():
            weights.append(np.zeros((n_out, n_in)))
            biases.append(np.zeros(n_out))
        return FFNNBrain(self.io, self.config.activation, weights, biases)

    def fill(self, brain: FFNNBrain, genome: np.ndarray) -> None:
        for layer, (n_in, n_out, w, b) in enumerate(self._slices()):
            brain.weights[layer][...] = genome[w].reshape(n_out, n_in)
            if self.config.use_bias:
                brain.biases[layer][...] = genome[b]

    def build_batch(self, genomes: np.ndarray) -> FFNNBatchBrain:
        genomes = self.check_genomes(genomes)
        count = genomes.shape[0]
        weights, biases = [], []
        for n_in, n_out, w, b in self._slices():
            weights.append(genomes[:, w].reshape(count, n_out, n_in).copy())
            biases.append(
                genomes[:, b].copy() if self.config.use_bias else np.zeros((count, n_out))
            )
        return FFNNBatchBrain(self.io, self.config.activation, weights, biases)
