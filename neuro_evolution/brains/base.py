"""The brain interface: a read-only BrainTemplate builds concrete Brains from genomes.

A brain type is three classes registered under one name with
:func:`register_brain`:

- a config class (a :func:`~neuro_evolution.core.schema.config_class` subclassing
  :class:`BrainConfig`) holding the options of the ``brain`` config section;
- a template (a ``frozen_dataclass`` subclassing :class:`BrainTemplate`), made once per experiment
  by ``from_config``: it owns the genome layout, masks and a prototype brain, and every array it
  holds is read-only (also after it is pickled to a worker);
- a :class:`Brain`, the mutable object an episode runner steps.

A template owns every form of its brain, each made by one method that one part of the system
calls, so no table elsewhere names a brain type:

- ``build``/``fill``: the numpy brain (every handler's episode loop, replay, the start-up checks);
- ``batch_brain``: the :class:`BatchBrain` of P brains in lockstep (the vectorized handler, with
  Gymnasium or gymnax vector envs);
- ``jax_brain``: the :class:`JaxBrain` (the jax handler), whose JAX module the method imports
  when it is called (jax is an optional extra), a built-in type's as a user's; a JAX module never
  imports a template module: the template passes it what the JAX brain reads (sizes, options, the
  function that pours its host arrays);
- ``export_step``: the brain's step as a policy graph (``python -m neuro_evolution.export``).

A type that lacks a form keeps the base method, which refuses in one line naming the type and
the method to write (:meth:`BrainTemplate.missing_form`); a composed template asks its parts.

``to_state``/``from_state`` are implemented here once for every template: each dataclass field
becomes plain arrays and scalars (nested dataclasses are flattened with a dotted prefix, the config
becomes JSON), so a run directory rebuilds the same template without pickle.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from abc import abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.core.registry import Registry
from neuro_evolution.core.schema import ConfigBase, ConfigError, register_polymorphic, to_dict
from neuro_evolution.support.frozen import FrozenABCMeta, ReadOnlyRecord

StateDict = dict[str, "np.ndarray | int | float | str | bool"]
TemplateT = TypeVar("TemplateT", bound="BrainTemplate")
Params = dict[str, Any]  # a JAX brain's parameters: device arrays (lists, dicts of them)
State = Any  # a JAX brain's state: a device array or a tuple of them

# method -> (what the form is called, where to read how to write it, what else to do)
FORMS: dict[str, tuple[str, str, str]] = {
    "batch_brain": ("batch form", "docs/writing-a-brain.md", "to run it in lockstep"),
    "jax_brain": ("JAX form", "docs/writing-a-brain.md", "or use another evaluation handler"),
    "export_step": ("export step", "docs/export.md", "to export it"),
}


class BrainConfig(ConfigBase):
    """Base of every brain type's config section; the section's ``type`` picks the class."""

    __slots__ = ()

    def type_name(self) -> str:
        """The registered name of this config's brain type."""
        return brain_type_name(type(self))


class Brain(metaclass=FrozenABCMeta):
    """A concrete network that an episode runner steps. Mutable: it holds the network state."""

    __slots__ = ()

    @abstractmethod
    def reset(self, rng: np.random.Generator) -> None:
        """Reset the state at the start of an episode; ``rng`` drives any noise of the episode."""

    @abstractmethod
    def step(self, observation: Any) -> Any:
        """Advance one step and return an action of the env's action space."""

    def internal_state(self) -> dict[str, np.ndarray]:
        """What the brain carries from one step to the next, as named copies of its arrays
        (``replay --brain-state`` records it after every step); empty for a brain without
        state, which is what this default says."""
        return {}


class BatchBrain(metaclass=FrozenABCMeta):
    """P brains of one template stepped in lockstep with one numpy call per layer."""

    __slots__ = ()

    @abstractmethod
    def reset(self, rngs: list[np.random.Generator]) -> None:
        """Reset all P brains; brain i uses ``rngs[i]`` exactly as a single brain would."""

    @abstractmethod
    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        """Advance the brains (only ``active`` ones if given) and return P stacked actions."""


