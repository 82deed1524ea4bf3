"""Machinery for frozen, validated config classes: parse JSON-like data, name the field on error.

A config class is a :func:`config_class` (a frozen, slotted, keyword-only dataclass whose class
attributes are frozen too). Fields declare their constraints with :func:`option`. ``parse``
turns a dict into an instance, and every problem becomes a :class:`ConfigError` whose message
starts with the dotted field path, e.g. ``brain.number_neurons: must be an integer >= 1, got -3``.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, TypeVar, dataclass_transform, get_args, get_origin

from neuro_evolution.support.errors import ConfigError  # re-exported: config authors import it here
from neuro_evolution.support.frozen import FrozenClassMeta, FrozenDict, frozen_dataclass

T = TypeVar("T")
ConfigT = TypeVar("ConfigT", bound="ConfigBase")


class ConfigBase(metaclass=FrozenClassMeta):
    """Base of every config class. Override :meth:`validate` for checks across fields."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]  # set by config_class

    def validate(self, path: str) -> None:
        """Raise :class:`ConfigError` (with ``path``) when fields disagree with each other."""


def option(
    default: Any = dataclasses.MISSING,
    *,
    doc: str,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
) -> Any:
    """A config field with a default, a one-line description and optional numeric bounds."""
    metadata = {"doc": doc, "ge": ge, "gt": gt, "le": le, "lt": lt}
    if isinstance(default, list) or type(default) is dict:
        raise TypeError("use a tuple or a default_factory-free immutable default")
    return dataclasses.field(default=default, metadata=metadata)


# ``option`` is not declared a field specifier: type checkers read a specifier's default only
# from a ``default=`` keyword, and options pass it positionally, so every field would look
# required. Undeclared, any ``= option(...)`` reads as a default, which is what the checker needs.
@dataclass_transform(frozen_default=True, kw_only_default=True)
def config_class(cls: type[T]) -> type[T]:
    """Make ``cls`` (a :class:`ConfigBase` subclass) a frozen, slotted, keyword-only dataclass."""
    return frozen_dataclass(cls)


def did_you_mean(word: str, choices: typing.Iterable[str]) -> str:
    """`` Did you mean `x`?`` for the closest choice, or an empty string: a choice that differs
    only in case first (``xnes`` -> ``XNES``), else difflib's closest, with case kept and then
    ignored."""
    choices = list(choices)
    folded: dict[str, str] = {}
    for choice in choices:
        folded.setdefault(choice.casefold(), choice)
    close = (
        [folded[word.casefold()]]
        if word.casefold() in folded
        else difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
        or [folded[c] for c in difflib.get_close_matches(word.casefold(), folded, 1, 0.6)]
    )
    return f" Did you mean `{close[0]}`?" if close else ""


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bounds_text(meta: Mapping[str, Any]) -> str:
    parts = []
    for key, symbol in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        if meta.get(key) is not None:
            parts.append(f"{symbol} {meta[key]:g}")
    return " and ".join(parts)


def _check_bounds(value: float, meta: Mapping[str, Any], kind: str, path: str) -> None:
    ok = (
        (meta.get("ge") is None or value >= meta["ge"])
        and (meta.get("gt") is None or value > meta["gt"])
        and (meta.get("le") is None or value <= meta["le"])
        and (meta.get("lt") is None or value < meta["lt"])
    )
    if not ok:
        raise ConfigError(path, f"must be {kind} {_bounds_text(meta)}, got {_describe(value)}")


# JSON values taken as they are, once their type is right: type -> how an error names it.
_PLAIN_TYPES: dict[Any, str] = {bool: "true or false", str: "a string"}

# A polymorphic section ({"type": NAME, ...}) is parsed by a resolver registered for its base class.
_POLYMORPHIC: dict[type, Callable[[Any, str], Any]] = {}


def register_polymorphic(base: type, resolver: Callable[[Any, str], Any]) -> None:
    """Parse fields typed ``base`` with ``resolver(data, path)`` (used for ``{"type": ...}``)."""
    _POLYMORPHIC[base] = resolver


