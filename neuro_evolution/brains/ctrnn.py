"""Continuous-time recurrent neural network (CTRNN).

Every weight matrix is (source × target), so the network works on row vectors: W[i, j] is the
weight from neuron i to neuron j, V[k, i] from input k to neuron i, T[i, o] from neuron i to
output o. One step with input u (the encoded observation), state y (N neurons), activation σ:

    dy/dt = σ(y)·W + u·V + b
    y     ← y + delta_t · dy/dt          (σ(y) + delta_t · dy/dt with neuron_activation_inplace)
    y     ← y + parameter_perturbations · ε,  ε ~ N(0, 1) drawn from the generator given to reset
    y     ← clip(y, low, high)
    out   = tanh(y·T)                    (then mapped to the env's action space)

Masks (drawn once by ``from_config``, saved in the template): V is (inputs × N), W is (N × N),
T is (N × outputs). Genome layout, in this order:

1. V's masked entries in row-major mask order, then W's, then T's;
2. with ``use_bias``: b (N);
3. with ``optimize_y0``: y0 (N), otherwise y0 = 0;
4. ``optimize_state_boundaries``: ``per_neuron``: N lower then N upper values, the bounds being
   -|lower| and |upper|; ``global``: one lower then one upper value, likewise; ``fixed``: nothing,
   the bounds are ``clipping_range_min``/``clipping_range_max``.

Then ``set_principle_diagonal_elements_of_W_negative`` makes W[i, i] = -|W[i, i]|, and a
``learned`` mask keeps only its matrix's largest magnitudes, with their signs (see ``masks.py``);
it ranks V, W and T each alone, so b is never pruned. ``normalize_input`` scales every Box
observation element whose bounds both lie strictly within ±1e5 from [low, high] to
[-target, target] and leaves the others as they are; it is folded into V and b when a brain is
filled, so it costs a step nothing. Fixed state bounds default to [-1, 1]; the lower must lie
below the upper (equal bounds would pin every state to one value).

Fast path: a brain stores M = delta_t·[V; W; b] ((inputs + N + 1) × N, in the genome's order, so
a dense genome pours in with contiguous copies) and z = [u | σ(y) | 1], so delta_t·dy/dt is one
``np.dot``.
Every buffer is preallocated, and the options that change the step are decided at build time.
"""

from __future__ import annotations

from typing import Any, Literal

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.activations import ACTIVATIONS, RowSelection, as_is
from neuro_evolution.brains.base import (
    BRAINS,
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    JaxBrain,
    units_in_gene_order,
)
from neuro_evolution.brains.input_scaling import NORMALIZE_DOC, input_scaling
from neuro_evolution.brains.masks import (
    MaskType,
    Section,
    block_sections,
    check_mask_param,
    keep_largest,
    make_mask,
    merge_sections,
)
from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.support.errors import UserError
from neuro_evolution.support.frozen import frozen_dataclass, readonly

MASK_PARAM_DOC = "random: density in [0, 1]; logarithmic: base >= 1.05; learned: percentile kept"


