"""Slow, obviously-correct reference brains: plain Python loops over lists of floats.

Each reference reads the genome one value at a time in the documented layout order and steps the
network with explicit sums, so the fast numpy brains can be checked against the documentation
rather than against themselves. Outputs are the raw network outputs (before the action mapping).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from conv_reference import ReferenceConv


class GenomeReader:
    """Hands out a genome's values in order and checks that all of them were used."""

    def __init__(self, genome: np.ndarray):
        self.values = [float(v) for v in genome]
        self.position = 0

    def take(self) -> float:
        value = self.values[self.position]
        self.position += 1
        return value

    def matrix(self, rows: int, cols: int, mask: Any = None) -> list[list[float]]:
        """A rows x cols matrix read row by row; entries outside ``mask`` are 0."""
        return [
            [self.take() if mask is None or mask[r][c] else 0.0 for c in range(cols)]
            for r in range(rows)
        ]

    def vector(self, size: int) -> list[float]:
        return [self.take() for _ in range(size)]

    def done(self) -> None:
        assert self.position == len(self.values), (self.position, len(self.values))


def encode(observation: Any, space: gym.Space) -> list[float]:
    """Discrete: one-hot; Box: the flattened values."""
    if isinstance(space, gym.spaces.Discrete):
        return [1.0 if k == int(observation) - int(space.start) else 0.0 for k in range(space.n)]
    return [float(v) for v in np.asarray(observation).reshape(-1)]


def dot_columns(vector: list[float], matrix: list[list[float]]) -> list[float]:
    """vector · matrix (row vector times matrix) with an explicit sum per column."""
    cols = len(matrix[0]) if matrix else 0
    return [sum(vector[r] * matrix[r][c] for r in range(len(vector))) for c in range(cols)]


def percentile_higher(values: list[float], q: float) -> float:
    """numpy's percentile with method="higher": the sorted value at ceil(q/100 * (n - 1))."""
    ordered = sorted(values)
    return ordered[math.ceil((q / 100) * (len(ordered) - 1))]


def keep_largest(matrix: list[list[float]], q: float) -> None:
    """The learned mask: zero the entries whose magnitude is below the q-th percentile."""
    threshold = percentile_higher([abs(v) for row in matrix for v in row], q)
    for row in matrix:
        for c, v in enumerate(row):
            if abs(v) < threshold:
                row[c] = 0.0


class ReferenceCTRNN:
    """The CTRNN of ``neuro_evolution/brains/ctrnn.py``'s docstring, one float at a time."""

    def __init__(self, template: Any, genome: np.ndarray, observation_space: gym.Space):
        c = template.config
        self.config = c
        self.space = observation_space
        N = c.number_neurons
        n_in, n_out = template.v_mask.shape[0], template.t_mask.shape[1]
        read = GenomeReader(genome)
        self.V = read.matrix(n_in, N, template.v_mask.tolist())
        self.W = read.matrix(N, N, template.w_mask.tolist())
        self.T = read.matrix(N, n_out, template.t_mask.tolist())
        self.b = read.vector(N) if c.use_bias else [0.0] * N
        self.y0 = read.vector(N) if c.optimize_y0 else [0.0] * N
        if c.optimize_state_boundaries == "per_neuron":
            self.low = [-abs(v) for v in read.vector(N)]
            self.high = [abs(v) for v in read.vector(N)]
        elif c.optimize_state_boundaries == "global":
            self.low = [-abs(read.take())] * N
            self.high = [abs(read.take())] * N
        else:
            self.low = [c.clipping_range_min] * N
            self.high = [c.clipping_range_max] * N
        read.done()
        learned = (
            (self.V, c.v_mask, c.v_mask_param),
            (self.W, c.w_mask, c.w_mask_param),
            (self.T, c.t_mask, c.t_mask_param),
        )
        for matrix, kind, q in learned:
            if kind == "learned":
                keep_largest(matrix, q)
        if c.set_principle_diagonal_elements_of_W_negative:
            for i in range(N):
                self.W[i][i] = -abs(self.W[i][i])
        self.y = list(self.y0)
        self.rng: np.random.Generator | None = None

    def reset(self, rng: np.random.Generator) -> None:
        self.y = list(self.y0)
        self.rng = rng

    def inputs(self, observation: Any) -> list[float]:
        return scaled_inputs(encode(observation, self.space), self.config, self.space)

    def step(self, observation: Any) -> list[float]:
        c = self.config
        N = c.number_neurons
        u = self.inputs(observation)
        if c.neuron_activation == "tanh":
            s = [math.tanh(v) for v in self.y]
        else:
            s = [max(0.0, v) for v in self.y]
        recurrent = dot_columns(s, self.W)
        external = dot_columns(u, self.V)
        dydt = [recurrent[i] + external[i] + self.b[i] for i in range(N)]
        start = s if c.neuron_activation_inplace else self.y
        y = [start[i] + c.delta_t * dydt[i] for i in range(N)]
        if c.parameter_perturbations:
            noise = self.rng.standard_normal(N)
            y = [y[i] + c.parameter_perturbations * float(noise[i]) for i in range(N)]
        self.y = [min(max(y[i], self.low[i]), self.high[i]) for i in range(N)]
        return [math.tanh(v) for v in dot_columns(self.y, self.T)]


