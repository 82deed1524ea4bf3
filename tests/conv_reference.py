"""Slow, obviously-correct reference of the conv front end: plain loops over nested lists.

It reads the genome one value at a time in the layout of ``neuro_evolution/brains/conv.py``'s
docstring and computes every output pixel with an explicit sum, so the im2col/matmul kernels
(numpy, batch and JAX) are checked against the documentation rather than against themselves.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

Image = list[list[list[float]]]  # [row][column][channel]


def image_of(values: list[float], height: int, width: int, channels: int) -> Image:
    """A flat (H, W, C) row-major list as nested rows, columns and channels."""
    return [
        [[values[(i * width + j) * channels + c] for c in range(channels)] for j in range(width)]
        for i in range(height)
    ]


def convolve(image: Image, kernel: Any, bias: list[float], stride: int, padding: int) -> Image:
    """out[i][j][o] = sum over c, a, b of x[i*stride + a - padding][j*stride + b - padding][c]
    * kernel[c][a][b][o] (0 outside the image), plus bias[o]."""
    height, width, channels = len(image), len(image[0]), len(image[0][0])
    size, out_channels = len(kernel[0]), len(bias)
    rows = (height + 2 * padding - size) // stride + 1
    cols = (width + 2 * padding - size) // stride + 1
    out = []
    for i in range(rows):
        row = []
        for j in range(cols):
            pixel = []
            for o in range(out_channels):
                total = 0.0
                for a in range(size):
                    for b in range(size):
                        y, x = i * stride + a - padding, j * stride + b - padding
                        if 0 <= y < height and 0 <= x < width:
                            for c in range(channels):
                                total += image[y][x][c] * kernel[c][a][b][o]
                pixel.append(total + bias[o])
            row.append(pixel)
        out.append(row)
    return out


def activate(image: Image, name: str) -> Image:
    function = {"relu": lambda v: max(v, 0.0), "tanh": math.tanh, "none": lambda v: v}[name]
    return [[[function(v) for v in pixel] for pixel in row] for row in image]


def pool(image: Image, kind: str, size: int, stride: int) -> Image:
    """Max or average (sum / size**2) over size x size windows that fit inside the image."""
    height, width, channels = len(image), len(image[0]), len(image[0][0])
    rows, cols = (height - size) // stride + 1, (width - size) // stride + 1
    out = []
    for i in range(rows):
        row = []
        for j in range(cols):
            pixel = []
            for c in range(channels):
                values = [
                    image[i * stride + a][j * stride + b][c]
                    for a in range(size)
                    for b in range(size)
                ]
                pixel.append(max(values) if kind == "max" else sum(values) / (size * size))
            row.append(pixel)
        out.append(row)
    return out


class ReferenceConv:
    """The conv brain of ``neuro_evolution/brains/conv.py``'s docstring."""

    def __init__(self, template: Any, genome: np.ndarray, observation_space: gym.Space):
        from brain_references import GenomeReader, encode

        self.encode = lambda observation: encode(observation, observation_space)
        self.config, self.shape = template.config, template.image_shape
        read = GenomeReader(genome)
        channels = self.shape[2]
        self.layers = []
        for layer in self.config.layers:
            k, n = layer.kernel, layer.channels
            kernel = [  # [C_in][kernel][kernel][C_out], read row-major
                [[[read.take() for _ in range(n)] for _ in range(k)] for _ in range(k)]
                for _ in range(channels)
            ]
            bias = read.vector(n) if self.config.use_bias else [0.0] * n
            self.layers.append((layer, kernel, bias))
            channels = n
        self.head = None
        if template.head:
            features = template.feature_size(self.config, observation_space)
            outputs = template.io.output_size
            weights = read.matrix(features, outputs)
            bias = read.vector(outputs) if self.config.use_bias else [0.0] * outputs
            self.head = (weights, bias)
        read.done()

    def reset(self, rng: Any) -> None:
        """Stateless."""

    def step(self, observation: Any) -> list[float]:
        values = [v * self.config.input_scale for v in self.encode(observation)]
        image = image_of(values, *self.shape)
        for layer, kernel, bias in self.layers:
            image = activate(convolve(image, kernel, bias, layer.stride, layer.padding),
                             layer.activation)  # fmt: skip
            if layer.pool != "none":
                image = pool(
                    image, layer.pool, layer.pool_size, layer.pool_stride or layer.pool_size
                )
        features = [v for row in image for pixel in row for v in pixel]
        if self.head is None:
            return features
        weights, bias = self.head
        return [
            math.tanh(sum(features[f] * weights[f][o] for f in range(len(features))) + bias[o])
            for o in range(len(bias))
        ]