@config_class
class CTRNNConfig(BrainConfig):
    """Options of the ``CTRNN`` brain."""

    number_neurons: int = option(10, doc="neurons N of the network", ge=1)
    delta_t: float = option(
        1.0,
        doc="Euler step of y += delta_t * dy/dt; with small steps every neuron is a slow "
        "integrator that sums its inputs instead of holding what came when",
        gt=0,
    )
    neuron_activation: Literal["tanh", "relu"] = option("tanh", doc="σ in dy/dt = σ(y)·W + u·V + b")
    neuron_activation_inplace: bool = option(
        False, doc="integrate from σ(y) instead of y: y ← σ(y) + delta_t * dy/dt"
    )
    use_bias: bool = option(True, doc="a bias b per neuron in dy/dt (N genome values)")
    optimize_y0: bool = option(False, doc="the initial state y0 is in the genome (else zero)")
    optimize_state_boundaries: Literal["per_neuron", "global", "fixed"] = option(
        "fixed",
        doc="state bounds: per_neuron/global from the genome as (-|g|, |g|), fixed from "
        "clipping_range_min/max",
    )
    clipping_range_min: float = option(
        -1.0, doc="lower state bound (fixed boundaries); must be below clipping_range_max"
    )
    clipping_range_max: float = option(1.0, doc="upper state bound (fixed boundaries)")
    set_principle_diagonal_elements_of_W_negative: bool = option(
        False, doc="self-connections become inhibitory: W[i, i] = -|W[i, i]|"
    )
    v_mask: MaskType = option(
        "dense",
        doc="which input weights V (inputs x N) exist; learned ranks V alone and never prunes b; "
        "logarithmic is drawn along the longer side (every row and column gets entries)",
    )
    v_mask_param: float = option(1.0, doc=MASK_PARAM_DOC)
    w_mask: MaskType = option(
        "dense",
        doc="which recurrent weights W (N x N, source x target) exist",
    )
    w_mask_param: float = option(1.0, doc=MASK_PARAM_DOC)
    t_mask: MaskType = option("dense", doc="which output weights T (N x outputs) exist")
    t_mask_param: float = option(1.0, doc=MASK_PARAM_DOC)
    normalize_input: bool = option(False, doc=NORMALIZE_DOC)
    normalize_input_target: float = option(1.0, doc="the target of normalize_input", gt=0)
    parameter_perturbations: float = option(
        0.0, doc="std of Gaussian noise added to the state each step (from reset's rng)", ge=0
    )

    def validate(self, path: str) -> None:
        if self.clipping_range_min >= self.clipping_range_max:
            raise ConfigError(
                join(path, "clipping_range_min"),
                f"must be below clipping_range_max ({self.clipping_range_max:g}), "
                f"got {self.clipping_range_min:g}",
            )
        for name in ("v", "w", "t"):
            kind = getattr(self, f"{name}_mask")
            check_mask_param(
                kind, getattr(self, f"{name}_mask_param"), join(path, f"{name}_mask_param")
            )


class CTRNNBrain(Brain):
    """One CTRNN: owned parameter copies and preallocated buffers (see the module docstring)."""

    __slots__ = (
        "io", "encode", "M", "T", "y0", "low", "high", "y", "z", "u", "s", "dy", "o", "base",
        "activation", "activation_args", "rng", "noise", "sigma",
    )  # fmt: skip

    def __init__(self, io: SpaceAdapter, plan: _Plan):
        self.io = io
        self.encode = io.encode if plan.one_hot else as_is
        self.M = plan.M.copy()
        self.T = plan.T.copy()
        self.y0 = plan.y0.copy() if plan.own_y0 else plan.y0
        self.low = plan.low.copy() if plan.own_bounds else plan.low
        self.high = plan.high.copy() if plan.own_bounds else plan.high
        self.y = self.y0.copy()
        self.z = plan.z.copy()
        self.u = self.z[: plan.n_in].reshape(plan.input_shape)  # the observation, as float64
        self.s = self.z[plan.n_in : plan.n_in + plan.N]  # σ(y), written by the activation
        self.dy = np.empty(plan.N)
        self.o = np.empty(plan.n_out)
        self.base = self.s if plan.inplace else self.y
        self.activation, self.activation_args = plan.activation
        self.rng: np.random.Generator | None = None
        self.sigma = plan.sigma

    def reset(self, rng: np.random.Generator) -> None:
        """Back to y0; ``rng`` drives the perturbation noise of the episode."""
        self.y[...] = self.y0
        self.rng = rng

    def perturb(self) -> None:
        """Add state noise (none in this class; see :class:`NoisyCTRNNBrain`)."""

    def step(self, observation: Any) -> Any:
        y = self.y
        self.u[...] = self.encode(observation)
        self.activation(y, *self.activation_args, out=self.s)
        np.dot(self.z, self.M, out=self.dy)  # delta_t * dy/dt: M is pre-multiplied
        np.add(self.base, self.dy, out=y)
        self.perturb()
        np.minimum(y, self.high, out=y)
        np.maximum(y, self.low, out=y)
        np.dot(y, self.T, out=self.o)
        np.tanh(self.o, out=self.o)
        return self.io.decode(self.o)

    def internal_state(self) -> dict[str, np.ndarray]:
        """The neuron states y (the outputs are tanh(y . T), so y is all the CTRNN carries)."""
        return {"neuron_state": self.y.copy()}


