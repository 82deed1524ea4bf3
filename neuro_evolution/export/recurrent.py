"""The steps of the CTRNN and the LSTM as policy graphs, state included.

Each function reads a filled brain's own arrays (so every mask type, the in-place variant,
``normalize_input`` folded into the weights, learned masks and bounds are exported as the brain
computes with them) and repeats the brain's ``step`` operation by operation.
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.brains.ctrnn import CTRNNBrain, CTRNNTemplate
from neuro_evolution.brains.lstm import LSTMBrain, LSTMTemplate
from neuro_evolution.export.graph import PolicyGraph
from neuro_evolution.support.errors import UserError


def ctrnn_step(graph: PolicyGraph, template: CTRNNTemplate, brain: CTRNNBrain, x: str) -> str:
    """y' = clip(base + [x | σ(y) | 1]·M, low, high), out = tanh(y'·T) (see brains/ctrnn.py)."""
    config = template.config
    if config.parameter_perturbations:
        raise UserError(
            f"brain.parameter_perturbations is {config.parameter_perturbations:g}: the CTRNN adds "
            "random noise to its state every step, which an exported policy does not draw; "
            "export a run trained without it"
        )
    n_in, neurons = template.io.input_size, config.number_neurons
    y = graph.state("neuron_state", brain.y0)
    s = graph.activation(config.neuron_activation, y)
    parts = [x, s]
    if brain.z.size > n_in + neurons:  # the bias row of M (a bias or folded input scaling)
        parts.append(graph.constant("one", np.ones(1)))
    dy = graph.matmul(graph.concat(parts), graph.constant("M", brain.M))
    new = graph.add(s if config.neuron_activation_inplace else y, dy)
    new = graph.op("min", new, graph.constant("high", brain.high))
    new = graph.op("max", new, graph.constant("low", brain.low))
    graph.next_state(y, new)
    return graph.tanh(graph.matmul(new, graph.constant("T", brain.T)))


def _sigmoid(graph: PolicyGraph, x: str) -> str:
    """0.5 * tanh(0.5 * x) + 0.5, as the brain computes its sigmoid."""
    half = graph.scalar("half", 0.5)
    return graph.add(graph.mul(graph.tanh(graph.mul(x, half)), half), half)


def lstm_step(graph: PolicyGraph, template: LSTMTemplate, brain: LSTMBrain, x: str) -> str:
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
