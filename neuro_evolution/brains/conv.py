"""Convolutional front end: conv layers over a channel-last image, then features or actions.

The observation is an image (H, W, C): a Box of shape (H, W, C) as it is (e.g. RGB, or frames
stacked along C), (H, W) as grayscale (C = 1); a vector Box (n,) or a one-hot Discrete(n) is a
1 x n single-channel image (``train`` warns then: k x k kernels, k > 1, see only padding above
and below that one row; FFNN or CTRNN suit vectors). Every value is multiplied by
``input_scale`` first. Layer l computes

    x ← act(conv(x, K_l, stride_l, padding_l) + b_l)          (zero padding on every side)
    x ← pool(x)                                               (max or average, when asked)

with K_l of shape (C_in, kernel, kernel, C_out) (cross-correlation, as every deep-learning
library's "conv"). The final map is flattened in (H, W, C) row-major order into F features. As
the intermediate part of a composed brain whose next part takes exactly F inputs, the features
are the output, raw. Otherwise (the brain alone, the last part, or another output size) a
dense layer maps them to the outputs: out = tanh(features·D + d), mapped to the action space.

Genome layout, in this order: for every layer K_l (row-major over (C_in, kernel, kernel, C_out))
then, with ``use_bias``, b_l (C_out); then, when there is a dense layer, D (F × outputs,
row-major) then d (outputs) with ``use_bias``. The numpy kernels are in ``conv_ops.py`` (one
brain is a batch of one); the JAX path in ``jax_conv.py``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, NamedTuple

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.activations import RowSelection
from neuro_evolution.brains.base import (
    BRAINS,
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    JaxBrain,
)
from neuro_evolution.brains.conv_ops import activate, convolve, dense_tanh, output_length, pool
from neuro_evolution.brains.spaces import FeatureSpace, SpaceAdapter
from neuro_evolution.core.schema import ConfigBase, ConfigError, config_class, option
from neuro_evolution.support.errors import UnsupportedSpaceError
from neuro_evolution.support.frozen import frozen_dataclass


@config_class
class ConvLayerConfig(ConfigBase):
    """One layer of the conv front end: convolution, activation, then optional pooling."""

    channels: int = option(8, doc="output channels (filters) of the layer", ge=1)
    kernel: int = option(3, doc="side of the square kernel", ge=1)
    stride: int = option(1, doc="step of the kernel in both directions", ge=1)
    padding: int = option(0, doc="zeros added on every side of the layer's input", ge=0)
    activation: Literal["relu", "tanh", "none"] = option("relu", doc="after the convolution")
    pool: Literal["none", "max", "average"] = option("none", doc="pooling after the activation")
    pool_size: int = option(2, doc="side of the square pooling window", ge=1)
    pool_stride: int = option(0, doc="step of the pooling window (0: pool_size)", ge=0)


@config_class
class ConvConfig(BrainConfig):
    """Options of the ``conv`` brain: a convolutional front end (see ``brains/conv.py``)."""

    layers: tuple[ConvLayerConfig, ...] = option(
        (ConvLayerConfig(channels=4, kernel=3, stride=2, padding=1),),
        doc="the conv layers in order, each {channels, kernel, stride, padding, activation "
        "(relu/tanh/none), pool (none/max/average), pool_size, pool_stride}",
    )
    use_bias: bool = option(True, doc="a bias per output channel (and per dense output)")
    input_scale: float = option(
        1.0, doc="every observation value is multiplied by it first (1/255 for 8-bit frames)", gt=0
    )

    def validate(self, path: str) -> None:
        if not self.layers:
            raise ConfigError(f"{path}.layers", "must list at least one conv layer")


class Stage(NamedTuple):
    """One layer's geometry: its kernel's shape and genome slices, and what follows the conv."""

    kernel_shape: tuple[int, int, int, int]  # (C_in, kernel, kernel, C_out)
    kernel_part: slice
    bias_part: slice
    stride: int
    padding: int
    activation: str
    pool: str
    pool_size: int
    pool_stride: int


def image_shape(space: gym.Space) -> tuple[int, int, int]:
    """The (H, W, C) image an observation of ``space`` is taken as (module docstring)."""
    if isinstance(space, gym.spaces.Discrete):
        return (1, int(space.n), 1)
    shape = tuple(int(n) for n in (space.shape or ()))
    if len(shape) > 3:
        raise UnsupportedSpaceError(
            f"the conv brain takes images (H, W, C), got an observation of shape {shape}; "
            "merge the extra axes into C with a wrapper"
        )
    return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1), 3: shape}[len(shape)]  # type: ignore[return-value]


def stages(config: ConvConfig, image: tuple[int, ...]) -> tuple[list[Stage], int, int]:
    """The layers' geometry, the feature count F and the genome offset where the conv ends;
    a ConfigError naming the layer's field when a kernel or pooling window does not fit."""
    height, width, channels = image
    found, offset = [], 0
    for number, layer in enumerate(config.layers):
        where = f"brain.layers[{number}]"
        rows = output_length(height, layer.kernel, layer.stride, layer.padding)
        cols = output_length(width, layer.kernel, layer.stride, layer.padding)
        if rows < 1 or cols < 1:
            raise ConfigError(
                f"{where}.kernel",
                f"{layer.kernel} does not fit the {height}x{width} input of layer {number} "
                f"(padding {layer.padding}); use a smaller kernel or more padding",
            )
        shape = (channels, layer.kernel, layer.kernel, layer.channels)
        kernel_part = slice(offset, offset + int(np.prod(shape)))
        bias_part = slice(kernel_part.stop, kernel_part.stop + layer.channels * config.use_bias)
        offset = bias_part.stop
        height, width, channels = rows, cols, layer.channels
        pool_stride = layer.pool_stride or layer.pool_size
        if layer.pool != "none":
            rows = output_length(height, layer.pool_size, pool_stride)
            cols = output_length(width, layer.pool_size, pool_stride)
            if rows < 1 or cols < 1:
                raise ConfigError(
                    f"{where}.pool_size",
                    f"{layer.pool_size} does not fit the {height}x{width} map of layer {number}; "
                    "use a smaller pool_size or pool none",
                )
            height, width = rows, cols
        found.append(
            Stage(shape, kernel_part, bias_part, layer.stride, layer.padding, layer.activation,
                  layer.pool, layer.pool_size, pool_stride)
        )  # fmt: skip
    return found, height * width * channels, offset