class NoisyCTRNNBrain(CTRNNBrain):
    """A CTRNN with ``parameter_perturbations``: one ``standard_normal(N)`` draw per step."""

    __slots__ = ()

    def __init__(self, io: SpaceAdapter, plan: _Plan):
        super().__init__(io, plan)
        self.noise = np.empty(plan.N)

    def perturb(self) -> None:
        if self.rng is None:
            raise RuntimeError("call reset(rng) before stepping a CTRNN with perturbations")
        self.rng.standard_normal(out=self.noise)
        np.multiply(self.noise, self.sigma, out=self.noise)
        np.add(self.y, self.noise, out=self.y)


class CTRNNBatchBrain(BatchBrain):
    """P CTRNNs of one template stepped together; brain i computes exactly what a single does."""

    __slots__ = ("io", "plan", "M", "T", "y0", "low", "high", "y", "o", "rngs", "selection")

    def __init__(self, io: SpaceAdapter, plan: _Plan, genomes: np.ndarray):
        count = genomes.shape[0]
        self.io, self.plan = io, plan
        self.M = np.repeat(plan.M[None], count, axis=0)
        self.T = np.repeat(plan.T[None], count, axis=0)
        self.y0 = np.repeat(plan.y0[None], count, axis=0) if plan.own_y0 else plan.y0
        self.low = np.repeat(plan.low[None], count, axis=0) if plan.own_bounds else plan.low
        self.high = np.repeat(plan.high[None], count, axis=0) if plan.own_bounds else plan.high
        plan.pour(self, genomes)
        per_brain = {"M": self.M, "T": self.T}
        if plan.own_bounds:
            per_brain.update(low=self.low, high=self.high)
        self.selection = RowSelection(per_brain, count)
        self.y = np.zeros((count, plan.N))
        self.y[...] = self.y0
        self.o = np.zeros((count, plan.n_out))
        self.rngs: list[np.random.Generator] = []

    def reset(self, rngs: list[np.random.Generator]) -> None:
        if len(rngs) != self.y.shape[0]:
            raise ValueError(f"reset got {len(rngs)} generators for {self.y.shape[0]} brains")
        self.y[...] = self.y0
        self.rngs = list(rngs)
        self.selection.reset()

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        plan = self.plan
        N, n_in = plan.N, plan.n_in
        rows = self.selection.select(active)
        params = rows.params
        y = rows.gather(self.y)
        z = np.empty((y.shape[0], plan.z.size))
        z[:, :n_in] = rows.gather(self.io.encode_batch(observations))
        z[:, n_in + N :] = 1.0
        s = z[:, n_in : n_in + N]
        activation, args = plan.activation
        activation(y, *args, out=s)
        dy = np.matmul(z[:, None, :], params["M"])[:, 0, :]
        new = np.add(s if plan.inplace else y, dy)
        if plan.sigma:
            noise = np.empty_like(new)
            for position, brain in rows.active_pairs(self.y.shape[0]):
                self.rngs[brain].standard_normal(out=noise[position])
            np.multiply(noise, plan.sigma, out=noise)
            np.add(new, noise, out=new)
        np.minimum(new, params.get("high", self.high), out=new)
        np.maximum(new, params.get("low", self.low), out=new)
        o = np.matmul(new[:, None, :], params["T"])[:, 0, :]
        np.tanh(o, out=o)
        rows.store(self.y, new)
        rows.store(self.o, o)
        return self.io.decode_batch(self.o)


def _m_rows(config: CTRNNConfig, n_in: int) -> int:
    """Rows of M = [V; W; b]: b's row exists with a bias or a folded-in input scaling."""
    return n_in + config.number_neurons + int(config.use_bias or config.normalize_input)


def _bound_size(config: CTRNNConfig) -> int:
    """Genome values per state bound (lower and upper each)."""
    per_neuron = config.number_neurons
    return {"per_neuron": per_neuron, "global": 1, "fixed": 0}[config.optimize_state_boundaries]


def genome_layout(
    config: CTRNNConfig, v_mask: np.ndarray, w_mask: np.ndarray, t_mask: np.ndarray
) -> tuple[list[Section], int]:
    """Where every genome value goes (the module docstring's order), and the genome size."""
    N, n_in = config.number_neurons, v_mask.shape[0]
    dt = config.delta_t  # M holds delta_t * [V; W; b]: the step saves a multiplication
    sections: list[Section] = []
    offset = 0
    for target, mask, row0, scale in (
        ("M", v_mask, 0, dt),
        ("M", w_mask, n_in, dt),
        ("T", t_mask, 0, 1.0),
    ):
        part, offset = block_sections(target, mask, row0, mask.shape[1], offset, scale)
        sections += part
    bias_row = _m_rows(config, n_in) - 1
    extra: list[tuple[str, tuple[Any, ...], int, float]] = []  # (target, index, size, scale)
    if config.use_bias:
        extra.append(("M", (bias_row, slice(None)), N, dt))
    if config.optimize_y0:
        extra.append(("y0", (), N, 1.0))
    bound_size = _bound_size(config)
    if bound_size:
        extra += [("low", (), bound_size, 1.0), ("high", (), bound_size, 1.0)]
    for target, index, size, scale in extra:
        part_slice = slice(offset, offset + size)
        sections.append(
            Section(target=target, index=index, part=part_slice, shape=(size,), scale=scale)
        )
        offset += size
    return sections, offset


