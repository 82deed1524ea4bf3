"""Composed brains: registered brain types chained as parts, e.g. a conv front end into a CTRNN.

``{"type": "composed", "parts": [{"type": "conv", ...}, {"type": "CTRNN", ...}], "sizes": []}``:
part 0 sees the observation; part i+1 sees what part i outputs; the last part's outputs are the
action. An intermediate part i outputs ``sizes[i]`` unbounded values (a
:class:`~neuro_evolution.brains.spaces.FeatureSpace`), handed raw to the next part (no action
scaling: a CTRNN or FFNN part's tanh outputs, a conv part's features). A size of 0, or no
``sizes`` at all, lets a type that can decide do so (``BrainTemplate.feature_size``: a conv
part's flattened feature map); the others need a size. Any registered type can be a part,
a user's own included; a type with ``first_part_only`` (conv: it takes the observation image)
only as the first.

The template is made of the parts' templates (each built for its input and output space, masks
drawn from the one ``rng`` in part order). Genome layout: the parts' genomes one after the other,
part i at ``offsets[i]:offsets[i + 1]``, each in its own type's layout. ``fill`` hands each part
a copy of its slice. A composed brain resets every part with the episode's one generator (so a
noisy part draws from it in part order, single and batch alike), and its ``internal_state`` is
every part's, named ``part<i>.<name>``. The batch brain chains the parts' batch brains (brain i
of a batch stays bit-identical to a single brain when every part's does); the state is saved as
``part<i>.<key>`` entries of every part's own state, so no pickle is involved.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.base import (
    BRAINS,
    BatchBrain,
    Brain,
    BrainConfig,
    BrainTemplate,
    JaxBrain,
    StateDict,
    _flatten,
    _unflatten,
    get_brain_type,
    make_template,
    parse_brain_config,
)
from neuro_evolution.brains.conv import ConvConfig
from neuro_evolution.brains.ctrnn import CTRNNConfig
from neuro_evolution.brains.spaces import FeatureSpace, SpaceAdapter, one_line
from neuro_evolution.core.schema import ConfigError, config_class, join, option, to_dict
from neuro_evolution.support.errors import UnsupportedSpaceError
from neuro_evolution.support.frozen import frozen_dataclass


def _decides_size(template_cls: type[BrainTemplate]) -> bool:
    return template_cls.feature_size.__func__ is not BrainTemplate.feature_size.__func__  # type: ignore[attr-defined]


@config_class
class ComposedConfig(BrainConfig):
    """Options of the ``composed`` brain: brain types chained as parts (see brains/composed.py)."""

    parts: tuple[BrainConfig, ...] = option(
        (ConvConfig(), CTRNNConfig()),
        doc='the parts in order, each a brain section ({"type": ..., options}); the first '
        "sees the observation, each next one the previous one's raw outputs, the last's "
        "outputs become the action",
    )
    sizes: tuple[int, ...] = option(
        (),
        doc="output size of every part but the last; 0 (or no list) lets a part that can "
        "decide do so (conv: its flattened feature map)",
        ge=0,
    )

    def validate(self, path: str) -> None:
        if not self.parts:
            raise ConfigError(
                join(path, "parts"),
                'must list at least one brain, e.g. [{"type": "conv"}, {"type": "CTRNN"}]',
            )
        if self.sizes and len(self.sizes) != len(self.parts) - 1:
            raise ConfigError(
                join(path, "sizes"),
                f"needs one size per part but the last ({len(self.parts) - 1}), "
                f"got {len(self.sizes)}",
            )
        for number, part in enumerate(self.parts):
            name = part.type_name()
            _, template_cls = get_brain_type(name)
            if number and template_cls.first_part_only:
                raise ConfigError(
                    f"{path}.parts[{number}].type",
                    f"a {name} part {template_cls.first_part_only}, so it can only be the "
                    "first part",
                )
            last = number == len(self.parts) - 1
            if not last and self.size(number) == 0 and not _decides_size(template_cls):
                raise ConfigError(
                    join(path, "sizes"),
                    f"part {number} ({name}) needs an output size: give sizes one value per "
                    f"part but the last (0 where a part decides, e.g. for conv)",
                )

    def size(self, number: int) -> int:
        """The configured output size of part ``number`` (0: the part decides)."""
        return self.sizes[number] if self.sizes else 0


@contextmanager
def _part_errors(number: int, space: gym.Space) -> Iterator[None]:
    """Name part ``number`` in a part's config error, and turn a later part's refusal of its
    input space into a config error on that part."""
    try:
        yield
    except ConfigError as error:
        path = error.path
        rest = path[len("brain") :] if path == "brain" or path.startswith("brain.") else path
        raise ConfigError(f"brain.parts[{number}]{rest}", error.message) from None
    except UnsupportedSpaceError as error:
        if number == 0:
            raise
        raise ConfigError(
            f"brain.parts[{number}].type",
            f"cannot take the outputs of part {number - 1} ({one_line(space)}): {error}",
        ) from None


class ComposedBrain(Brain):
    """The parts' brains, stepped in order."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[Brain]):
        self.parts = parts

    def reset(self, rng: np.random.Generator) -> None:
        for part in self.parts:
            part.reset(rng)

    def step(self, observation: Any) -> Any:
        for part in self.parts:
            observation = part.step(observation)
        return observation

    def internal_state(self) -> dict[str, np.ndarray]:
        """Every part's state, named ``part<i>.<name>``."""
        return {
            f"part{number}.{name}": value
            for number, part in enumerate(self.parts)
            for name, value in part.internal_state().items()
        }