def scaled_inputs(u: list[float], config: Any, space: gym.Space) -> list[float]:
    """``normalize_input``: every element with both bounds inside +-1e5 mapped from [low, high]
    to [-target, target]; the others as they are."""
    if not config.normalize_input:
        return u
    target = config.normalize_input_target
    low, high = space.low.reshape(-1), space.high.reshape(-1)
    for k in range(len(u)):
        lo, hi = float(low[k]), float(high[k])
        if -1e5 < lo < hi < 1e5:
            u[k] = ((u[k] - lo) / (hi - lo) - 0.5) * (2 * target)
    return u


def sigmoid(x: float) -> float:
    """The logistic function, written so that exp never overflows."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


class ReferenceLSTM:
    """The LSTM of ``neuro_evolution/brains/lstm.py``'s docstring, one float at a time."""

    def __init__(self, template: Any, genome: np.ndarray, observation_space: gym.Space):
        c = template.config
        self.space = observation_space
        H = c.hidden_size
        read = GenomeReader(genome)
        self.layers = []
        for layer in range(c.number_layers):
            n = template.io.input_size if layer == 0 else H
            U = read.matrix(n, 4 * H)
            R = read.matrix(H, 4 * H)
            b = read.vector(4 * H) if c.use_bias else [0.0] * (4 * H)
            self.layers.append((U, R, b))
        self.O = read.matrix(H, template.io.output_size)
        self.b_out = read.vector(template.io.output_size) if c.use_bias else None
        read.done()
        self.H = H
        self.config = c
        self.reset(None)

    def reset(self, rng: Any) -> None:
        self.h = [[0.0] * self.H for _ in self.layers]
        self.c = [[0.0] * self.H for _ in self.layers]

    def step(self, observation: Any) -> list[float]:
        H = self.H
        x = scaled_inputs(encode(observation, self.space), self.config, self.space)
        for layer, (U, R, b) in enumerate(self.layers):
            from_input = dot_columns(x, U)
            from_state = dot_columns(self.h[layer], R)
            a = [from_input[k] + from_state[k] + b[k] for k in range(4 * H)]
            i = [sigmoid(v) for v in a[:H]]
            f = [sigmoid(v) for v in a[H : 2 * H]]
            o = [sigmoid(v) for v in a[2 * H : 3 * H]]
            g = [math.tanh(v) for v in a[3 * H :]]
            self.c[layer] = [f[k] * self.c[layer][k] + i[k] * g[k] for k in range(H)]
            self.h[layer] = [o[k] * math.tanh(self.c[layer][k]) for k in range(H)]
            x = self.h[layer]
        out = dot_columns(x, self.O)
        if self.b_out is not None:
            out = [out[k] + self.b_out[k] for k in range(len(out))]
        return [math.tanh(v) for v in out]


