"""Optimizer state declared once: each entry names the attribute that holds a piece, the key it is
saved under, its dtype and its shape, and :class:`~.base.Optimizer` writes ``state()`` and
``load_state()`` from the entries.

The entries:

- :class:`Value`: a Python scalar (``int``, ``float``, ``bool`` or ``str``);
- :class:`Array`: a numpy array of a dtype and shape;
- :class:`ArrayDict`: a dict of arrays with one row each per item of another entry, or ``None``
  (then no key is saved);
- :class:`Pending`: the rows of a pending ask, saved with ``has_asked`` (all ``None`` when no ask
  is pending, saved as zero rows);
- :class:`Generator`: a numpy PCG64 generator, saved as words (:func:`.rng.generator_to_state`);
- :class:`Part`: an object that saves itself under a prefix (``to_state(prefix)`` /
  ``load_state(state, prefix)``: Adam's moments, Python's ``random`` state).

A shape lists one item per axis: an ``int``; ``None`` for any length; a name, read first from the
entries already loaded (a scalar's value, an array's length) and then from the optimizer (a
dotted name reaches into it, as config.mu names the config's mu); a function of the optimizer
and the entries loaded so far; or a tuple of those, any of which is accepted. Loading
reads and checks every value and array first (missing keys, shapes, dtypes that do not cast
within their kind), then loads the generators and parts, and only then sets attributes, so a
refused state leaves the arrays and scalars of the optimizer as they were.

An entry with ``missing`` set loads that (a callable of the optimizer) when the key is absent: a
state written before the entry existed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from neuro_evolution.optimizers.rng import (
    generator_load_state,
    generator_to_state,
    state_array,
    state_scalar,
)

Axis = int | str | Callable[[Any, Mapping[str, Any]], int] | None
ShapeItem = Axis | tuple[Axis, ...]
Missing = Callable[[Any], Any] | None
_SCALARS = (int, float, bool, str)


def _key(attribute: str, key: str | None) -> str:
    return key if key is not None else attribute.lstrip("_")


@dataclasses.dataclass(frozen=True)
class Value:
    """A Python scalar of ``kind`` held by ``attribute`` (saved under ``key``: by default the
    attribute without its leading underscores), at least ``low`` where that is set."""

    attribute: str
    kind: type = float
    key: str | None = None
    missing: Missing = None
    low: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in _SCALARS:
            raise TypeError(f"Value {self.attribute}: kind must be one of {_SCALARS}")

    @property
    def name(self) -> str:
        return _key(self.attribute, self.key)


@dataclasses.dataclass(frozen=True)
class Array:
    """A numpy array of ``dtype`` and ``shape`` held by ``attribute`` (saved under ``key``)."""

    attribute: str
    shape: tuple[ShapeItem, ...]
    dtype: Any = np.float64
    key: str | None = None
    missing: Missing = None

    @property
    def name(self) -> str:
        return _key(self.attribute, self.key)


@dataclasses.dataclass(frozen=True)
class ArrayDict:
    """A dict of arrays held by ``attribute``, each saved as ``{prefix}{key}`` with ``rows`` rows
    (an axis item, as in a shape).

    Without ``like`` the dict holds float64 arrays under ``keys``, or is ``None`` (then no key
    is saved). ``like`` names an optimizer method returning an empty dict of the layout (its
    keys, dtypes and trailing axes); the dict is then always there and loads exactly that
    layout."""

    attribute: str
    prefix: str
    keys: tuple[str, ...] = ()
    rows: Axis = None
    like: str | None = None


@dataclasses.dataclass(frozen=True)
class Pending:
    """The rows of a pending ask: ``rows`` pairs each attribute with its key; every attribute is
    ``None`` when no ask is pending, else a (``count``, width) array, ``widths`` naming each
    row's width (the genome size by default)."""

    rows: tuple[tuple[str, str], ...]
    count: Axis = "population_size"
    widths: tuple[Axis, ...] | None = None

    def width(self, index: int) -> Axis:
        return "genome_size" if self.widths is None else self.widths[index]


@dataclasses.dataclass(frozen=True)
class Generator:
    """The numpy PCG64 generator held by ``attribute``, saved under ``prefix``."""

    attribute: str
    prefix: str = "generator"


@dataclasses.dataclass(frozen=True)
class Part:
    """An object held by ``attribute`` that saves itself under ``prefix`` (``to_state(prefix)``
    and ``load_state(state, prefix)``); skipped, saved and loaded alike, while it is ``None``."""

    attribute: str
    prefix: str


Entry = Value | Array | ArrayDict | Pending | Generator | Part


def _lookup(owner: Any, dotted: str) -> Any:
    value = owner
    for name in dotted.split("."):
        value = getattr(value, name)
    return value


def _axis(item: Axis, loaded: Mapping[str, Any], owner: Any) -> int | None:
    if item is None or isinstance(item, int):
        return item
    if callable(item):
        return int(item(owner, loaded))
    value = loaded[item] if item in loaded else _lookup(owner, item)
    return len(value) if isinstance(value, np.ndarray) else int(value)


def _shape_error(key: str, shape: tuple[ShapeItem, ...], loaded: Any, owner: Any) -> str:
    def text(item: ShapeItem) -> str:
        if isinstance(item, tuple):
            return " or ".join(str(_axis(option, loaded, owner)) for option in item)
        return "any" if item is None else str(_axis(item, loaded, owner))

    axes = ", ".join(text(item) for item in shape) + ("," if len(shape) == 1 else "")
    return f"optimizer state {key!r}: expected shape ({axes})"


def _fits(got: int, item: ShapeItem, loaded: Mapping[str, Any], owner: Any) -> bool:
    options = item if isinstance(item, tuple) else (item,)
    return any((want := _axis(option, loaded, owner)) is None or want == got for option in options)


