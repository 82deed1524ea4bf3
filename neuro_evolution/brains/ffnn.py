"""Feed-forward network: input -> hidden layers -> outputs, tanh on the outputs.

Like the CTRNN and the LSTM, weights are (source × target) and the network works on row vectors:
a layer computes act(x·W_l + b_l) with W_l (in_l × out_l); the hidden activation is
``activation``, the output layer's ``output_activation``: tanh (outputs in [-1, 1]) or identity
(the raw values). tanh keeps the order of the outputs but rounds every value above about 19 to
exactly 1.0, so with large weights two Discrete outputs tie and argmax takes the lower action;
with identity a Discrete action is the argmax of x·W itself (a linear policy ``argmax(W s)``).
Identity needs an action space whose outputs are not scaled to bounds (not a bounded Box).

Genome layout, layer by layer from the input: W_l column by column (the values of one target
unit together; read as an (out_l × in_l) row-major array, W_l is its transpose), then, when
``use_bias``, the bias vector b_l (out_l). A brain keeps that (out_l × in_l) buffer and uses its
transposed view as W_l, so ``x·W_l`` runs the very arithmetic of ``W_l^T·x``: genomes of earlier
runs give bit-identical actions.
"""

from __future__ import annotations

from typing import Any, Literal

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.activations import ACTIVATIONS
from neuro_evolution.brains.base import (
    BRAINS,
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    JaxBrain,
)
from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.core.schema import ConfigError, config_class, option
from neuro_evolution.support.frozen import frozen_dataclass


@config_class
class FFNNConfig(BrainConfig):
    """Options of the ``FFNN`` brain."""

    hidden_layers: tuple[int, ...] = option((16,), doc="sizes of the hidden layers", ge=1)
    activation: Literal["tanh", "relu"] = option("tanh", doc="activation of hidden layers")
    use_bias: bool = option(True, doc="give every layer a bias vector")
    output_activation: Literal["tanh", "identity", "clip"] = option(
        "tanh",
        doc="activation of the output layer: tanh (outputs in [-1, 1]), clip (the raw values "
        "clipped to [-1, 1]: with no hidden layer, ARS's clipped linear policy on a [-1, 1] Box) "
        "or identity (raw values; a Discrete action is then argmax of the raw outputs, which "
        "tanh ties above ~19; not for a bounded Box action space)",
    )


LayerPart = tuple[int, int, slice, slice]  # n_in, n_out, W's genome slice, b's genome slice


def _layout(sizes: tuple[int, ...], use_bias: bool) -> list[LayerPart]:
    """The genome slices of every layer's W and b; the genome ends where the last b ends."""
    parts = []
    offset = 0
    for n_in, n_out in zip(sizes, sizes[1:]):
        w = slice(offset, offset + n_in * n_out)
        b = slice(w.stop, w.stop + (n_out if use_bias else 0))
        offset = b.stop
        parts.append((n_in, n_out, w, b))
    return parts


def squash_outputs(x: np.ndarray, output_activation: str) -> np.ndarray:
    """The output layer's activation: tanh, clip to [-1, 1], or none (identity)."""
    if output_activation == "tanh":
        return np.tanh(x)
    if output_activation == "clip":
        return np.clip(x, -1.0, 1.0)
    return x


class FFNNBrain(Brain):
    """One feed-forward network; its matrices are owned copies filled from a genome."""

    __slots__ = ("io", "activation", "weights", "biases", "squash")

    def __init__(
        self, io: SpaceAdapter, activation: str, weights: list, biases: list, squash: str = "tanh"
    ):
        self.io = io
        self.activation = ACTIVATIONS[activation]  # chosen once, not per step
        self.weights = weights  # each (in, out): a transposed view of an (out, in) buffer
        self.biases = biases
        self.squash = squash  # output_activation: "tanh", "clip" or "identity"

    def reset(self, rng: np.random.Generator) -> None:
        """Stateless: nothing to reset."""

    def outputs(self, inputs: np.ndarray) -> np.ndarray:
        """The network's output vector for one input vector."""
        x = inputs
        last = len(self.weights) - 1
        activation, args = self.activation
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = x @ w + b
            if i < last:
                x = activation(x, *args)
        return squash_outputs(x, self.squash)

    def step(self, observation):
        return self.io.decode(self.outputs(self.io.encode(observation)))