def _lanes(mask: Any, array: Any, axis: int) -> Any:
    """``mask`` (L,) shaped to broadcast along ``array``'s brain axis ``axis``."""
    shape = [1] * array.ndim
    shape[axis] = mask.shape[0]
    return mask.reshape(shape)


class JaxBrain(metaclass=FrozenABCMeta):
    """The JAX form of P brains of one template: pure, traceable functions (``jit``,
    ``lax.while_loop``) over P stacked parameter sets, which the jax handler runs.

    - ``params(genomes, dtype)``: host numpy (P, G) -> device arrays (the brain axis P at
      ``PARAMS_AXIS`` of every array);
    - ``initial_state(params)``: the state of every brain after ``reset`` (P at ``STATE_AXIS``);
    - ``step(params, state, inputs, noise)`` -> (state, outputs): ``inputs`` are the encoded
      observations (P, input_size) in ``params``' dtype, ``outputs`` the raw network outputs
      (P, output_size) before the action mapping; ``noise`` is (P, ``noise_size``) standard
      normal draws (None for a brain without noise).

    :meth:`take` and :meth:`choose_state` work along the brain axes, so the episode loop can hand
    a lane another brain and restart its state. This class imports jax only inside its methods,
    so a brain module can define its JAX form without the jax extra installed.
    """

    PARAMS_AXIS = -1
    STATE_AXIS = -1

    def __init__(self, template: BrainTemplate):
        self.template = template

    def take(self, params: Params, index: Any) -> Params:
        """The params of brains ``index`` (L,), in that order."""
        import jax

        return jax.tree_util.tree_map(
            lambda a: jax.numpy.take(a, index, axis=self.PARAMS_AXIS), params
        )

    def choose_state(self, mask: Any, fresh: State, state: State) -> State:
        """``fresh`` where ``mask`` (L,) is true, ``state`` elsewhere (states without entries,
        such as a stateless brain's (0, L), stay as they are)."""
        import jax

        def pick(new: Any, old: Any) -> Any:
            if old.size == 0:
                return old
            return jax.numpy.where(_lanes(mask, old, self.STATE_AXIS), new, old)

        return jax.tree_util.tree_map(pick, fresh, state)

    @abstractmethod
    def params(self, genomes: np.ndarray, dtype: Any) -> Params:
        """The device parameters of P genomes (see the class docstring)."""

    @abstractmethod
    def initial_state(self, params: Params) -> State:
        """Every brain's state after ``reset``."""

    @abstractmethod
    def step(
        self, params: Params, state: State, inputs: Any, noise: Any | None = None
    ) -> tuple[State, Any]:
        """One step of every brain: (new state, raw outputs (P, output_size))."""

    @property
    def noise_size(self) -> int:
        """Standard normal draws per brain and step (0: the brain draws no noise)."""
        return 0


ConfigT = TypeVar("ConfigT", bound=BrainConfig)
BrainT = TypeVar("BrainT", bound=Brain)


def units_in_gene_order(owners: np.ndarray) -> np.ndarray:
    """``owners`` (one unit label per gene) relabelled 0, 1, ... in the order of each unit's
    first gene, the numbering :meth:`BrainTemplate.gene_units` returns."""
    _, first, inverse = np.unique(owners, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.ravel()]