def _array(
    state: Mapping[str, Any],
    key: str,
    dtype: Any,
    shape: tuple[ShapeItem, ...],
    loaded: Mapping[str, Any],
    owner: Any,
) -> np.ndarray:
    """The array under ``key`` as an owned ``dtype`` copy (:func:`.rng.state_array`), refused
    when its shape does not fit ``shape``'s items or its kind does not cast to ``dtype``."""
    if key in state:
        value = np.asarray(state[key])
        if value.ndim != len(shape) or not all(
            _fits(got, item, loaded, owner) for got, item in zip(value.shape, shape)
        ):
            raise ValueError(f"{_shape_error(key, shape, loaded, owner)}, got {value.shape}")
        if value.size and not np.can_cast(value.dtype, dtype, casting="same_kind"):
            raise ValueError(
                f"optimizer state {key!r}: expected {np.dtype(dtype)}, got {value.dtype}"
            )
    return state_array(state, key, dtype, (None,) * len(shape))


def _scalar(state: Mapping[str, Any], entry: Value) -> Any:
    raw = state_scalar(state, entry.name)
    if entry.kind is str:
        return str(raw)
    if isinstance(raw, str):
        raise ValueError(
            f"optimizer state {entry.name!r}: expected {entry.kind.__name__}, got text"
        )
    value = entry.kind(raw)
    if entry.low is not None and value < entry.low:
        raise ValueError(f"optimizer state {entry.name!r}: must be >= {entry.low:g}, got {value}")
    return value


def save_entries(owner: Any, entries: tuple[Entry, ...]) -> dict[str, Any]:
    """The state of ``entries`` as plain arrays and scalars (arrays copied)."""
    saved: dict[str, Any] = {}
    for entry in entries:
        if isinstance(entry, Value):
            saved[entry.name] = entry.kind(getattr(owner, entry.attribute))
        elif isinstance(entry, Array):
            saved[entry.name] = np.array(getattr(owner, entry.attribute), dtype=entry.dtype)
        elif isinstance(entry, Pending):
            saved.update(_save_pending(owner, entry))
        elif isinstance(entry, ArrayDict):
            arrays = getattr(owner, entry.attribute) or {}
            saved.update({f"{entry.prefix}{key}": arrays[key].copy() for key in arrays})
        elif isinstance(entry, Generator):
            saved.update(generator_to_state(getattr(owner, entry.attribute), entry.prefix))
        elif (part := getattr(owner, entry.attribute)) is not None:
            saved.update(part.to_state(entry.prefix))
    return saved


def _save_pending(owner: Any, entry: Pending) -> dict[str, Any]:
    values = [getattr(owner, attribute) for attribute, _ in entry.rows]
    saved: dict[str, Any] = {"has_asked": values[0] is not None}
    for index, ((_, key), value) in enumerate(zip(entry.rows, values)):
        if value is None:
            width = _axis(entry.width(index), {}, owner)
            value = np.zeros((0, width))
        saved[key] = np.array(value, dtype=np.float64)
    return saved


def _load_pending(
    state: Mapping[str, Any], entry: Pending, loaded: dict[str, Any], owner: Any
) -> None:
    asked = bool(state_scalar(state, "has_asked"))
    count = _axis(entry.count, loaded, owner) if asked else 0
    for index, (attribute, key) in enumerate(entry.rows):
        shape = (count, entry.width(index))
        rows = _array(state, key, np.float64, shape, loaded, owner)
        loaded[attribute] = rows if asked else None


def _load_array_dict(
    state: Mapping[str, Any], entry: ArrayDict, loaded: dict[str, Any], owner: Any
) -> dict[str, np.ndarray] | None:
    """The arrays of ``entry`` in ``state``: ``like``'s layout exactly, else its float64 keys
    with any trailing axes (``None`` when the first is absent)."""
    if entry.like is not None:
        example = getattr(owner, entry.like)()
        layout = {key: (value.dtype, value.shape[1:]) for key, value in example.items()}
    elif f"{entry.prefix}{entry.keys[0]}" not in state:
        return None
    else:
        layout = {
            key: (np.dtype(np.float64), (None,) * (np.ndim(state.get(entry.prefix + key, 0)) - 1))
            for key in entry.keys
        }
    return {
        key: _array(state, entry.prefix + key, dtype, (entry.rows, *trailing), loaded, owner)
        for key, (dtype, trailing) in layout.items()
    }


def load_entries(owner: Any, entries: tuple[Entry, ...], state: Mapping[str, Any]) -> None:
    """Set ``owner``'s attributes from ``state``, refusing a state that does not fit (see the
    module docstring for the order)."""
    loaded: dict[str, Any] = {}
    for entry in entries:
        if isinstance(entry, Value | Array) and entry.name not in state and entry.missing:
            loaded[entry.attribute] = entry.missing(owner)
        elif isinstance(entry, Value):
            loaded[entry.attribute] = _scalar(state, entry)
        elif isinstance(entry, Array):
            loaded[entry.attribute] = _array(
                state, entry.name, entry.dtype, entry.shape, loaded, owner
            )
        elif isinstance(entry, Pending):
            _load_pending(state, entry, loaded, owner)
        elif isinstance(entry, ArrayDict):
            loaded[entry.attribute] = _load_array_dict(state, entry, loaded, owner)
    for entry in entries:
        if isinstance(entry, Generator):
            generator_load_state(getattr(owner, entry.attribute), state, entry.prefix)
        elif isinstance(entry, Part) and (part := getattr(owner, entry.attribute)) is not None:
            part.load_state(state, entry.prefix)
    for attribute, value in loaded.items():
        setattr(owner, attribute, value)
