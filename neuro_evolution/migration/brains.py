"""The ``brain`` section: the predecessor's brain types as this package's.

- ``CTRNN`` keeps its option names and meanings (docs/predecessor.md); only the
  ``legacy`` state boundaries, which this package does not offer, become ``per_neuron``;
- ``FeedForward_NumPy``/``FeedForward_PyTorch`` become ``FFNN``: ``non_linearity`` is the hidden
  layers' activation and, where this package has it (tanh), the output layer's;
- ``LSTM_NumPy``/``LSTMNumPy``/``LSTM_PyTorch`` become ``LSTM`` with as many cells as the
  predecessor's LSTM had (the action's size; here an output layer follows the cells);
- ``ConcatenatedBrain_LSTM`` (feed-forward front, LSTM, feed-forward back) and ``CNN_CTRNN``
  become ``composed`` brains of those parts, with the part sizes the predecessor used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from neuro_evolution.migration.rules import (
    Drop,
    MigrationError,
    Notes,
    Rule,
    map_section,
    nest,
    shown,
    skip,
)

SAME_CTRNN_OPTIONS = (
    "number_neurons",
    "delta_t",
    "neuron_activation",
    "neuron_activation_inplace",
    "use_bias",
    "optimize_y0",
    "clipping_range_min",
    "clipping_range_max",
    "set_principle_diagonal_elements_of_W_negative",
    "v_mask",
    "v_mask_param",
    "w_mask",
    "w_mask_param",
    "t_mask",
    "t_mask_param",
    "normalize_input",
    "normalize_input_target",
    "parameter_perturbations",
)
INDIRECT = Drop("no indirect encoding here; the predecessor's own code had switched it off")
FFNN_NO_SCALING = Drop(
    "an FFNN scales no input here, and the predecessor's FeedForward_NumPy ignored it too; "
    "observation_normalization is a running normalization"
)
COMPOSED_INPUT = Drop("a composed brain scales no input here; its parts have their own options")
COMPOSED_BIAS = Drop("every part has its own use_bias; the predecessor ignored this one")


@dataclass
class BrainContext:
    """What a brain's mapping needs besides its section: the notes and the env's action space
    (made only when a rule needs it)."""

    notes: Notes
    action_space: Callable[[], gym.Space]


def state_boundaries(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """``legacy`` (each neuron clipped by every neuron's bounds in turn, a bug) -> per_neuron."""
    if value == "legacy":
        notes.changed(
            where,
            value,
            'optimize_state_boundaries="per_neuron"',
            "legacy clipped every neuron by every neuron's bounds in turn, a bug this package "
            "does not offer",
        )
        return {"optimize_state_boundaries": "per_neuron"}
    return {"optimize_state_boundaries": value}


CTRNN_RULES: dict[str, Rule] = {
    **{key: key for key in SAME_CTRNN_OPTIONS},
    "optimize_state_boundaries": state_boundaries,
}


def ctrnn_part(section: dict[str, Any], where: str, context: BrainContext) -> dict[str, Any]:
    """A CTRNN section; the predecessor's 0/0 default clipping range (a state pinned at 0 with
    fixed boundaries) becomes this package's -1/1, with a line."""
    brain = nest(map_section(without_type(section), where, CTRNN_RULES, context.notes))
    low = brain.get("clipping_range_min", 0.0)
    high = brain.get("clipping_range_max", 0.0)
    if low >= high:
        context.notes.changed(
            f"{where}.clipping_range_min/max",
            [low, high],
            "-1/1",
            "a range that is not one pins every state with fixed boundaries; here the minimum "
            "must lie below the maximum",
        )
        brain["clipping_range_min"], brain["clipping_range_max"] = -1.0, 1.0
    return {"type": "CTRNN", **brain}


def hidden_layers(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """The layer sizes; ``[[64, 64]]`` (one list in a list) is ``[64, 64]`` as the predecessor
    read it."""
    if len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    return {"hidden_layers": value}


FFNN_RULES: dict[str, Rule] = {
    "hidden_layers": hidden_layers,
    "non_linearity": "activation",
    "use_bias": "use_bias",
    "indirect_encoding": INDIRECT,
    "cppn_hidden_layers": INDIRECT,
    "normalize_input": FFNN_NO_SCALING,
    "normalize_input_target": FFNN_NO_SCALING,
}


def output_activation(activation: str, space: gym.Space | None, where: str, notes: Notes) -> str:
    """The output layer's activation: the hidden one where this package has it (tanh); for relu
    the raw outputs (``identity``) into the next part or a Discrete action's argmax, the outputs
    clipped to [-1, 1] (``clip``) for a Box action."""
    if activation == "tanh":
        return "tanh"
    new = "clip" if isinstance(space, gym.spaces.Box) else "identity"
    notes.changed(
        f"{where}.non_linearity",
        activation,
        f'output_activation="{new}"',
        f"{activation} on the output layer is not offered here",
    )
    return new


def ffnn_part(
    section: dict[str, Any], where: str, context: BrainContext, last: bool = True
) -> dict[str, Any]:
    """An FFNN section (``last``: its outputs are the action, else the next part's input)."""
    brain = nest(map_section(without_type(section), where, FFNN_RULES, context.notes))
    activation = brain.get("activation", "tanh")
    space = context.action_space() if last and activation != "tanh" else None
    brain["output_activation"] = output_activation(activation, space, where, context.notes)
    return {"type": "FFNN", **brain}


LSTM_RULES: dict[str, Rule] = {
    "lstm_num_layers": "number_layers",
    "use_bias": "use_bias",
    "normalize_input": "normalize_input",
    "normalize_input_target": "normalize_input_target",
}


def lstm_part(
    section: dict[str, Any], where: str, context: BrainContext, cells: int | None = None
) -> dict[str, Any]:
    """An LSTM section with ``cells`` cells (None: the action's size, as the predecessor's LSTM
    had)."""
    brain = nest(map_section(without_type(section), where, LSTM_RULES, context.notes))
    if cells is None:
        cells = gym.spaces.flatdim(context.action_space())
        context.notes.note(
            where,
            f"the predecessor's LSTM had as many cells as the action has values ({cells}) and "
            "no output layer: hidden_size is that, and an output layer follows the cells here",
        )
    if brain.get("normalize_input"):
        context.notes.note(
            f"{where}.normalize_input",
            "the predecessor's LSTM scaled to [0, target], this one scales to [-target, target]",
        )
    return {"type": "LSTM", "hidden_size": cells, **brain}


def concatenated_lstm(section: dict[str, Any], where: str, context: BrainContext) -> dict:
    """Feed-forward front, LSTM, feed-forward back -> a composed brain of those parts."""
    front, back = section.get("feed_forward_front"), section.get("feed_forward_back")
    rules: dict[str, Rule] = {
        "normalize_input": COMPOSED_INPUT,
        "normalize_input_target": COMPOSED_INPUT,
        "use_bias": COMPOSED_BIAS,
        "lstm": skip,
        "feed_forward_front": skip,
        "feed_forward_back": skip,
    }
    map_section(without_type(section), where, rules, context.notes)
    parts: list[dict[str, Any]] = []
    sizes: list[int] = []
    if front:
        part = ffnn_part(front, f"{where}.feed_forward_front", context, last=False)
        parts.append(part)
        sizes.append(layer_sizes(part)[-1])
    cells = (
        layer_sizes(hidden_layers(back.get("hidden_layers", []), "", Notes()))[0] if back else None
    )
    lstm = section.get("lstm")
    if not isinstance(lstm, dict):
        raise MigrationError(f"{where}.lstm: missing; a ConcatenatedBrain_LSTM needs its lstm")
    parts.append(lstm_part(lstm, f"{where}.lstm", context, cells))
    if back and cells is not None:
        sizes.append(cells)
        parts.append(ffnn_part(back, f"{where}.feed_forward_back", context))
    if len(parts) == 1:
        return parts[0]
    return {"type": "composed", "parts": parts, "sizes": sizes}


def layer_sizes(brain: dict[str, Any]) -> list[int]:
    """The hidden layer sizes of a mapped FFNN section (at least one, as the predecessor
    required)."""
    sizes = list(brain.get("hidden_layers", []))
    if not sizes:
        raise MigrationError("brain: a feed-forward part of ConcatenatedBrain_LSTM has no layers")
    return sizes


CONV_DROPPED = Drop("the predecessor's CNN did not read it")
CONV_KEYS = ("conv_size", "conv_feat", "conv_stride", "maxp_size", "maxp_stride")


def conv_part(section: dict[str, Any], where: str, notes: Notes) -> dict[str, Any]:
    """The predecessor's two-layer CNN: conv + relu + max pool, conv + sigmoid + max pool
    (sigmoid is not offered here: tanh)."""
    rules: dict[str, Rule] = {
        "normalize_input": CONV_DROPPED,
        "normalize_input_target": CONV_DROPPED,
        "use_bias": "use_bias",
        **{f"{key}{layer}": f"{key}{layer}" for key in CONV_KEYS for layer in (1, 2)},
    }
    flat = map_section(without_type(section), where, rules, notes)
    layers = []
    for layer, activation in ((1, "relu"), (2, "tanh")):
        layers.append(
            {
                "channels": flat.get(f"conv_feat{layer}"),
                "kernel": flat.get(f"conv_size{layer}"),
                "stride": flat.get(f"conv_stride{layer}", 1),
                "activation": activation,
                "pool": "max",
                "pool_size": flat.get(f"maxp_size{layer}"),
                "pool_stride": flat.get(f"maxp_stride{layer}"),
            }
        )
    notes.note(where, "the predecessor's second layer used sigmoid, not offered here: tanh")
    return {"type": "conv", "layers": layers, "use_bias": flat.get("use_bias", True)}


def cnn_ctrnn(section: dict[str, Any], where: str, context: BrainContext) -> dict[str, Any]:
    """CNN feeding a CTRNN -> a composed brain (the conv part decides its output size)."""
    rules: dict[str, Rule] = {
        "normalize_input": COMPOSED_INPUT,
        "normalize_input_target": COMPOSED_INPUT,
        "use_bias": COMPOSED_BIAS,
        "cnn_conf": skip,
        "ctrnn_conf": skip,
    }
    map_section(without_type(section), where, rules, context.notes)
    conv = conv_part(require(section, "cnn_conf", where), f"{where}.cnn_conf", context.notes)
    ctrnn = ctrnn_part(require(section, "ctrnn_conf", where), f"{where}.ctrnn_conf", context)
    return {"type": "composed", "parts": [conv, ctrnn]}


BRAINS: dict[str, Callable[[dict[str, Any], str, BrainContext], dict[str, Any]]] = {
    "CTRNN": ctrnn_part,
    "FeedForward_NumPy": ffnn_part,
    "FeedForward_PyTorch": ffnn_part,
    "LSTM_NumPy": lstm_part,
    "LSTMNumPy": lstm_part,
    "LSTM_PyTorch": lstm_part,
    "ConcatenatedBrain_LSTM": concatenated_lstm,
    "CNN_CTRNN": cnn_ctrnn,
}


def migrate_brain(section: dict[str, Any], source: str, context: BrainContext) -> dict[str, Any]:
    """The ``brain`` section of the predecessor's brain type (an unknown type is refused)."""
    kind = section.get("type")
    mapper = BRAINS.get(kind) if isinstance(kind, str) else None
    if mapper is None:
        raise MigrationError(
            f"{source}: brain.type {shown(kind)} is not a brain type of the predecessor "
            f"({', '.join(BRAINS)}); fix the type"
        )
    return mapper(section, "brain", context)


def without_type(section: dict[str, Any]) -> dict[str, Any]:
    """The section without its ``type`` key (the mapper has read it)."""
    return {key: value for key, value in section.items() if key != "type"}


def require(section: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """A sub-section that must be an object."""
    value = section.get(key)
    if not isinstance(value, dict):
        raise MigrationError(f"{where}.{key}: missing or not an object; add the section")
    return value