class ComposedBatchBrain(BatchBrain):
    """The parts' batch brains, stepped in order with the same ``active`` rows."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[BatchBrain]):
        self.parts = parts

    def reset(self, rngs: list[np.random.Generator]) -> None:
        for part in self.parts:
            part.reset(rngs)

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        for part in self.parts:
            observations = part.step(observations, active)
        return observations


@BRAINS.register("composed", config=ComposedConfig)
@frozen_dataclass(eq=False)
class ComposedTemplate(BrainTemplate[ComposedConfig, ComposedBrain]):
    """The parts' templates and where each part's genome slice starts and ends."""

    config: ComposedConfig
    io: SpaceAdapter
    genome_size: int
    parts: tuple[BrainTemplate, ...]
    offsets: tuple[int, ...]  # part i's genome is offsets[i]:offsets[i + 1]

    def __post_init__(self) -> None:
        BrainTemplate.__post_init__(self)
        sizes = [part.genome_size for part in self.parts]
        if len(self.parts) != len(self.config.parts) or list(np.diff(self.offsets)) != sizes:
            raise ValueError(f"offsets {self.offsets} do not fit the parts' genomes {sizes}")
        if self.offsets[0] != 0 or self.offsets[-1] != self.genome_size:
            raise ValueError(f"offsets {self.offsets} do not span genome_size {self.genome_size}")

    @classmethod
    def from_config(
        cls,
        config: ComposedConfig,
        observation_space: gym.Space,
        action_space: gym.Space,
        rng: np.random.Generator,
    ) -> ComposedTemplate:
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        space, parts = observation_space, []
        for number, part in enumerate(config.parts):
            with _part_errors(number, space):
                output: gym.Space = action_space
                if number < len(config.parts) - 1:
                    size = config.size(number)
                    if size == 0:
                        _, template_cls = get_brain_type(part.type_name())
                        size = template_cls.feature_size(part, space) or 0
                    output = FeatureSpace(size)
                parts.append(make_template(part, space, output, rng))
            space = output
        offsets = tuple(int(n) for n in np.cumsum([0] + [p.genome_size for p in parts]))
        return cls(
            config=config, io=io, genome_size=offsets[-1], parts=tuple(parts), offsets=offsets
        )

    def slices(self) -> list[slice]:
        """Part i's genome slice."""
        return [slice(a, b) for a, b in zip(self.offsets, self.offsets[1:])]

    def gene_units(self) -> np.ndarray | None:
        """The parts' units one after the other; None if a part does not say."""
        units, first = [], 0
        for part in self.parts:
            own = part.gene_units()
            if own is None:
                return None
            units.append(first + own)
            first += int(own.max()) + 1 if len(own) else 0
        return np.concatenate(units) if units else np.zeros(0, dtype=np.int64)

    def new_brain(self) -> ComposedBrain:
        return ComposedBrain([part.new_brain() for part in self.parts])

    def fill(self, brain: ComposedBrain, genome: np.ndarray) -> None:
        for part, own, piece in zip(self.parts, brain.parts, self.slices()):
            part.fill(own, genome[piece].copy())  # a copy: no part can keep a view of the genome

    def start_up_warnings(self, observation: str) -> list[str]:
        """The first part's: it is the part that sees the observation."""
        return self.parts[0].start_up_warnings(observation)

    def missing_form(self, method: str) -> ConfigError | None:
        """The first part's refusal, naming the part (``brain.parts[1].type: ...``): a composed
        brain has a form when every part has it."""
        for number, part in enumerate(self.parts):
            missing = part.missing_form(method)
            if missing is not None:
                path = f"brain.parts[{number}]{missing.path.removeprefix('brain')}"
                return ConfigError(path, missing.message)
        return None

    def _require(self, method: str) -> None:
        missing = self.missing_form(method)
        if missing is not None:
            raise missing

    def batch_brain(self, genomes: np.ndarray) -> ComposedBatchBrain:
        genomes = self.check_genomes(genomes)
        self._require("batch_brain")
        return ComposedBatchBrain(
            [
                part.batch_brain(genomes[:, piece].copy())
                for part, piece in zip(self.parts, self.slices())
            ]
        )

    def jax_brain(self) -> JaxBrain:
        self._require("jax_brain")
        from neuro_evolution.brains.jax_conv import ComposedJaxBrain  # jax: an optional extra

        parts = [part.jax_brain() for part in self.parts]
        return ComposedJaxBrain(self, parts, self.slices())

    def export_step(self, brain: ComposedBrain, graph: Any, inputs: str) -> str:
        """Part i's outputs are part i+1's inputs; part i's names get the prefix ``part<i>.``."""
        self._require("export_step")
        for number, (part, own) in enumerate(zip(self.parts, brain.parts)):
            with graph.scope(f"part{number}."):
                inputs = part.export_step(own, graph, inputs)
        return inputs

    def to_state(self) -> StateDict:
        """The config, io and offsets, and every part's own state under ``part<i>.``."""
        state: StateDict = {
            "brain_type": self.config.type_name(),
            "config": json.dumps(to_dict(self.config), sort_keys=True),
            "genome_size": self.genome_size,
            "offsets": np.asarray(self.offsets, dtype=np.int64),
        }
        _flatten(self.io, "io.", state)
        for number, part in enumerate(self.parts):
            state.update({f"part{number}.{k}": v for k, v in part.to_state().items()})
        return state

    @classmethod
    def restore(cls, state: typing.Mapping[str, Any]) -> ComposedTemplate:
        config = parse_brain_config(json.loads(str(np.asarray(state["config"]))), "")
        offsets = tuple(int(n) for n in np.asarray(state["offsets"]).ravel())
        parts = []
        for number in range(len(offsets) - 1):
            prefix = f"part{number}."
            own = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
            parts.append(BrainTemplate.from_state(own))
        return cls(
            config=config,
            io=_unflatten(SpaceAdapter, "io.", state),
            genome_size=int(np.asarray(state["genome_size"]).item()),
            parts=tuple(parts),
            offsets=offsets,
        )
