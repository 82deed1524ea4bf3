"""Numpy kernels of the conv front end, for a stack of P images with P weight sets.

Every function works on channel-last float64 stacks (P, H, W, C) with one weight set per image,
so one brain is the P = 1 case of the same code (and a batch brain's row i is bit-identical to
a single brain of genome i: each image is one BLAS call of the same shape). There is no Python
loop over P or over pixels: a convolution is an im2col (``sliding_window_view``) and a
batched ``np.matmul``; a pooling window is a loop over its few offsets, each a whole-stack
operation. The patches are built for a block of images at a time (``BLOCK_BYTES``), which
keeps them in the cache (twice as fast as one im2col of the whole stack at P = 256) and bounds
the memory they take.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

BLOCK_BYTES = 4 << 20  # the im2col patches of this many bytes' worth of images at a time


def output_length(size: int, window: int, stride: int, padding: int = 0) -> int:
    """Positions of a window sliding over ``size`` (+ padding on both sides); <= 0: none fits."""
    return (size + 2 * padding - window) // stride + 1


def convolve(
    x: np.ndarray, kernels: np.ndarray, bias: np.ndarray | None, stride: int, padding: int
) -> np.ndarray:
    """Zero-padded strided cross-correlation: x (P, H, W, C), kernels (P, C, kh, kw, O),
    bias (P, O) or None -> (P, Ho, Wo, O), with

    out[p, i, j, o] = sum_{c, a, b} xpad[p, i*stride + a, j*stride + b, c] * kernels[p, c, a, b, o]
                      + bias[p, o]

    (the kernel's (C, kh, kw) order is the order of ``sliding_window_view``'s window axes, so
    the patches are one plain copy, not a transposed one)
    """
    if padding:
        x = np.pad(x, ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    count, _, _, channels = x.shape
    _, _, kh, kw, out_channels = kernels.shape
    windows = sliding_window_view(x, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
    rows, cols = windows.shape[1:3]  # windows: (P, Ho, Wo, C, kh, kw)
    size = channels * kh * kw
    flat = kernels.reshape(count, size, out_channels)
    out = np.empty((count, rows * cols, out_channels))
    block = max(1, BLOCK_BYTES // (rows * cols * size * 8))
    for start in range(0, count, block):  # blocks of images: their patches stay in the cache
        stop = min(start + block, count)
        patches = windows[start:stop].reshape(stop - start, rows * cols, size)
        np.matmul(patches, flat[start:stop], out=out[start:stop])
    if bias is not None:
        out += bias[:, None, :]
    return out.reshape(count, rows, cols, out_channels)


def pool(x: np.ndarray, kind: str, size: int, stride: int) -> np.ndarray:
    """Max or average pooling of (P, H, W, C) over size x size windows (no padding; windows that
    would run past the edge are dropped) -> (P, Ho, Wo, C). The average is the sum of the window
    (row by row) divided by size**2."""
    _, height, width, _ = x.shape
    rows, cols = output_length(height, size, stride), output_length(width, size, stride)
    out: np.ndarray | None = None
    for a in range(size):
        for b in range(size):
            window = x[
                :,
                a : a + stride * (rows - 1) + 1 : stride,
                b : b + stride * (cols - 1) + 1 : stride,
            ]
            if out is None:
                out = window.copy()
            elif kind == "max":
                np.maximum(out, window, out=out)
            else:
                np.add(out, window, out=out)
    assert out is not None
    if kind == "average":
        np.divide(out, size * size, out=out)
    return out


def activate(x: np.ndarray, name: str) -> np.ndarray:
    """relu, tanh or none, in place."""
    if name == "relu":
        np.maximum(x, 0.0, out=x)
    elif name == "tanh":
        np.tanh(x, out=x)
    return x


def dense_tanh(x: np.ndarray, weights: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """tanh(x·W + b) per row: x (P, F), weights (P, F, O), bias (P, O) or None -> (P, O)."""
    out = np.matmul(x[:, None, :], weights)[:, 0, :]
    if bias is not None:
        out += bias
    return np.tanh(out, out=out)
