"""JAX batch brains of the conv front end and of composed brains (see ``jax_brains.py``).

The conv brain takes its weights from the host arrays its template cuts from the genomes (the
genome layout is written once, in ``conv.py``), with the brain axis P first; what its step reads
of the template's plan is stated by :class:`ConvPlan` and :class:`ConvStage`, so this module
imports no template module. Every brain has its own kernels, so a layer is
one batched matrix product: the image's k x k patches (P, Ho·Wo, k·k·C) times the kernels
(P, k·k·C, O), which a CPU runs faster than ``lax.conv_general_dilated`` mapped over P.
Pooling is ``jax.lax.reduce_window``.
A composed brain chains its parts' JAX brains: part i's raw outputs are part i+1's inputs, the
state is the tuple of the parts' states, and the noise columns are split among the parts in
part order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from neuro_evolution.brains.base import BrainTemplate, JaxBrain, Params, State


class ConvStage(Protocol):
    """One conv layer as the step reads it: the conv's stride and zero padding, the activation
    ("relu", "tanh" or "none") and the pooling ("max", "average" or "none") with its window."""

    @property
    def stride(self) -> int: ...
    @property
    def padding(self) -> int: ...
    @property
    def activation(self) -> str: ...
    @property
    def pool(self) -> str: ...
    @property
    def pool_size(self) -> int: ...
    @property
    def pool_stride(self) -> int: ...


class ConvPlan(Protocol):
    """The conv step: the input ``scale``, the ``stages`` in order, and whether a dense tanh
    ``head`` follows (else the flattened features are the outputs)."""

    @property
    def stages(self) -> Sequence[ConvStage]: ...
    @property
    def scale(self) -> float: ...
    @property
    def head(self) -> bool: ...


def _convolve(x: jax.Array, kernel: jax.Array, stride: int, padding: int) -> jax.Array:
    """Images (P, H, W, C), each with its kernel (P, k, k, C, O) -> (P, Ho, Wo, O)."""
    count, size, channels, outputs = x.shape[0], kernel.shape[1], x.shape[3], kernel.shape[4]
    if padding:
        x = jnp.pad(x, ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    rows = (x.shape[1] - size) // stride + 1
    columns = (x.shape[2] - size) // stride + 1
    span_rows, span_columns = stride * (rows - 1) + 1, stride * (columns - 1) + 1
    patches = jnp.stack(  # (P, Ho, Wo, k·k, C), offsets in the kernel's (row, column) order
        [
            x[:, i : i + span_rows : stride, j : j + span_columns : stride, :]
            for i in range(size)
            for j in range(size)
        ],
        axis=3,
    ).reshape(count, rows * columns, size * size * channels)
    flat = kernel.reshape(count, size * size * channels, outputs)
    out = jnp.einsum("pnk,pko->pno", patches, flat, precision=jax.lax.Precision.HIGHEST)
    return out.reshape(count, rows, columns, outputs)


def _pool(x: jax.Array, kind: str, size: int, stride: int) -> jax.Array:
    """Max or average pooling of (P, H, W, C), windows that fit only."""
    window, strides = (1, size, size, 1), (1, stride, stride, 1)
    if kind == "max":
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, "VALID")
    return jax.lax.reduce_window(x, 0.0, jax.lax.add, window, strides, "VALID") / (size * size)


class ConvJaxBrain(JaxBrain):
    """Stateless: conv layers, activation, pooling, then features or a dense tanh layer.

    ``arrays`` cuts (P, G) genomes into the weight arrays by name (K<i> (P, C, k, k, O), b<i>,
    D, d); ``plan`` is the step; ``image_shape`` (H, W, C) is how an input is read."""

    PARAMS_AXIS = 0  # (P, k, k, C, O) kernels: the batched product's layout

    def __init__(
        self,
        template: BrainTemplate,
        arrays: Callable[[np.ndarray], Mapping[str, np.ndarray]],
        plan: ConvPlan,
        image_shape: tuple[int, ...],
    ):
        super().__init__(template)
        self.arrays, self.plan, self.image_shape = arrays, plan, tuple(image_shape)

    def params(self, genomes: np.ndarray, dtype: Any) -> Params:
        params = {}
        for name, array in self.arrays(genomes).items():
            if name.startswith("K"):  # (P, C, k, k, O) -> the HWIO order of lax: (P, k, k, C, O)
                array = array.transpose(0, 2, 3, 1, 4)
            params[name] = jnp.asarray(array, dtype=dtype)
        return params

    def initial_state(self, params: Params) -> State:
        return jnp.zeros((0, params["K0"].shape[0]), dtype=params["K0"].dtype)

    def step(self, params, state, inputs, noise=None):
        plan = self.plan
        x = inputs.astype(params["K0"].dtype).reshape((inputs.shape[0], *self.image_shape))
        if plan.scale != 1.0:
            x = x * plan.scale
        for number, stage in enumerate(plan.stages):
            x = _convolve(x, params[f"K{number}"], stage.stride, stage.padding)
            if f"b{number}" in params:
                x = x + params[f"b{number}"][:, None, None, :]
            if stage.activation == "relu":
                x = jnp.maximum(x, 0.0)
            elif stage.activation == "tanh":
                x = jnp.tanh(x)
            if stage.pool != "none":
                x = _pool(x, stage.pool, stage.pool_size, stage.pool_stride)
        x = x.reshape(x.shape[0], -1)
        if plan.head:
            x = jnp.einsum("pf,pfo->po", x, params["D"], precision=jax.lax.Precision.HIGHEST)
            if "d" in params:
                x = x + params["d"]
            x = jnp.tanh(x)
        return state, x


class ComposedJaxBrain(JaxBrain):
    """The parts' JAX brains in order (see the module docstring), each made by its part's
    template; ``slices`` are the parts' genome slices."""

    def __init__(self, template: BrainTemplate, parts: Sequence[JaxBrain], slices: Sequence[slice]):
        super().__init__(template)
        self.parts, self.slices = list(parts), list(slices)

    def params(self, genomes: np.ndarray, dtype: Any) -> Params:
        genomes = self.template.check_genomes(genomes)
        pieces = self.slices
        return {"parts": [b.params(genomes[:, s], dtype) for b, s in zip(self.parts, pieces)]}

    def initial_state(self, params: Params) -> State:
        return tuple(b.initial_state(p) for b, p in zip(self.parts, params["parts"]))

    def take(self, params: Params, index: jax.Array) -> Params:
        return {"parts": [b.take(p, index) for b, p in zip(self.parts, params["parts"])]}

    def choose_state(self, mask: jax.Array, fresh: State, state: State) -> State:
        return tuple(b.choose_state(mask, f, s) for b, f, s in zip(self.parts, fresh, state))

    @property
    def noise_size(self) -> int:
        return sum(part.noise_size for part in self.parts)

    def step(self, params, state, inputs, noise=None):
        states, start = [], 0
        for brain, own, part_state in zip(self.parts, params["parts"], state):
            size = brain.noise_size
            part_noise = noise[:, start : start + size] if size else None
            start += size
            part_state, inputs = brain.step(own, part_state, inputs, part_noise)
            states.append(part_state)
        return tuple(states), inputs
