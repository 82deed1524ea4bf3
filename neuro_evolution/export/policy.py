"""The whole policy of one genome as a graph: observation scaler, encoding, brain, decoding.

The rule: an exported step computes exactly what the run's episode loop does with the brain,

    action = decode(brain(encode(scaler(observation))))

with the scaler's frozen statistics (``(x - mean) * scale`` clipped to ``±clip``, when the run
normalizes observations), the brain's own input scaling (folded into its weights), and the
action decoding of ``brains/spaces.py`` (argmax + start for Discrete, ``low + (out + 1) / 2 *
(high - low)`` for a bounded Box, raw outputs for an unbounded one, ``out > 0`` for
MultiBinary, one argmax per block for MultiDiscrete), cast to the action space's dtype.

The brain's step is its template's: ``template.export_step(brain, graph, inputs) -> outputs``
adds it to the :class:`~neuro_evolution.export.graph.PolicyGraph` (``inputs``: the name of the
encoded float64 input vector; returns the name of the output vector that ``io.decode`` maps to an
action). A brain type whose template does not write it is refused in one line
(``BrainTemplate.missing_form``).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.export.graph import PolicyGraph


def scale_observation(graph: PolicyGraph, scaler: ObservationScaler) -> str:
    """clip((x - mean) * scale, -clip, clip) of the flattened float64 observation."""
    x = graph.reshape(graph.op("cast", graph.OBSERVATION, dtype="float64"), (-1,))
    x = graph.mul(
        graph.op("sub", x, graph.constant("observation_mean", scaler.mean)),
        graph.constant("observation_scale", scaler.scale),
    )
    low = graph.scalar("observation_clip_low", -scaler.clip)
    return graph.op("clip", x, low, graph.scalar("observation_clip_high", scaler.clip))


def encode(graph: PolicyGraph, io: SpaceAdapter, x: str) -> str:
    """The flat float64 input vector: a Box as it is, a Discrete one-hot."""
    if io.observation_kind == "discrete":
        index = graph.reshape(graph.op("cast", x, dtype="int64"), ())
        index = graph.op("sub", index, graph.constant("observation_start", np.int64(
            io.observation_start)))  # fmt: skip
        positions = graph.constant("one_hot_positions", np.arange(io.input_size, dtype=np.int64))
        return graph.op("cast", graph.op("equal", positions, index), dtype="float64")
    return graph.reshape(graph.op("cast", x, dtype="float64"), (-1,))


def decode(graph: PolicyGraph, io: SpaceAdapter, out: str) -> None:
    """Set the graph's action from the brain's outputs (the rules of ``SpaceAdapter.decode``)."""
    kind, shape, dtype = io.action_kind, tuple(io.action_shape), io.action_dtype
    if kind == "discrete":
        action = graph.op("argmax", out, axis=0, keepdims=False)
        start = graph.constant("action_start", np.int64(io.action_start[0]))
        graph.set_action(graph.op("cast", graph.add(action, start), dtype=dtype), dtype, ())
        return
    if kind == "box":
        if io.bounded:
            half = graph.mul(graph.add(out, graph.scalar("one", 1.0)), graph.scalar("half", 0.5))
            width = graph.constant("action_range", io.action_high - io.action_low)
            out = graph.add(graph.constant("action_low", io.action_low), graph.mul(half, width))
    elif kind == "multibinary":
        out = graph.op("greater", out, graph.scalar("zero", 0.0))
    else:
        blocks, offset = [], 0
        for number, size in enumerate(io.action_nvec.tolist()):
            block = graph.slice(out, offset, offset + size)
            choice = graph.op("argmax", block, axis=0, keepdims=True)
            start = graph.constant(f"action_start{number}", io.action_start[number : number + 1])
            blocks.append(graph.add(choice, start))
            offset += size
        out = graph.concat(blocks)
    action = graph.reshape(graph.op("cast", out, dtype=dtype), shape)
    graph.set_action(action, dtype, shape)


def policy_graph(
    template: BrainTemplate,
    genome: np.ndarray,
    scaler: ObservationScaler | None,
    observation_space: gym.Space,
) -> PolicyGraph:
    """The graph of the whole policy of ``genome`` (see the module docstring)."""
    dtype = np.dtype(observation_space.dtype or np.float64)
    graph = PolicyGraph(str(dtype), tuple(observation_space.shape or ()))
    brain = template.build(genome)
    x = graph.OBSERVATION if scaler is None else scale_observation(graph, scaler)
    outputs = template.export_step(brain, graph, encode(graph, template.io, x))
    decode(graph, template.io, outputs)
    return graph