class BrainTemplate(ReadOnlyRecord, Generic[ConfigT, BrainT]):
    """Read-only, per-experiment factory of brains. Subclasses are ``frozen_dataclass``es.

    A brain type's template takes its own config and fills its own brains
    (``BrainTemplate[CTRNNConfig, CTRNNBrain]``); code for any brain type uses ``BrainTemplate``.
    """

    __slots__ = ()
    config: ConfigT
    io: SpaceAdapter
    genome_size: int
    #: why this type can only be the first part of a composed brain ("" if it can be any part)
    first_part_only: ClassVar[str] = ""

    # --- what a brain type implements -------------------------------------------------------
    @classmethod
    @abstractmethod
    def from_config(
        cls: type[TemplateT],
        config: Any,  # the brain type's own section (a subclass of BrainConfig)
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> TemplateT:
        """Make the template for an env's spaces; ``rng`` draws random masks, if any."""

    @abstractmethod
    def new_brain(self) -> BrainT:
        """A fresh brain with this template's structure and undefined weights (for ``fill``)."""

    @abstractmethod
    def fill(self, brain: BrainT, genome: np.ndarray) -> None:
        """Pour a genome's values into ``brain`` in place (copying, never keeping a view)."""

    def build(self, genome: np.ndarray) -> BrainT:
        """A new brain holding the genome's weights; later changes to ``genome`` do not reach it."""
        genome = self.check_genome(genome)
        brain = self.new_brain()
        self.fill(brain, genome)
        return brain

    # --- the other forms of the brain: optional, each refused in one line where it is missing
    def batch_brain(self, genomes: np.ndarray) -> BatchBrain:
        """P brains in lockstep for a (P, genome_size) array, brain i acting bit for bit as
        ``build(genomes[i])`` (the vectorized handler; the built-in JAX forms take their
        parameters from it); never a view of ``genomes``."""
        raise self._refusal("batch_brain")

    def jax_brain(self) -> JaxBrain:
        """The JAX form of this template's brains (the jax handler); it imports its JAX module
        here, when called, since jax is an optional extra."""
        raise self._refusal("jax_brain")

    def export_step(self, brain: BrainT, graph: Any, inputs: str) -> str:
        """Add one step of ``brain`` (filled by this template) to ``graph``, a
        :class:`~neuro_evolution.export.graph.PolicyGraph`: ``inputs`` names the encoded
        float64 input vector; the result names the output vector that the action decoding
        maps (``python -m neuro_evolution.export``)."""
        raise self._refusal("export_step")

    def missing_form(self, method: str) -> ConfigError | None:
        """The one-line refusal for a form this type lacks (``method`` one of :data:`FORMS`),
        or None when its template class writes the method."""
        if getattr(type(self), method) is not getattr(BrainTemplate, method):
            return None
        return self._refusal(method)

    def _refusal(self, method: str) -> ConfigError:
        what, page, instead = FORMS[method]
        return ConfigError(
            "brain.type",
            f"brain type {self.config.type_name()!r} has no {what}; write "
            f"{type(self).__name__}.{method}() (see {page}) {instead}",
        )

    def gene_units(self) -> np.ndarray | None:
        """The genome's layout by unit: a (genome_size,) int array whose entry g numbers the
        neuron (or output unit) that gene g belongs to, e.g. its incoming weights and its bias;
        units are numbered 0, 1, ... in the order of their first gene. None (the default): this
        type does not say, and an optimizer that recombines by neuron refuses it."""
        return None

    @classmethod
    def feature_size(cls, config: Any, observation_space: gym.Space) -> int | None:
        """The output size this type picks for itself as an intermediate part of a composed
        brain (a conv front end: its flattened feature map), or None: the composed config's
        ``sizes`` must give it (the default)."""
        return None

    def start_up_warnings(self, observation: str) -> list[str]:
        """What is legal for this template but most likely not meant, one line each, for a run
        on the observation of env ``observation`` (printed once at start-up); none by default."""
        return []

    @property
    def supports_batch(self) -> bool:
        """Whether this type has a batch form (:meth:`batch_brain`)."""
        return self.missing_form("batch_brain") is None

    # --- shared machinery -------------------------------------------------------------------
    def check_genome(self, genome: np.ndarray) -> np.ndarray:
        """``genome`` as a float64 vector of length ``genome_size``, or a clear ValueError."""
        genome = np.asarray(genome, dtype=np.float64)
        if genome.shape != (self.genome_size,):
            raise ValueError(
                f"genome has shape {genome.shape}, but the {self.config.type_name()} template "
                f"needs ({self.genome_size},)"
            )
        return genome

    def check_genomes(self, genomes: np.ndarray) -> np.ndarray:
        """``genomes`` as a float64 (P, genome_size) array, or a clear ValueError."""
        genomes = np.asarray(genomes, dtype=np.float64)
        if genomes.ndim != 2 or genomes.shape[1] != self.genome_size:
            raise ValueError(
                f"genomes have shape {genomes.shape}, but the {self.config.type_name()} template "
                f"needs (P, {self.genome_size})"
            )
        return genomes

    def to_state(self) -> StateDict:
        """Plain arrays and scalars that :meth:`from_state` turns back into an equal template."""
        state: StateDict = {"brain_type": self.config.type_name()}
        _flatten(self, "", state)
        return state

    @staticmethod
    def from_state(state: typing.Mapping[str, Any]) -> BrainTemplate:
        """Rebuild a template saved with :meth:`to_state` (no masks are regenerated)."""
        _, template_cls = get_brain_type(str(np.asarray(state["brain_type"])))
        return template_cls.restore(state)

    @classmethod
    def restore(cls: type[TemplateT], state: typing.Mapping[str, Any]) -> TemplateT:
        """This type's half of :meth:`from_state`: every field from its flattened keys (a type
        whose fields are not plain arrays, such as a composed template, overrides it together
        with :meth:`to_state`)."""
        return _unflatten(cls, "", state)


def _flatten(obj: Any, prefix: str, state: StateDict) -> None:
    for field in dataclasses.fields(obj):
        key = prefix + field.name
        value = getattr(obj, field.name)
        if isinstance(value, BrainConfig):
            state[key] = json.dumps(to_dict(value), sort_keys=True)
        elif dataclasses.is_dataclass(value):
            _flatten(value, key + ".", state)
        elif isinstance(value, tuple):
            state[key] = np.asarray(value, dtype=np.int64)
        else:
            state[key] = value


def _unflatten(cls: type, prefix: str, state: typing.Mapping[str, Any]) -> Any:
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        key = prefix + field.name
        hint = hints[field.name]
        if isinstance(hint, type) and issubclass(hint, BrainConfig):
            values[field.name] = parse_brain_config(json.loads(str(np.asarray(state[key]))), "")
        elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
            values[field.name] = _unflatten(hint, key + ".", state)
        elif key not in state:
            raise KeyError(f"template state lacks {key!r}")
        elif hint in (int, float, bool, str):
            values[field.name] = hint(np.asarray(state[key]).item())
        elif typing.get_origin(hint) is tuple:
            values[field.name] = tuple(int(v) for v in np.asarray(state[key]).ravel())
        elif typing.get_origin(hint) is typing.Literal:
            values[field.name] = str(np.asarray(state[key]))
        else:
            values[field.name] = np.array(state[key])
    return cls(**values)


def make_template(
    config: BrainConfig,
    observation_space: gym.Space,
    action_space: gym.Space,
    rng: np.random.Generator,
) -> BrainTemplate:
    """The template of ``config``'s brain type for an env's spaces."""
    _, template_cls = get_brain_type(config.type_name())
    return template_cls.from_config(config, observation_space, action_space, rng)


__all__ = ["BatchBrain", "Brain", "BrainConfig", "BrainTemplate", "JaxBrain", "make_template"]


# The brain types by name: CTRNN, FFNN, LSTM, conv, egocentric and composed built in, a user's
# added with register_brain. A built-in type's module is imported when its name is first looked
# up, so listing the types imports none of them (see ``docs/writing-a-brain.md``).
BRAINS: Registry[BrainTemplate] = Registry(
    "brain",
    {
        "CTRNN": "neuro_evolution.brains.ctrnn",
        "FFNN": "neuro_evolution.brains.ffnn",
        "LSTM": "neuro_evolution.brains.lstm",
        "composed": "neuro_evolution.brains.composed",
        "conv": "neuro_evolution.brains.conv",
        "egocentric": "neuro_evolution.brains.egocentric",
    },
    what="brain type",
    known="types",
)
register_brain = BRAINS.register
brain_types = BRAINS.names
get_brain_type = BRAINS.get
brain_type_name = BRAINS.name_of
parse_brain_config = BRAINS.parse_config
register_polymorphic(BrainConfig, parse_brain_config)  # a ``brain`` section picks its class
