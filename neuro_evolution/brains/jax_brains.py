"""JAX batch brains: CTRNN, FFNN and LSTM (conv and composed: ``jax_conv.py``) as pure functions
over P stacked parameter sets; each template's ``jax_brain()`` makes its own (the interface,
:class:`~neuro_evolution.brains.base.JaxBrain`, is in ``base.py``).

The genome layouts are not written a second time: a JAX brain takes its parameters from the host
arrays its template pours (the CTRNN's and FFNN's numpy batch brain: masks, learned pruning, the
negative diagonal, folded-in input scaling, bounds; the LSTM's layer views), so a genome trained
on one path replays on the other. Only the step is written again, with the same formulas in the
same order as the numpy brains. This module never imports a template module: a template's
``jax_brain()`` passes what the step reads (sizes, options) and the function that pours the host
arrays, whose result the protocols below (:class:`CTRNNArrays`, :class:`FFNNArrays`) describe.


- ``params(genomes)``: host numpy (P, G) -> a dict of device arrays with the brain axis P last
  (the fast layout for :func:`_matvec`);
- ``initial_state(params)``: the state of every brain after ``reset``;
- ``step(params, state, inputs, noise)`` -> (state, outputs): inputs are the encoded observations
  (P, input_size), outputs the raw network outputs (P, output_size) in [-1, 1], before the
  action mapping (:func:`decode_actions`); ``noise`` is (P, N) standard normal draws for a CTRNN
  with ``parameter_perturbations`` (None otherwise). Where the draws come from is the caller's
  choice: the brain tests feed the numpy generators' draws, the JAX handler draws them with
  ``jax.random`` (see ``docs/jax.md``).

Every function is traceable (``jit``, ``lax.while_loop``); the dtype of the arrays is decided by
``params``' ``dtype`` argument (float64 needs ``jax_enable_x64``).

With float64 a JAX brain agrees with the numpy single brain to <= 1e-9 over 500 steps for every
option set of the reference tests. In float32 (parameters, states and inputs rounded to 24-bit
mantissas) the raw outputs stay within 1e-4 of the float64 numpy brain over those 500 steps; a
discrete action (argmax) can flip where two outputs are that close, and from then on the
trajectories differ. The measured worst cases: docs/measurements.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from neuro_evolution.brains.base import BrainTemplate, JaxBrain, Params, State
from neuro_evolution.brains.spaces import SpaceAdapter

# (M_l, b_l) per LSTM layer and (O, b_out) of the output layer, each (P, ...)
LSTMArrays = tuple[Sequence[tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray]]


class CTRNNArrays(Protocol):
    """What the CTRNN JAX brain reads of P poured CTRNNs: M (P, rows, N), T (P, N, outputs), and
    y0, low, high, each (P, N) or one (N,) shared by all."""

    M: np.ndarray
    T: np.ndarray
    y0: np.ndarray
    low: np.ndarray
    high: np.ndarray


class FFNNArrays(Protocol):
    """What the FFNN JAX brain reads of P poured FFNNs: per layer W (P, in, out), b (P, out)."""

    weights: list[np.ndarray]
    biases: list[np.ndarray]


def _activation(name: str) -> Callable[[jax.Array], jax.Array]:
    return {"tanh": jnp.tanh, "relu": lambda x: jnp.maximum(x, 0.0)}[name]


UNROLL_LIMIT = 64  # up to this many source units a matvec is an unrolled sum (fused by XLA)


def _last(array: np.ndarray, dtype: Any) -> jax.Array:
    """A (P, ...) host array as a device array with the brain axis P last (see _matvec)."""
    return jnp.asarray(np.moveaxis(np.asarray(array), 0, -1), dtype=dtype)


def _matvec(x: jax.Array, w: jax.Array) -> jax.Array:
    """Brain p's vector ``x[:, p]`` (K, P) times its matrix ``w[:, :, p]`` (K, M, P): (M, P).

    The brain axis is last, so every term is one contiguous multiply-add over P; for K up to
    UNROLL_LIMIT the sum is unrolled, which XLA fuses into one loop (faster on a CPU than a
    batched dot: docs/measurements.md)."""
    if x.shape[0] <= UNROLL_LIMIT:
        total = x[0][None, :] * w[0]
        for k in range(1, x.shape[0]):
            total = total + x[k][None, :] * w[k]
        return total
    return jnp.einsum("kp,kmp->mp", x, w)


def _sigmoid(x: jax.Array) -> jax.Array:
    """As the numpy LSTM computes it: 0.5 * tanh(x / 2) + 0.5."""
    return jnp.tanh(x * 0.5) * 0.5 + 0.5


class CTRNNJaxBrain(JaxBrain):
    """y <- clip(base + z·M [+ sigma·noise], low, high), out = tanh(y·T); M, T as the numpy
    brain pours them (delta_t folded into M, see ``ctrnn.py``).

    ``arrays`` pours (P, G) genomes; ``neurons`` N and ``inputs`` size the state and M's rows,
    ``activation`` ("tanh" or "relu") is the neurons', ``inplace`` adds dy to the activated state
    instead of y, and ``sigma`` scales the noise added every step (0: none)."""

    def __init__(
        self,
        template: BrainTemplate,
        arrays: Callable[[np.ndarray], CTRNNArrays],
        *,
        neurons: int,
        inputs: int,
        activation: str,
        inplace: bool,
        sigma: float,
    ):
        super().__init__(template)
        self.arrays, self.neurons, self.inputs = arrays, neurons, inputs
        self.activation, self.inplace, self.sigma = activation, inplace, sigma

    def params(self, genomes: np.ndarray, dtype: Any) -> Params:
        batch = self.arrays(genomes)
        count = genomes.shape[0]
        N = self.neurons

        def stacked(array: np.ndarray) -> np.ndarray:
            return np.broadcast_to(array, (count, N))

        return {
            "M": _last(batch.M, dtype),
            "T": _last(batch.T, dtype),
            "y0": _last(stacked(batch.y0), dtype),
            "low": _last(stacked(batch.low), dtype),
            "high": _last(stacked(batch.high), dtype),
        }

    def initial_state(self, params: Params) -> State:
        return params["y0"]

    @property
    def noise_size(self) -> int:
        return self.neurons if self.sigma else 0

    def step(self, params, state, inputs, noise=None):
        y = state  # (N, P)
        s = _activation(self.activation)(y)
        parts = [inputs.T.astype(y.dtype), s]
        extra = params["M"].shape[0] - self.inputs - self.neurons
        if extra:
            parts.append(jnp.ones((extra, y.shape[1]), dtype=y.dtype))
        dy = _matvec(jnp.concatenate(parts, axis=0), params["M"])
        new = (s if self.inplace else y) + dy
        if self.sigma:
            new = new + noise.T.astype(y.dtype) * self.sigma
        new = jnp.maximum(jnp.minimum(new, params["high"]), params["low"])
        return new, jnp.tanh(_matvec(new, params["T"])).T


class FFNNJaxBrain(JaxBrain):
    """Stateless: act(x·W_l + b_l) per hidden layer, the output activation on the last.

    ``arrays`` pours (P, G) genomes; ``activation`` ("tanh" or "relu") is the hidden layers',
    ``squash`` is the output activation: "tanh", "clip" (to [-1, 1]) or "identity"."""

    def __init__(
        self,
        template: BrainTemplate,
        arrays: Callable[[np.ndarray], FFNNArrays],
        *,
        activation: str,
        squash: str,
    ):
        super().__init__(template)
        self.arrays, self.activation, self.squash = arrays, activation, squash

    def params(self, genomes: np.ndarray, dtype: Any) -> Params:
        batch = self.arrays(genomes)
        return {
            "W": [_last(w, dtype) for w in batch.weights],
            "b": [_last(b, dtype) for b in batch.biases],
        }

    def initial_state(self, params: Params) -> State:
        return jnp.zeros((0, params["W"][0].shape[-1]), dtype=params["W"][0].dtype)

    def step(self, params, state, inputs, noise=None):
        activation = _activation(self.activation)
        x = inputs.T.astype(params["W"][0].dtype)
        last = len(params["W"]) - 1
        squash = self.squash
        for i, (w, b) in enumerate(zip(params["W"], params["b"])):
            x = _matvec(x, w) + b
            if i < last:
                x = activation(x)
            elif squash == "tanh":
                x = jnp.tanh(x)
            elif squash == "clip":
                x = jnp.clip(x, -1.0, 1.0)
        return state, x.T


class LSTMJaxBrain(JaxBrain):
    """Stacked LSTM layers (gates i, f, o, g) and a tanh output layer, as in ``lstm.py``;
    ``arrays`` gives the layers' weights of (P, G) genomes, input scaling folded in."""

    def __init__(self, template: BrainTemplate, arrays: Callable[[np.ndarray], LSTMArrays]):
        super().__init__(template)
        self.arrays = arrays

    def params(self, genomes: np.ndarray, dtype: Any) -> Params:
        layers, (out_weights, out_bias) = self.arrays(genomes)
        return {
            "M": [_last(m, dtype) for m, _ in layers],
            "b": [_last(b, dtype) for _, b in layers],
            "O": _last(out_weights, dtype),
            "b_out": _last(out_bias, dtype),
        }

    def initial_state(self, params: Params) -> State:
        H, _, count = params["O"].shape
        zeros = jnp.zeros((len(params["M"]), H, count), dtype=params["O"].dtype)
        return (zeros, zeros)

    def step(self, params, state, inputs, noise=None):
        h_all, c_all = state  # (layers, H, P) each
        H = params["O"].shape[0]
        x = inputs.T.astype(params["O"].dtype)
        hs, cs = [], []
        for layer, (M, b) in enumerate(zip(params["M"], params["b"])):
            gates = _matvec(jnp.concatenate([x, h_all[layer]], axis=0), M) + b
            i, f, o = (_sigmoid(gates[k * H : (k + 1) * H]) for k in range(3))
            g = jnp.tanh(gates[3 * H :])
            c = c_all[layer] * f + i * g
            x = jnp.tanh(c) * o
            hs.append(x)
            cs.append(c)
        out = jnp.tanh(_matvec(x, params["O"]) + params["b_out"])
        return (jnp.stack(hs), jnp.stack(cs)), out.T


