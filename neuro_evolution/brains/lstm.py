"""LSTM: ``number_layers`` stacked LSTM layers of ``hidden_size`` cells and a tanh output layer.

Like the CTRNN, weights are (source × target) and the network works on row vectors. Layer l
(input x_l: the encoded observation for l = 0, the new h of layer l-1 after that) computes

    [i | f | o | g] = [x_l | h_l]·M_l + b_l        (M_l = [U_l; R_l], four gates of H columns)
    i, f, o = sigmoid(...), g = tanh(...)
    c_l ← f * c_l + i * g,   h_l ← o * tanh(c_l)

and the output is tanh(h_{L-1}·O + b_out), mapped to the env's action space. The state (h, c)
starts at zero on every reset, so the same genome and seed always behave the same.

``normalize_input`` scales bounded Box inputs to [-target, target] (``input_scaling.py``), folded
into U_0 and b_0 when a brain is filled; a shift (bounds not symmetric about 0) needs
``use_bias``.

Genome layout, in this order: for every layer l, U_l (n_l × 4H, n_0 = inputs, n_l = H after),
R_l (H × 4H), then b_l (4H) with ``use_bias``; then O (H × outputs), then b_out (outputs) with
``use_bias``. All matrices row-major, gate columns in the order i, f, o, g.

Fast path: a brain keeps its parameters in one array in genome order (``fill`` is one copy) and
its h vectors in one buffer [x | h_0 | h_1 | ...], so [x_l | h_l] is a view and never copied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.activations import RowSelection, as_is, sigmoid_
from neuro_evolution.brains.base import (
    BRAINS,
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    JaxBrain,
    _unflatten,
)
from neuro_evolution.brains.input_scaling import NORMALIZE_DOC, fold_input_scaling, input_scaling
from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.core.schema import ConfigError, config_class, option
from neuro_evolution.support.frozen import frozen_dataclass, readonly


@config_class
class LSTMConfig(BrainConfig):
    """Options of the ``LSTM`` brain."""

    number_layers: int = option(1, doc="stacked LSTM layers", ge=1)
    hidden_size: int = option(8, doc="cells H of every LSTM layer", ge=1)
    use_bias: bool = option(True, doc="a bias vector for every layer's gates and the output")
    normalize_input: bool = option(False, doc=NORMALIZE_DOC)
    normalize_input_target: float = option(1.0, doc="the target of normalize_input", gt=0)


Part = tuple[slice, tuple[int, int], slice]  # weights, their shape, biases


def _layout(config: LSTMConfig, io: SpaceAdapter) -> tuple[list[Part], Part]:
    """Genome slices: per layer (M_l, its shape, b_l), then (O, its shape, b_out); the genome
    ends where b_out ends."""
    H = config.hidden_size
    bias = config.use_bias
    layers = []
    offset = 0
    for layer in range(config.number_layers):
        rows = (io.input_size if layer == 0 else H) + H
        weights = slice(offset, offset + rows * 4 * H)
        offset = weights.stop
        biases = slice(offset, offset + (4 * H if bias else 0))
        offset = biases.stop
        layers.append((weights, (rows, 4 * H), biases))
    n_out = io.output_size
    weights = slice(offset, offset + H * n_out)
    output = (weights, (H, n_out), slice(weights.stop, weights.stop + (n_out if bias else 0)))
    return layers, output


def _bias(genome: np.ndarray, part: slice, size: int) -> np.ndarray:
    """A bias view of ``genome`` (leading axes kept), or read-only zeros when biases are off."""
    if part.stop > part.start:
        return genome[..., part]
    return readonly(np.zeros(genome.shape[:-1] + (size,)))


def _views(template: LSTMTemplate, params: np.ndarray) -> tuple[list[tuple], tuple]:
    """(M_l, b_l) per layer and (O, b_out) as views of a (G,) or (P, G) parameter array."""
    lead = params.shape[:-1]
    layers, (weights, shape, biases) = _layout(template.config, template.io)
    views = [(params[..., w].reshape(lead + s), _bias(params, b, s[1])) for w, s, b in layers]
    return views, (params[..., weights].reshape(lead + shape), _bias(params, biases, shape[1]))


class LSTMBrain(Brain):
    """One LSTM; ``params`` is an owned copy of the genome, the matrices are views of it."""

    __slots__ = ("io", "encode", "params", "layers", "out_weights", "out_bias", "h", "c", "u", "o")

    def __init__(self, template: LSTMTemplate):
        config, io = template.config, template.io
        H, n_in, n_layers = config.hidden_size, io.input_size, config.number_layers
        self.io = io
        self.encode = io.encode if io.observation_kind == "discrete" else as_is
        self.params = np.zeros(template.genome_size)
        weights, (self.out_weights, self.out_bias) = _views(template, self.params)
        self.h = np.zeros(n_in + n_layers * H)  # [x | h_0 | h_1 | ...]
        self.c = np.zeros((n_layers, H))
        shape = (n_in,) if io.observation_kind == "discrete" else template.observation_shape
        self.u = self.h[:n_in].reshape(shape)
        self.layers = []
        for layer, (M, b) in enumerate(weights):
            start = 0 if layer == 0 else n_in + (layer - 1) * H
            h = self.h[n_in + layer * H : n_in + (layer + 1) * H]
            gates = np.empty(4 * H)
            z = self.h[start : n_in + (layer + 1) * H]
            i, f, o, g = gates[:H], gates[H : 2 * H], gates[2 * H : 3 * H], gates[3 * H :]
            self.layers.append((z, M, b, gates, gates[: 3 * H], i, f, o, g, self.c[layer], h))
        self.o = np.empty(io.output_size)

    def reset(self, rng: np.random.Generator) -> None:
        """h = c = 0 (the LSTM draws no noise, so ``rng`` is unused)."""
        self.h[...] = 0.0
        self.c[...] = 0.0

    def step(self, observation: Any) -> Any:
        self.u[...] = self.encode(observation)
        for z, M, b, gates, sigmoid_gates, i, f, o, g, c, h in self.layers:
            np.dot(z, M, out=gates)
            np.add(gates, b, out=gates)
            sigmoid_(sigmoid_gates)
            np.tanh(g, out=g)
            np.multiply(c, f, out=c)
            np.multiply(i, g, out=g)
            np.add(c, g, out=c)
            np.tanh(c, out=h)
            np.multiply(h, o, out=h)
        np.dot(h, self.out_weights, out=self.o)
        np.add(self.o, self.out_bias, out=self.o)
        np.tanh(self.o, out=self.o)
        return self.io.decode(self.o)

    def internal_state(self) -> dict[str, np.ndarray]:
        """Hidden and cell states, one row per layer: (number_layers, hidden_size) each."""
        layers, hidden = self.c.shape
        return {
            "hidden_state": self.h[self.h.size - layers * hidden :].reshape(layers, hidden).copy(),
            "cell_state": self.c.copy(),
        }


class LSTMBatchBrain(BatchBrain):
    """P LSTMs of one template stepped together; brain i computes exactly what a single does."""

    __slots__ = ("template", "h", "c", "o", "selection")

    def __init__(self, template: LSTMTemplate, genomes: np.ndarray):
        count = genomes.shape[0]
        config, io = template.config, template.io
        self.template = template
        self.selection = RowSelection({"params": template.scaled(genomes.copy())}, count)
        self.h = np.zeros((count, io.input_size + config.number_layers * config.hidden_size))
        self.c = np.zeros((count, config.number_layers, config.hidden_size))
        self.o = np.zeros((count, io.output_size))

    def reset(self, rngs: list[np.random.Generator]) -> None:
        if len(rngs) != self.h.shape[0]:
            raise ValueError(f"reset got {len(rngs)} generators for {self.h.shape[0]} brains")
        self.h[...] = 0.0
        self.c[...] = 0.0
        self.selection.reset()

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        template = self.template
        H, n_in = template.config.hidden_size, template.io.input_size
        rows = self.selection.select(active)
        weights, (out_weights, out_bias) = _views(template, rows.params["params"])
        h_all = rows.gather(self.h).copy()
        c_all = rows.gather(self.c).copy()
        h_all[:, :n_in] = rows.gather(template.io.encode_batch(observations))
        for layer, (M, b) in enumerate(weights):
            start = 0 if layer == 0 else n_in + (layer - 1) * H
            z = h_all[:, start : n_in + (layer + 1) * H]
            gates = np.matmul(z[:, None, :], M)[:, 0, :]
            np.add(gates, b, out=gates)
            sigmoid_(gates[:, : 3 * H])
            i, f, o, g = (
                gates[:, :H],
                gates[:, H : 2 * H],
                gates[:, 2 * H : 3 * H],
                gates[:, 3 * H :],
            )
            np.tanh(g, out=g)
            c = c_all[:, layer]
            np.multiply(c, f, out=c)
            np.multiply(i, g, out=g)
            np.add(c, g, out=c)
            h = h_all[:, n_in + layer * H : n_in + (layer + 1) * H]
            np.tanh(c, out=h)
            np.multiply(h, o, out=h)
        out = np.matmul(h[:, None, :], out_weights)[:, 0, :]
        np.add(out, out_bias, out=out)
        np.tanh(out, out=out)
        rows.store(self.h, h_all)
        rows.store(self.c, c_all)
        rows.store(self.o, out)
        return template.io.decode_batch(self.o)


@BRAINS.register("LSTM", config=LSTMConfig)
@frozen_dataclass(eq=False)
class LSTMTemplate(BrainTemplate[LSTMConfig, LSTMBrain]):
    """Layer sizes follow from the config and the spaces; the genome layout is in ``_layout``."""

    config: LSTMConfig
    io: SpaceAdapter
    genome_size: int
    observation_shape: tuple[int, ...]
    input_scale: np.ndarray  # normalize_input: u' = u * scale + shift (empty when off)
    input_shift: np.ndarray

    @classmethod
    def from_config(
        cls,
        config: LSTMConfig,
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> LSTMTemplate:
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        _, (_, _, output_biases) = _layout(config, io)
        shape = tuple(observation_space.shape or ()) if io.observation_kind == "box" else ()
        scale, shift = input_scaling(
            config.normalize_input, config.normalize_input_target, observation_space
        )
        if not config.use_bias and np.any(shift != 0.0):
            raise ConfigError(
                "brain.normalize_input",
                "this env's bounds are not symmetric about 0, so the inputs are shifted, which "
                "needs the gate biases: set brain.use_bias to true",
            )
        return cls(
            config=config, io=io, genome_size=output_biases.stop, observation_shape=shape,
            input_scale=scale, input_shift=shift,
        )  # fmt: skip

    @classmethod
    def restore(cls, state: Mapping[str, Any]) -> LSTMTemplate:
        """A saved template; one saved before ``normalize_input`` existed has no scaling."""
        if "input_scale" not in state:
            state = {**state, "input_scale": np.zeros(0), "input_shift": np.zeros(0)}
        return _unflatten(cls, "", state)

    def scaled(self, params: np.ndarray) -> np.ndarray:
        """(G,) or (P, G) ``params`` with ``normalize_input`` folded into U_0 and b_0, in place
        (unchanged when it is off)."""
        if self.input_scale.size:
            (weights, bias), *_ = _views(self, params)[0]
            inputs = weights[..., : self.io.input_size, :]
            fold_input_scaling(inputs, bias, self.input_scale, self.input_shift)
        return params

    def new_brain(self) -> LSTMBrain:
        return LSTMBrain(self)

    def fill(self, brain: LSTMBrain, genome: np.ndarray) -> None:
        brain.params[...] = genome
        self.scaled(brain.params)

    def batch_brain(self, genomes: np.ndarray) -> LSTMBatchBrain:
        genomes = self.check_genomes(genomes)
        return LSTMBatchBrain(self, genomes)

    def jax_brain(self) -> JaxBrain:
        from neuro_evolution.brains.jax_brains import LSTMJaxBrain  # jax: an optional extra

        return LSTMJaxBrain(self, self.batch_views)

    def batch_views(
        self, genomes: np.ndarray
    ) -> tuple[list[tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray]]:
        """(M_l, b_l) per layer and (O, b_out) of (P, G) genomes, ``normalize_input`` folded in,
        as views of a copy of ``genomes`` (the JAX form's parameters)."""
        return _views(self, self.scaled(np.array(self.check_genomes(genomes))))

    def export_step(self, brain: LSTMBrain, graph: Any, inputs: str) -> str:
        return lstm_step(graph, self, brain, inputs)


# --- the export step: one step as a policy graph (export/graph.py's PolicyGraph), state included,
# read from the filled brain's own arrays and repeating its step operation by operation.
def _sigmoid(graph: Any, x: str) -> str:
    """0.5 * tanh(0.5 * x) + 0.5, as the brain computes its sigmoid."""
    half = graph.scalar("half", 0.5)
    return graph.add(graph.mul(graph.tanh(graph.mul(x, half)), half), half)


def lstm_step(graph: Any, template: LSTMTemplate, brain: LSTMBrain, x: str) -> str:
    """Every layer's gates from [x_l | h_l], then c and h; out = tanh(h·O + b_out)."""
    hidden, layers = template.config.hidden_size, template.config.number_layers
    h_all = graph.state("hidden_state", np.zeros((layers, hidden)))
    c_all = graph.state("cell_state", np.zeros((layers, hidden)))
    inputs, new_h, new_c = x, [], []
    for number, (_, weights, bias, *_) in enumerate(brain.layers):
        h = graph.reshape(graph.slice(h_all, number, number + 1), (hidden,))
        c = graph.reshape(graph.slice(c_all, number, number + 1), (hidden,))
        gates = graph.add(
            graph.matmul(graph.concat([inputs, h]), graph.constant(f"M{number}", weights)),
            graph.constant(f"b{number}", bias),
        )
        sigmoids = _sigmoid(graph, graph.slice(gates, 0, 3 * hidden))
        i = graph.slice(sigmoids, 0, hidden)
        f = graph.slice(sigmoids, hidden, 2 * hidden)
        o = graph.slice(sigmoids, 2 * hidden, 3 * hidden)
        g = graph.tanh(graph.slice(gates, 3 * hidden, 4 * hidden))
        c = graph.add(graph.mul(c, f), graph.mul(i, g))
        h = graph.mul(graph.tanh(c), o)
        new_h.append(graph.reshape(h, (1, hidden)))
        new_c.append(graph.reshape(c, (1, hidden)))
        inputs = h
    graph.next_state(h_all, graph.concat(new_h))
    graph.next_state(c_all, graph.concat(new_c))
    out = graph.add(
        graph.matmul(inputs, graph.constant("O", brain.out_weights)),
        graph.constant("b_out", brain.out_bias),
    )
    return graph.tanh(out)