def parse_value(hint: Any, value: Any, path: str, meta: Mapping[str, Any] | None = None) -> Any:
    """Check and convert one JSON value against a type hint."""
    meta = meta or {}
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _parse_union(hint, value, path, meta)
    if origin is Literal:
        return _parse_literal(hint, value, path)
    if hint in _PLAIN_TYPES:
        if not isinstance(value, hint):
            raise ConfigError(path, f"must be {_PLAIN_TYPES[hint]}, got {_describe(value)}")
        return value
    if hint is int:
        return _parse_int(value, path, meta)
    if hint is float:
        return _parse_float(value, path, meta)
    if origin is tuple:
        return _parse_tuple(hint, value, path, meta)
    if origin in (dict, Mapping, typing.Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise ConfigError(path, f"must be an object, got {_describe(value)}")
        return FrozenDict(value)
    if isinstance(hint, type):
        for base, resolver in _POLYMORPHIC.items():
            if issubclass(hint, base):
                return resolver(value, path)
        if issubclass(hint, ConfigBase):
            return parse(hint, value, path)
    raise TypeError(f"{path}: unsupported config type {hint!r}")


def _parse_union(hint: Any, value: Any, path: str, meta: Mapping[str, Any]) -> Any:
    """``X | None`` takes null; ``X | Y`` the first alternative that parses."""
    args = tuple(a for a in get_args(hint) if a is not type(None))
    if value is None and len(args) < len(get_args(hint)):
        return None
    if len(args) == 1:
        return parse_value(args[0], value, path, meta)
    refusals: list[ConfigError] = []
    for arg in args:
        try:
            return parse_value(arg, value, path, meta)
        except ConfigError as error:
            if _takes_form(arg, value):
                refusals.append(error)
    if len(refusals) == 1:  # the one form the value has refused it: say why (-inf: not finite)
        raise refusals[0]
    forms = " or ".join(
        " or ".join(map(repr, get_args(a))) if get_origin(a) is Literal
        else _PLAIN_TYPES.get(a, getattr(a, "__name__", str(a)))
        for a in args
    )  # fmt: skip
    raise ConfigError(path, f"must be {forms}, got {_describe(value)}")


def _takes_form(hint: Any, value: Any) -> bool:
    """Whether ``value`` has the JSON form ``hint`` parses where a form's own check can refuse
    it beyond its form: a number for int and float, a list for a tuple."""
    if hint in (int, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return get_origin(hint) is tuple and isinstance(value, list | tuple)


def _parse_literal(hint: Any, value: Any, path: str) -> Any:
    """One of the literal's choices, with a "did you mean" for a near miss."""
    choices = get_args(hint)
    if value not in choices:
        hint_text = did_you_mean(value, map(str, choices)) if isinstance(value, str) else ""
        listed = ", ".join(repr(c) for c in choices)
        raise ConfigError(path, f"must be one of {listed}, got {_describe(value)}.{hint_text}")
    return value


def _parse_int(value: Any, path: str, meta: Mapping[str, Any]) -> int:
    """An integer (a float with an integer value is taken) within the field's bounds."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            bounds = _bounds_text(meta)
            raise ConfigError(
                path,
                f"must be an integer{' ' + bounds if bounds else ''}, got {_describe(value)}",
            )
    _check_bounds(value, meta, "an integer", path)
    return value


def _parse_float(value: Any, path: str, meta: Mapping[str, Any]) -> float:
    """A finite number within the field's bounds, as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(path, f"must be a number, got {_describe(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ConfigError(
            path, f"must be a finite number, got {_describe(value)}; give a finite value"
        )
    _check_bounds(value, meta, "a number", path)
    return value


def _parse_tuple(hint: Any, value: Any, path: str, meta: Mapping[str, Any]) -> tuple[Any, ...]:
    """A list as a tuple: ``tuple[X, ...]`` of any length, ``tuple[X, Y]`` of exactly two."""
    args = get_args(hint)
    if not isinstance(value, list | tuple):
        raise ConfigError(path, f"must be a list, got {_describe(value)}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(parse_value(args[0], v, f"{path}[{i}]", meta) for i, v in enumerate(value))
    if len(value) != len(args):
        raise ConfigError(path, f"must be a list of {len(args)} values, got {_describe(value)}")
    return tuple(
        parse_value(a, v, f"{path}[{i}]", meta) for i, (a, v) in enumerate(zip(args, value))
    )


def parse(
    cls: type[ConfigT], data: Any, path: str = "", ignore: frozenset[str] = frozenset()
) -> ConfigT:
    """Build a config instance of ``cls`` from a JSON object, validating every field."""
    if not isinstance(data, Mapping):
        raise ConfigError(path, f"must be an object, got {_describe(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key in data:
        if key not in fields and key not in ignore:
            raise ConfigError(
                join(path, str(key)),
                f"unknown key for {cls.__name__}.{did_you_mean(str(key), fields)}"
                f" Known keys: {', '.join(sorted(fields))}",
            )
    values = {}
    for name, field in fields.items():
        if name in data:
            values[name] = parse_value(hints[name], data[name], join(path, name), field.metadata)
        elif field.default is dataclasses.MISSING:
            raise ConfigError(join(path, name), "is required")
    instance = cls(**values)
    instance.validate(path)
    return instance


def to_dict(config: Any) -> Any:
    """The resolved (defaults filled in) JSON form of a config value."""
    if isinstance(config, ConfigBase):
        result = {}
        type_name = getattr(config, "type_name", None)
        if callable(type_name):
            result["type"] = type_name()
        for field in dataclasses.fields(config):
            result[field.name] = to_dict(getattr(config, field.name))
        return result
    if isinstance(config, Mapping):
        return {k: to_dict(v) for k, v in config.items()}
    if isinstance(config, tuple | list):
        return [to_dict(v) for v in config]
    return config


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted key -> leaf value of a nested JSON object (e.g. a resolved config)."""
    if isinstance(data, dict) and data:
        result: dict[str, Any] = {}
        for key, value in data.items():
            result.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return result
    return {prefix: data}


def field_docs(cls: type) -> list[tuple[str, str, Any, str]]:
    """(name, type, default, doc) for every field of a config class, for the config reference."""
    hints = typing.get_type_hints(cls)
    rows = []
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        type_text = getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
        default = to_dict(field.default) if field.default is not dataclasses.MISSING else "required"
        rows.append((field.name, type_text, default, field.metadata.get("doc", "")))
    return rows