def encode_inputs(io: SpaceAdapter, observations: jax.Array, dtype: Any) -> jax.Array:
    """(P, input_size) brain inputs, as ``SpaceAdapter.encode_batch`` (Discrete: one-hot)."""
    if io.observation_kind == "discrete":
        index = observations.reshape(-1).astype(jnp.int32) - io.observation_start
        return jax.nn.one_hot(index, io.input_size, dtype=dtype)
    return observations.reshape(observations.shape[0], -1).astype(dtype)


def decode_actions(io: SpaceAdapter, outputs: jax.Array) -> jax.Array:
    """Actions for (P, output_size) outputs, as ``SpaceAdapter.decode_batch`` maps them."""
    count = outputs.shape[0]
    kind = io.action_kind
    if kind == "discrete":
        return jnp.argmax(outputs, axis=1).astype(jnp.int32) + int(io.action_start[0])
    if kind == "box":
        if io.bounded:
            low = jnp.asarray(io.action_low, dtype=outputs.dtype)
            high = jnp.asarray(io.action_high, dtype=outputs.dtype)
            outputs = low + (outputs + 1.0) * 0.5 * (high - low)
        # in the action space's dtype, as the numpy path hands actions to the env
        return outputs.astype(io.action_dtype).reshape((count, *io.action_shape))
    if kind == "multibinary":
        return (outputs > 0).astype(jnp.int32).reshape((count, *io.action_shape))
    blocks, offset = [], 0
    for i, n in enumerate(io.action_nvec.tolist()):
        block = outputs[:, offset : offset + n]
        blocks.append(jnp.argmax(block, axis=1).astype(jnp.int32) + int(io.action_start[i]))
        offset += n
    return jnp.stack(blocks, axis=1).reshape((count, *io.action_shape))