class ReferenceFFNN:
    """The FFNN of ``neuro_evolution/brains/ffnn.py``'s docstring (W_l is out x in there)."""

    def __init__(self, template: Any, genome: np.ndarray, observation_space: gym.Space):
        c = template.config
        self.space = observation_space
        read = GenomeReader(genome)
        sizes = template.layer_sizes
        self.layers = []
        for n_in, n_out in zip(sizes, sizes[1:]):
            W = read.matrix(n_out, n_in)
            b = read.vector(n_out) if c.use_bias else [0.0] * n_out
            self.layers.append((W, b))
        read.done()
        self.activation = c.activation
        self.output_activation = c.output_activation

    def reset(self, rng: Any) -> None:
        """Stateless."""

    def step(self, observation: Any) -> list[float]:
        x = encode(observation, self.space)
        for number, (W, b) in enumerate(self.layers):
            x = [sum(W[r][k] * x[k] for k in range(len(x))) + b[r] for r in range(len(W))]
            last = number == len(self.layers) - 1
            name = self.output_activation if last else self.activation
            if name == "tanh":
                x = [math.tanh(v) for v in x]
            elif name == "relu":
                x = [max(0.0, v) for v in x]
            elif name == "clip":
                x = [min(1.0, max(-1.0, v)) for v in x]
        return x


class ReferenceComposed:
    """The composed brain of ``neuro_evolution/brains/composed.py``'s docstring: every part's
    reference on its slice of the genome (read in part order), each fed the previous part's raw
    outputs, all reset with the one generator."""

    def __init__(self, template: Any, genome: np.ndarray, observation_space: gym.Space):
        self.parts = []
        space, offset = observation_space, 0
        for part in template.parts:
            size = part.genome_size
            reference = REFERENCES[part.config.type_name()]
            self.parts.append(reference(part, genome[offset : offset + size], space))
            offset += size
            space = gym.spaces.Box(-np.inf, np.inf, (part.io.output_size,), dtype=np.float64)
        assert offset == len(genome), (offset, len(genome))

    def reset(self, rng: Any) -> None:
        for part in self.parts:
            part.reset(rng)

    def step(self, observation: Any) -> list[float]:
        for part in self.parts:
            observation = part.step(observation)
        return observation


class ReferenceEgocentric:
    """The egocentric window of ``neuro_evolution/brains/egocentric.py``'s docstring, one cell
    at a time: the agent is the first cell (row-major) holding its channel's largest value."""

    def __init__(self, template: Any, genome: np.ndarray, observation_space: gym.Space):
        assert len(genome) == 0
        self.shape = tuple(observation_space.shape)
        self.channel, self.size = template.config.channel, template.config.size

    def reset(self, rng: Any) -> None:
        """Stateless."""

    def step(self, observation: Any) -> list[float]:
        height, width, channels = self.shape
        values = [float(v) for v in np.asarray(observation).reshape(-1)]
        at = lambda r, c, k: values[(r * width + c) * channels + k]  # noqa: E731
        row = col = 0
        for r in range(height):
            for c in range(width):
                if at(r, c, self.channel) > at(row, col, self.channel):
                    row, col = r, c
        half, window = self.size // 2, []
        for i in range(self.size):
            for j in range(self.size):
                r, c = row + i - half, col + j - half
                inside = 0 <= r < height and 0 <= c < width
                for k in range(channels):
                    if k != self.channel:
                        window.append(at(r, c, k) if inside else 0.0)
        return window


REFERENCES: dict[str, Any] = {
    "egocentric": ReferenceEgocentric,
    "CTRNN": ReferenceCTRNN,
    "LSTM": ReferenceLSTM,
    "FFNN": ReferenceFFNN,
    "conv": ReferenceConv,
    "composed": ReferenceComposed,
}


def reference_logarithmic_mask(rows: int, cols: int, base: float) -> list[list[bool]]:
    """The predecessor's logarithmic mask, written out with lists."""
    offsets = [math.floor(base**k) for k in range(math.floor(math.log(max(rows, cols), base)) + 1)]
    mask = [[False] * cols for _ in range(rows)]
    if cols > rows:
        diagonal = [(round(j * ((rows - 1) / cols)), j) for j in range(cols)]
    else:
        diagonal = [(i, round(i * ((cols - 1) / rows))) for i in range(rows)]
    for r, c in diagonal:
        for offset in offsets:
            mask[r][(c + offset) % cols] = True
            mask[r][(c - offset) % cols] = True
    return mask
