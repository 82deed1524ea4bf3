"""The steps of the FFNN and the conv front end as policy graphs (no state).

A convolution is exported as a gather of image patches (indices computed here, zero padding
pointing at one appended zero) and a matrix product, and pooling as strided slices combined
with max or add: the same arithmetic as ``brains/conv_ops.py``, in float64 throughout
(onnxruntime has no float64 ``Conv`` or ``AveragePool``).
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.brains.conv import ConvBrain, ConvTemplate, Stage
from neuro_evolution.brains.conv_ops import output_length
from neuro_evolution.brains.ffnn import FFNNBrain, FFNNTemplate
from neuro_evolution.export.graph import PolicyGraph


def ffnn_step(graph: PolicyGraph, template: FFNNTemplate, brain: FFNNBrain, x: str) -> str:
    """act(x·W_l + b_l) layer by layer; tanh (or nothing) on the outputs."""
    last = len(brain.weights) - 1
    for number, (weights, bias) in enumerate(zip(brain.weights, brain.biases)):
        x = graph.add(
            graph.matmul(x, graph.constant(f"W{number}", weights)),
            graph.constant(f"b{number}", bias),
        )
        if number < last:
            x = graph.activation(template.config.activation, x)
        elif template.squashes:
            x = graph.tanh(x)
    return x


def patch_index(image: tuple[int, int, int], stage: Stage) -> tuple[np.ndarray, int, int]:
    """(rows*cols, C*k*k) indices into an (H, W, C) image flattened with one zero appended
    (the padding), patches in (C, k, k) order as ``conv_ops.convolve``; and rows, cols."""
    height, width, channels = image
    _, kernel, _, _ = stage.kernel_shape
    stride, padding = stage.stride, stage.padding
    rows = output_length(height, kernel, stride, padding)
    cols = output_length(width, kernel, stride, padding)
    r, q, c, a, b = np.ix_(
        np.arange(rows), np.arange(cols), np.arange(channels), np.arange(kernel), np.arange(kernel)
    )
    row = r * stride + a - padding
    col = q * stride + b - padding
    inside = (row >= 0) & (row < height) & (col >= 0) & (col < width)
    flat = (row * width + col) * channels + c
    index = np.where(inside, flat, height * width * channels)
    return index.reshape(rows * cols, channels * kernel * kernel).astype(np.int64), rows, cols


def _pool(graph: PolicyGraph, x: str, shape: tuple[int, int, int], stage: Stage) -> str:
    height, width, _ = shape
    size, stride = stage.pool_size, stage.pool_stride
    rows, cols = output_length(height, size, stride), output_length(width, size, stride)
    out = ""
    for a in range(size):
        for b in range(size):
            window = graph.op(
                "slice", x, starts=(a, b), stops=(a + stride * (rows - 1) + 1,
                b + stride * (cols - 1) + 1), axes=(0, 1), steps=(stride, stride),
            )  # fmt: skip
            if not out:
                out = window
            else:
                out = graph.op("max" if stage.pool == "max" else "add", out, window)
    if stage.pool == "average":
        out = graph.op("div", out, graph.scalar("pool_area", float(size * size)))
    return out


def conv_step(graph: PolicyGraph, template: ConvTemplate, brain: ConvBrain, x: str) -> str:
    """Scale, conv layers (patches · kernel + bias, activation, pooling), flatten, dense tanh."""
    plan, params = brain.plan, brain.params
    if plan.scale != 1.0:
        x = graph.mul(x, graph.scalar("input_scale", plan.scale))
    shape = tuple(template.image_shape)
    zero = graph.constant("zero", np.zeros(1))
    for number, stage in enumerate(plan.stages):
        index, rows, cols = patch_index(shape, stage)  # type: ignore[arg-type]
        flat = graph.concat([graph.reshape(x, (-1,)), zero])
        patches = graph.op("gather", flat, graph.constant(f"patches{number}", index))
        kernels = params[f"K{number}"][0]
        out_channels = kernels.shape[-1]
        y = graph.matmul(patches, graph.constant(f"K{number}", kernels.reshape(-1, out_channels)))
        if f"b{number}" in params:
            y = graph.add(y, graph.constant(f"b{number}", params[f"b{number}"][0]))
        y = graph.activation(stage.activation, graph.reshape(y, (rows, cols, out_channels)))
        shape = (rows, cols, out_channels)
        if stage.pool != "none":
            y = _pool(graph, y, shape, stage)
            shape = (
                output_length(rows, stage.pool_size, stage.pool_stride),
                output_length(cols, stage.pool_size, stage.pool_stride),
                out_channels,
            )
        x = y
    x = graph.reshape(x, (-1,))
    if plan.head:
        x = graph.matmul(x, graph.constant("D", params["D"][0]))
        if "d" in params:
            x = graph.add(x, graph.constant("d", params["d"][0]))
        x = graph.tanh(x)
    return x