class FFNNBatchBrain(BatchBrain):
    """P feed-forward networks evaluated with one batched matmul per layer."""

    __slots__ = ("io", "activation", "weights", "biases", "squash")

    def __init__(
        self, io: SpaceAdapter, activation: str, weights: list, biases: list, squash: str = "tanh"
    ):
        self.io = io
        self.activation = ACTIVATIONS[activation]
        self.weights = weights  # each (P, in, out): a transposed view of a (P, out, in) buffer
        self.biases = biases  # each (P, out)
        self.squash = squash  # output_activation: "tanh", "clip" or "identity"

    def reset(self, rngs: list[np.random.Generator]) -> None:
        """Stateless: nothing to reset."""

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        x = self.io.encode_batch(observations)
        last = len(self.weights) - 1
        activation, args = self.activation
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            # matmul (not einsum) sums in the order the single brain's ``x @ w`` does, so brain i
            # of a batch gives bit-identical actions (the vectorized handler relies on it)
            x = np.matmul(x[:, None, :], w)[:, 0, :] + b
            if i < last:
                x = activation(x, *args)
        return self.io.decode_batch(squash_outputs(x, self.squash))


@BRAINS.register("FFNN", config=FFNNConfig)
@frozen_dataclass(eq=False)
class FFNNTemplate(BrainTemplate[FFNNConfig, FFNNBrain]):
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
        if config.output_activation == "identity" and io.action_kind == "box" and io.bounded:
            raise ConfigError(
                "brain.output_activation",
                f"identity leaves the outputs unbounded, but this env's Box actions are scaled "
                f"to their bounds ({action_space}): use tanh",
            )
        sizes = (io.input_size, *config.hidden_layers, io.output_size)
        *_, (_, _, _, last_bias) = _layout(sizes, config.use_bias)
        return cls(config=config, io=io, genome_size=last_bias.stop, layer_sizes=sizes)

    def _slices(self) -> list[LayerPart]:
        return _layout(self.layer_sizes, self.config.use_bias)

    def new_brain(self) -> FFNNBrain:
        weights, biases = [], []
        for n_in, n_out, _, _ in self._slices():
            weights.append(np.zeros((n_out, n_in)).T)
            biases.append(np.zeros(n_out))
        return FFNNBrain(self.io, self.config.activation, weights, biases, self.squashes)

    def fill(self, brain: FFNNBrain, genome: np.ndarray) -> None:
        for layer, (n_in, n_out, w, b) in enumerate(self._slices()):
            brain.weights[layer].T[...] = genome[w].reshape(n_out, n_in)
            if self.config.use_bias:
                brain.biases[layer][...] = genome[b]

    def batch_brain(self, genomes: np.ndarray) -> FFNNBatchBrain:
        genomes = self.check_genomes(genomes)
        count = genomes.shape[0]
        weights, biases = [], []
        for n_in, n_out, w, b in self._slices():
            weights.append(genomes[:, w].reshape(count, n_out, n_in).copy().transpose(0, 2, 1))
            biases.append(
                genomes[:, b].copy() if self.config.use_bias else np.zeros((count, n_out))
            )
        return FFNNBatchBrain(self.io, self.config.activation, weights, biases, self.squashes)

    def gene_units(self) -> np.ndarray:
        """Unit by unit, layer by layer: a unit owns its column of W_l and its bias."""
        units = np.empty(self.genome_size, dtype=np.int64)
        first = 0
        for n_in, n_out, w, b in self._slices():
            units[w] = first + np.repeat(np.arange(n_out), n_in)
            units[b] = first + np.arange(b.stop - b.start)
            first += n_out
        return units

    def jax_brain(self) -> JaxBrain:
        from neuro_evolution.brains.jax_brains import FFNNJaxBrain  # jax: an optional extra

        return FFNNJaxBrain(
            self, self.batch_brain, activation=self.config.activation, squash=self.squashes
        )

    def export_step(self, brain: FFNNBrain, graph: Any, inputs: str) -> str:
        return ffnn_step(graph, self, brain, inputs)

    @property
    def squashes(self) -> str:
        """The output layer's activation (``output_activation``)."""
        return self.config.output_activation


# --- the export step: one step as a policy graph (export/graph.py's PolicyGraph) ---------------
def ffnn_step(graph: Any, template: FFNNTemplate, brain: FFNNBrain, x: str) -> str:
    """act(x·W_l + b_l) layer by layer; tanh, clip to [-1, 1] (max then min) or nothing on the
    outputs."""
    last = len(brain.weights) - 1
    for number, (weights, bias) in enumerate(zip(brain.weights, brain.biases)):
        x = graph.add(
            graph.matmul(x, graph.constant(f"W{number}", weights)),
            graph.constant(f"b{number}", bias),
        )
        if number < last:
            x = graph.activation(template.config.activation, x)
        elif template.squashes == "tanh":
            x = graph.tanh(x)
        elif template.squashes == "clip":
            x = graph.op("max", x, graph.scalar("clip_low", -1.0))
            x = graph.op("min", x, graph.scalar("clip_high", 1.0))
    return x