class Plan(NamedTuple):
    """What a brain needs to step, derived once from its template."""

    stages: list[Stage]
    scale: float
    head: bool


def forward(plan: Plan, params: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The raw outputs (P, outputs) of P images (P, H, W, C) with P weight sets ``params``."""
    if plan.scale != 1.0:
        x = x * plan.scale
    for number, stage in enumerate(plan.stages):
        x = convolve(x, params[f"K{number}"], params.get(f"b{number}"), stage.stride, stage.padding)
        activate(x, stage.activation)
        if stage.pool != "none":
            x = pool(x, stage.pool, stage.pool_size, stage.pool_stride)
    x = x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
    if plan.head:
        x = dense_tanh(x, params["D"], params.get("d"))
    return x


def parameter_arrays(template: ConvTemplate, genomes: np.ndarray) -> dict[str, np.ndarray]:
    """Owned, contiguous (P, ...) copies of every weight array of (P, G) genomes."""
    count = genomes.shape[0]
    arrays = {}
    for name, (part, shape) in template.parts().items():
        arrays[name] = genomes[:, part].reshape((count, *shape)).copy()
    return arrays


class ConvBrain(Brain):
    """One conv front end: a batch of one (its arrays have a leading axis of length 1)."""

    __slots__ = ("template", "plan", "params")

    def __init__(self, template: ConvTemplate):
        self.template = template
        self.plan = template.step_plan()
        self.params = parameter_arrays(template, np.zeros((1, template.genome_size)))

    def reset(self, rng: np.random.Generator) -> None:
        """Stateless: nothing to reset."""

    def step(self, observation: Any) -> Any:
        template = self.template
        x = template.io.encode(observation).reshape((1, *template.image_shape))
        return template.io.decode(forward(self.plan, self.params, x)[0])


class ConvBatchBrain(BatchBrain):
    """P conv front ends; row i computes exactly (bit for bit) what a single brain i does."""

    __slots__ = ("template", "plan", "selection", "o")

    def __init__(self, template: ConvTemplate, genomes: np.ndarray):
        self.template = template
        self.plan = template.step_plan()
        self.selection = RowSelection(parameter_arrays(template, genomes), genomes.shape[0])
        self.o = np.zeros((genomes.shape[0], template.io.output_size))

    def reset(self, rngs: list[np.random.Generator]) -> None:
        if len(rngs) != self.o.shape[0]:
            raise ValueError(f"reset got {len(rngs)} generators for {self.o.shape[0]} brains")
        self.selection.reset()

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        template = self.template
        rows = self.selection.select(active)
        x = rows.gather(template.io.encode_batch(observations))
        images = x.reshape((x.shape[0], *template.image_shape))
        out = forward(self.plan, dict(rows.params), images)
        rows.store(self.o, out)
        return template.io.decode_batch(self.o)


@BRAINS.register("conv", config=ConvConfig)
@frozen_dataclass(eq=False)
class ConvTemplate(BrainTemplate[ConvConfig, ConvBrain]):
    """The image shape and whether a dense layer maps the features to the outputs."""

    config: ConvConfig
    io: SpaceAdapter
    genome_size: int
    image_shape: tuple[int, ...]  # (H, W, C)
    head: bool  # a dense tanh layer from the features to the outputs
    first_part_only: ClassVar[str] = "takes the observation image"

    def __post_init__(self) -> None:
        BrainTemplate.__post_init__(self)
        _, features, offset = self.plan()
        dense = (features + self.config.use_bias) * self.io.output_size if self.head else 0
        if offset + dense != self.genome_size:
            raise ValueError(
                f"genome_size is {self.genome_size}, the layout needs {offset + dense}"
            )

    @classmethod
    def feature_size(cls, config: Any, observation_space: gym.Space) -> int | None:
        """The flattened feature map: what the conv hands raw to the next part."""
        return stages(config, image_shape(observation_space))[1]

    @classmethod
    def from_config(
        cls,
        config: ConvConfig,
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> ConvTemplate:
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        image = image_shape(observation_space)
        _, features, offset = stages(config, image)
        head = not (isinstance(action_space, FeatureSpace) and io.output_size == features)
        dense = (features + config.use_bias) * io.output_size if head else 0
        return cls(config=config, io=io, genome_size=offset + dense, image_shape=image, head=head)

    def plan(self) -> tuple[list[Stage], int, int]:
        """The layers' geometry, the feature count and where the conv's genome part ends."""
        return stages(self.config, self.image_shape)

    def step_plan(self) -> Plan:
        """The layers, input scale and dense flag a brain steps with."""
        return Plan(self.plan()[0], self.config.input_scale, self.head)

    def parts(self) -> dict[str, tuple[slice, tuple[int, ...]]]:
        """Every weight array's genome slice and shape: K0, b0, K1, ..., then D, d."""
        layers, features, offset = self.plan()
        found: dict[str, tuple[slice, tuple[int, ...]]] = {}
        for number, stage in enumerate(layers):
            found[f"K{number}"] = (stage.kernel_part, stage.kernel_shape)
            if self.config.use_bias:
                found[f"b{number}"] = (stage.bias_part, (stage.kernel_shape[-1],))
        if self.head:
            outputs = self.io.output_size
            weights = slice(offset, offset + features * outputs)
            found["D"] = (weights, (features, outputs))
            if self.config.use_bias:
                found["d"] = (slice(weights.stop, weights.stop + outputs), (outputs,))
        return found

    def start_up_warnings(self, observation: str) -> list[str]:
        """k x k kernels (k > 1) over a vector observation (a one-row image): all rows but the
        middle one of every kernel see only padding."""
        kernel = self.config.layers[0].kernel if self.config.layers else 1
        if self.image_shape[0] != 1 or kernel <= 1:
            return []
        return [
            f"brain: a conv front end on the observation of {observation} (a 1 x "
            f"{self.image_shape[1]} image: a vector) gives its {kernel} x {kernel} kernels only "
            "padding above and below it; conv is for (H, W, C) images, FFNN or CTRNN for vectors"
        ]

    def new_brain(self) -> ConvBrain:
        return ConvBrain(self)

    def fill(self, brain: ConvBrain, genome: np.ndarray) -> None:
        for name, (part, shape) in self.parts().items():
            brain.params[name][0] = genome[part].reshape(shape)

    def batch_brain(self, genomes: np.ndarray) -> ConvBatchBrain:
        return ConvBatchBrain(self, self.check_genomes(genomes))

    def jax_brain(self) -> JaxBrain:
        from neuro_evolution.brains.jax_conv import ConvJaxBrain  # jax: an optional extra

        return ConvJaxBrain(self, self.weight_arrays, self.step_plan(), self.image_shape)

    def weight_arrays(self, genomes: np.ndarray) -> dict[str, np.ndarray]:
        """Owned (P, ...) copies of every weight array of (P, G) genomes, by name (K<i>, b<i>,
        D, d), as the batch brain holds them."""
        return parameter_arrays(self, self.check_genomes(genomes))

    def export_step(self, brain: ConvBrain, graph: Any, inputs: str) -> str:
        return conv_step(graph, self, brain, inputs)


# --- the export step: one step as a policy graph (export/graph.py's PolicyGraph) ---------------
# A convolution is exported as a gather of image patches (indices computed here, zero padding
# pointing at one appended zero) and a matrix product, and pooling as strided slices combined
# with max or add: the same arithmetic as ``conv_ops.py``, in float64 throughout (onnxruntime
# has no float64 ``Conv`` or ``AveragePool``).
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


def _pool(graph: Any, x: str, shape: tuple[int, int, int], stage: Stage) -> str:
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


def conv_step(graph: Any, template: ConvTemplate, brain: ConvBrain, x: str) -> str:
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