class _Plan:
    """What a template derives from its fields once: prototype arrays and the fill sections."""

    __slots__ = (
        "N", "n_in", "n_out", "input_shape", "one_hot", "M", "T", "y0", "low", "high", "z",
        "own_y0", "own_bounds", "sections", "learned", "diagonal", "input_scale", "input_shift",
        "activation", "inplace", "sigma", "brain_class",
    )  # fmt: skip

    def __init__(self, t: CTRNNTemplate):
        c = t.config
        N, n_in, n_out = c.number_neurons, t.io.input_size, t.io.output_size
        self.N, self.n_in, self.n_out = N, n_in, n_out
        for name, shape in (("v_mask", (n_in, N)), ("w_mask", (N, N)), ("t_mask", (N, n_out))):
            if getattr(t, name).shape != shape:
                raise ValueError(f"{name} has shape {getattr(t, name).shape}, expected {shape}")
        self.one_hot = t.io.observation_kind == "discrete"
        self.input_shape = (n_in,) if self.one_hot else t.observation_shape
        rows = _m_rows(c, n_in)
        sections, size = genome_layout(c, t.v_mask, t.w_mask, t.t_mask)
        if size != t.genome_size:
            raise ValueError(f"genome_size is {t.genome_size}, but the layout needs {size}")
        self.sections = tuple(merge_sections(sections))
        self.own_y0 = c.optimize_y0
        self.own_bounds = _bound_size(c) > 0
        self.learned = tuple(
            (target, view, param)
            for target, view, kind, param in (
                ("M", (slice(0, n_in), slice(None)), c.v_mask, c.v_mask_param),
                ("M", (slice(n_in, n_in + N), slice(None)), c.w_mask, c.w_mask_param),
                ("T", (), c.t_mask, c.t_mask_param),
            )
            if kind == "learned"
        )
        negative_diagonal = c.set_principle_diagonal_elements_of_W_negative
        self.diagonal = readonly(np.arange(N)) if negative_diagonal else None
        self.input_scale = t.input_scale[:, None] if c.normalize_input else None
        self.input_shift = t.input_shift if c.normalize_input else None
        self.M = readonly(np.zeros((rows, N)))
        self.T = readonly(np.zeros((N, n_out)))
        self.y0 = readonly(np.zeros(N))
        fixed = c.optimize_state_boundaries == "fixed"
        self.low = readonly(np.full(N, c.clipping_range_min if fixed else 0.0))
        self.high = readonly(np.full(N, c.clipping_range_max if fixed else 0.0))
        z = np.zeros(rows)
        z[n_in + N :] = 1.0
        self.z = readonly(z)
        self.activation = ACTIVATIONS[c.neuron_activation]
        self.inplace = c.neuron_activation_inplace
        self.sigma = c.parameter_perturbations
        self.brain_class = NoisyCTRNNBrain if self.sigma else CTRNNBrain

    def pour(self, brain: Any, genome: np.ndarray) -> None:
        """Write a genome (G,) or genomes (P, G) into a brain's arrays and apply the options."""
        for section in self.sections:
            section.pour(brain, genome)
        for target, view, percentile in self.learned:
            keep_largest(getattr(brain, target)[(Ellipsis, *view)], percentile)
        if self.diagonal is not None:
            rows, cols = self.n_in + self.diagonal, self.diagonal
            brain.M[..., rows, cols] = -np.abs(brain.M[..., rows, cols])
        if self.own_bounds:
            np.abs(brain.high, out=brain.high)
            np.abs(brain.low, out=brain.low)
            np.negative(brain.low, out=brain.low)
        if self.input_scale is not None and self.input_shift is not None:  # set together
            inputs = brain.M[..., : self.n_in, :]
            brain.M[..., -1, :] += np.matmul(self.input_shift, inputs)
            inputs *= self.input_scale


