"""An Elman network brain: the worked example of docs/writing-a-brain.md.

    h   ← tanh(W_in·x + W_rec·h + b)
    out = tanh(W_out·h)                  (mapped to the env's action space by the SpaceAdapter)

Genome layout, in this order, every matrix row-major: W_in (hidden × inputs),
W_rec (hidden × hidden), b (hidden), W_out (outputs × hidden).

The template owns every form of the brain: the numpy brain (``new_brain``/``fill``, every
handler), the batch brain (``batch_brain``, the vectorized handler), the JAX brain
(``jax_brain``, the jax handler) and the export step (``export_step``, ``export``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from neuro_evolution.brains import (
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    JaxBrain,
    register_brain,
)
from neuro_evolution.brains.activations import RowSelection
from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.core.schema import config_class, option
from neuro_evolution.support.frozen import frozen_dataclass


@config_class
class ElmanConfig(BrainConfig):
    """Options of the ``Elman`` brain: the config section ``{"type": "Elman", ...}``."""

    hidden_size: int = option(8, doc="hidden units of the Elman network", ge=1)


def layout(hidden: int, io: SpaceAdapter) -> dict[str, tuple[int, ...]]:
    """The genome layout: every weight array's name and shape, in genome order."""
    return {
        "w_in": (hidden, io.input_size),
        "w_rec": (hidden, hidden),
        "b": (hidden,),
        "w_out": (io.output_size, hidden),
    }


class ElmanBrain(Brain):
    """One Elman network: weights owned by the brain, and the hidden state h."""

    __slots__ = ("io", "w_in", "w_rec", "b", "w_out", "h")

    def __init__(self, io: SpaceAdapter, hidden_size: int):
        self.io = io
        self.w_in = np.zeros((hidden_size, io.input_size))
        self.w_rec = np.zeros((hidden_size, hidden_size))
        self.b = np.zeros(hidden_size)
        self.w_out = np.zeros((io.output_size, hidden_size))
        self.h = np.zeros(hidden_size)

    def reset(self, rng: np.random.Generator) -> None:
        """Zero the hidden state (this brain has no noise, so ``rng`` is unused)."""
        self.h[...] = 0.0

    def step(self, observation: Any) -> Any:
        x = self.io.encode(observation)
        self.h = np.tanh(self.w_in @ x + self.w_rec @ self.h + self.b)
        return self.io.decode(np.tanh(self.w_out @ self.h))

    def internal_state(self) -> dict[str, np.ndarray]:
        """The hidden state h, for ``replay --brain-state`` (optional: the default says the
        brain keeps no state)."""
        return {"hidden_state": self.h.copy()}


def matvec(matrices: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Row p: ``matrices[p] @ vectors[p]``, summed in the order of the single brain's ``@``."""
    return np.matmul(matrices, vectors[:, :, None])[:, :, 0]


class ElmanBatchBrain(BatchBrain):
    """P Elman networks stepped together; brain i computes exactly what an ElmanBrain does."""

    __slots__ = ("io", "rows", "h", "out")

    def __init__(self, io: SpaceAdapter, weights: dict[str, np.ndarray]):
        count, hidden = weights["b"].shape
        self.io = io
        self.rows = RowSelection(weights, count)  # the rows a step computes (``active``)
        self.h = np.zeros((count, hidden))
        self.out = np.zeros((count, io.output_size))

    def reset(self, rngs: list[np.random.Generator]) -> None:
        self.h[...] = 0.0
        self.rows.reset()

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        rows = self.rows.select(active)
        w = rows.params
        x = rows.gather(self.io.encode_batch(observations))
        h = np.tanh(matvec(w["w_in"], x) + matvec(w["w_rec"], rows.gather(self.h)) + w["b"])
        rows.store(self.h, h)  # an inactive row keeps its state
        rows.store(self.out, np.tanh(matvec(w["w_out"], h)))
        return self.io.decode_batch(self.out)


class ElmanJaxBrain(JaxBrain):
    """P Elman networks as pure JAX functions, the brain axis P first. jax is an optional extra,
    so ``jax.numpy`` is imported inside the methods (the module imports without it)."""

    PARAMS_AXIS = 0
    STATE_AXIS = 0

    def params(self, genomes: np.ndarray, dtype: Any) -> dict[str, Any]:
        import jax.numpy as jnp

        assert isinstance(self.template, ElmanTemplate)
        weights = self.template.stacked(genomes)
        return {name: jnp.asarray(array, dtype=dtype) for name, array in weights.items()}

    def initial_state(self, params: dict[str, Any]) -> Any:
        import jax.numpy as jnp

        return jnp.zeros_like(params["b"])

    def step(self, params: dict[str, Any], state: Any, inputs: Any, noise: Any = None) -> Any:
        import jax.numpy as jnp

        def matvec(matrices: Any, vectors: Any) -> Any:
            return jnp.einsum("pij,pj->pi", matrices, vectors, precision="highest")

        h = jnp.tanh(matvec(params["w_in"], inputs) + matvec(params["w_rec"], state) + params["b"])
        return h, jnp.tanh(matvec(params["w_out"], h))


@register_brain("Elman", config=ElmanConfig)
@frozen_dataclass(eq=False)
class ElmanTemplate(BrainTemplate):
    """Everything fixed per experiment: the config, the env's spaces and the genome size."""

    config: ElmanConfig
    io: SpaceAdapter
    genome_size: int

    @classmethod
    def from_config(
        cls,
        config: ElmanConfig,
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> ElmanTemplate:
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        shapes = layout(config.hidden_size, io).values()
        return cls(config=config, io=io, genome_size=sum(int(np.prod(s)) for s in shapes))

    def new_brain(self) -> ElmanBrain:
        return ElmanBrain(self.io, self.config.hidden_size)

    def fill(self, brain: ElmanBrain, genome: np.ndarray) -> None:
        offset = 0
        for array in (brain.w_in, brain.w_rec, brain.b, brain.w_out):
            array[...] = genome[offset : offset + array.size].reshape(array.shape)
            offset += array.size

    def stacked(self, genomes: np.ndarray) -> dict[str, np.ndarray]:
        """Every weight array of P genomes, stacked (P, ...): copies, never views."""
        genomes = self.check_genomes(genomes)
        weights, offset = {}, 0
        for name, shape in layout(self.config.hidden_size, self.io).items():
            size = int(np.prod(shape))
            part = genomes[:, offset : offset + size]
            weights[name] = part.reshape(len(genomes), *shape).copy()
            offset += size
        return weights

    def batch_brain(self, genomes: np.ndarray) -> ElmanBatchBrain:
        return ElmanBatchBrain(self.io, self.stacked(genomes))

    def jax_brain(self) -> ElmanJaxBrain:
        return ElmanJaxBrain(self)

    def export_step(self, brain: ElmanBrain, graph: Any, inputs: str) -> str:
        """h' = tanh(W_in·x + W_rec·h + b), out = tanh(W_out·h'), with h a state from zero
        (``graph`` is a ``neuro_evolution.export.PolicyGraph``)."""
        h = graph.state("hidden_state", np.zeros(self.config.hidden_size))
        total = graph.add(
            graph.add(
                graph.matmul(graph.constant("w_in", brain.w_in), inputs),
                graph.matmul(graph.constant("w_rec", brain.w_rec), h),
            ),
            graph.constant("b", brain.b),
        )
        new = graph.tanh(total)
        graph.next_state(h, new)
        return graph.tanh(graph.matmul(graph.constant("w_out", brain.w_out), new))