class _PlannedTemplate(BrainTemplate[CTRNNConfig, CTRNNBrain]):
    """A template base with one derived slot, ``_plan``: rebuilt from the fields, never saved."""

    __slots__ = ("_plan",)
    _plan: _Plan


@BRAINS.register("CTRNN", config=CTRNNConfig)
@frozen_dataclass(eq=False)
class CTRNNTemplate(_PlannedTemplate):
    """Masks and observation scaling; the prototype brain and fill plan are derived from them."""

    config: CTRNNConfig
    io: SpaceAdapter
    genome_size: int
    observation_shape: tuple[int, ...]
    v_mask: np.ndarray
    w_mask: np.ndarray
    t_mask: np.ndarray
    input_scale: np.ndarray  # normalize_input: u' = u * scale + shift (empty when off)
    input_shift: np.ndarray

    def __post_init__(self) -> None:
        BrainTemplate.__post_init__(self)
        object.__setattr__(self, "_plan", _Plan(self))

    @classmethod
    def from_config(
        cls,
        config: CTRNNConfig,
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> CTRNNTemplate:
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        N = config.number_neurons
        v_mask = make_mask(config.v_mask, io.input_size, N, config.v_mask_param, rng)
        w_mask = make_mask(config.w_mask, N, N, config.w_mask_param, rng)
        t_mask = make_mask(config.t_mask, N, io.output_size, config.t_mask_param, rng)
        _, size = genome_layout(config, v_mask, w_mask, t_mask)
        scale, shift = input_scaling(
            config.normalize_input, config.normalize_input_target, observation_space
        )
        shape = tuple(observation_space.shape or ()) if io.observation_kind == "box" else ()
        return cls(
            config=config, io=io, genome_size=size, observation_shape=shape, v_mask=v_mask,
            w_mask=w_mask, t_mask=t_mask, input_scale=scale, input_shift=shift,
        )  # fmt: skip

    def new_brain(self) -> CTRNNBrain:
        plan = self._plan
        return plan.brain_class(self.io, plan)

    def fill(self, brain: CTRNNBrain, genome: np.ndarray) -> None:
        self._plan.pour(brain, genome)

    def batch_brain(self, genomes: np.ndarray) -> CTRNNBatchBrain:
        genomes = self.check_genomes(genomes)
        return CTRNNBatchBrain(self.io, self._plan, genomes)

    def gene_units(self) -> np.ndarray:
        """Neuron j owns its incoming V and W entries, b_j, y0_j and its own state bounds;
        output o owns its column of T; a global state bound is a unit of its own."""
        c, N = self.config, self.config.number_neurons
        owners = [np.nonzero(self.v_mask)[1], np.nonzero(self.w_mask)[1]]
        owners.append(N + np.nonzero(self.t_mask)[1])
        neurons = np.arange(N)
        owners += [neurons] * (int(c.use_bias) + int(c.optimize_y0))
        if c.optimize_state_boundaries == "per_neuron":
            owners += [neurons, neurons]
        elif c.optimize_state_boundaries == "global":
            owners.append(N + self.t_mask.shape[1] + np.arange(2))
        return units_in_gene_order(np.concatenate(owners))

    def jax_brain(self) -> JaxBrain:
        from neuro_evolution.brains.jax_brains import CTRNNJaxBrain  # jax: an optional extra

        plan = self._plan
        return CTRNNJaxBrain(
            self,
            self.batch_brain,
            neurons=plan.N,
            inputs=plan.n_in,
            activation=self.config.neuron_activation,
            inplace=plan.inplace,
            sigma=plan.sigma,
        )

    def export_step(self, brain: CTRNNBrain, graph: Any, inputs: str) -> str:
        return ctrnn_step(graph, self, brain, inputs)


# --- the export step: one step as a policy graph (export/graph.py's PolicyGraph), state included.
# It reads the filled brain's own arrays, so every mask type, the in-place variant,
# normalize_input folded into the weights, learned masks and bounds are exported as the brain
# computes with them.
def ctrnn_step(graph: Any, template: CTRNNTemplate, brain: CTRNNBrain, x: str) -> str:
    """y' = clip(base + [x | σ(y) | 1]·M, low, high), out = tanh(y'·T)."""
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
