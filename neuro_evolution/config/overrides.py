"""Command-line config settings: ``--set KEY=VALUE`` for ``train`` and ``pbt``, and
``--set KEY=V1,V2`` (a grid) for ``sweep``, parsed and applied one way.

A value is JSON where it parses (``0.1``, ``true``, ``[4, 4]``, ``null``) and a plain string
otherwise (``tanh``); ``@FILE.json`` is the JSON in that file. It is put at its dotted key of the
config file's data, and the whole config is validated like the file.

Switching a method: where a setting changes ``optimizer.type``, the section's keys that the new
type does not take are dropped and named in one warning line (keys given in the same command are
kept, so the new type's own options can come with it).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neuro_evolution.optimizers.base import OPTIMIZERS, RENAMED_KEYS
from neuro_evolution.support.errors import ConfigError, UserError

# a section whose ``type`` picks its config class -> the registry that knows the classes
TYPED_SECTIONS = {"optimizer": OPTIMIZERS}


class SettingWarning(UserWarning):
    """A ``--set`` changed more than its key (the keys a type switch dropped)."""


@dataclasses.dataclass(frozen=True)
class Setting:
    """One ``--set KEY=V1,V2,...``: a dotted config key and the values it takes."""

    key: str
    values: tuple[Any, ...]
    names: tuple[str, ...] = ()  # each value's text in directory names (default: value_text)
    files: bool = False  # the values are @FILE values (named by the files' stems)

    def name(self, index: int) -> str:
        """Value ``index`` as a directory name shows it."""
        return self.names[index] if self.names else value_text(self.values[index])

    def legacy_name(self, index: int) -> str:
        """Value ``index`` as an earlier release named its directory: inline JSON objects by
        their JSON text, every other value as today."""
        if self.names and not self.files:
            return value_text(self.values[index])
        return self.name(index)


def value_text(value: Any) -> str:
    """A value as it appears in a directory name (strings without quotes)."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def parse_value(text: str) -> Any:
    """A ``--set`` value: JSON where it parses, else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def file_value(key: str, text: str) -> Any:
    """The JSON in the file a ``@FILE`` value names (one-line UserError if it cannot be read)."""
    path = Path(text[1:])
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(f"--set {key}={text}: no such file {path}") from None
    except json.JSONDecodeError as error:
        raise UserError(
            f"--set {key}={text}: {path} is not JSON (line {error.lineno} column {error.colno}: "
            f"{error.msg})"
        ) from None
    except OSError as error:
        raise UserError(f"--set {key}={text}: cannot read {path} ({error.strerror})") from None


def split_values(text: str) -> list[str]:
    """Split ``V1,V2`` at top-level commas (not inside JSON lists/objects or strings)."""
    values, depth, quoted, current = [], 0, False, ""
    for char in text:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "[{":
            depth += 1
        elif not quoted and char in "]}":
            depth -= 1
        if char == "," and depth == 0 and not quoted:
            values.append(current)
            current = ""
        else:
            current += char
    values.append(current)
    return values


def parse_setting(text: str) -> Setting:
    """``"optimizer.sigma=0.1,0.3"`` -> Setting("optimizer.sigma", (0.1, 0.3))."""
    key, sign, values = text.partition("=")
    key = key.strip()
    if not sign or not key or not values.strip():
        raise UserError(f"--set {text!r}: write KEY=VALUE[,VALUE...], e.g. optimizer.sigma=0.1,0.3")
    if key == "random_seed":
        raise UserError("--set random_seed: use --seeds for the seeds of a sweep")
    texts = [v.strip() for v in split_values(values)]
    from_files = [text.startswith("@") for text in texts]
    if any(from_files) and not all(from_files):
        raise UserError(f"--set {key}: give every value as @FILE, or none")
    if all(from_files):
        parsed = tuple(file_value(key, text) for text in texts)
        names = tuple(Path(text[1:]).stem for text in texts)
        if len(set(names)) != len(names):
            raise UserError(f"--set {key}: two files have the same name {names[0]!r}; rename one")
    else:
        parsed = tuple(parse_value(text) for text in texts)
        names = object_names(parsed) if len(parsed) > 1 else ()
    if len(set(json.dumps(v, sort_keys=True) for v in parsed)) != len(parsed):
        raise UserError(f"--set {key}: a value is given twice")
    return Setting(key, parsed, names, files=all(from_files))


MAX_NAME = 64  # characters of a value's directory name before it is shortened by a hash
UNSET = "unset"  # a leaf one object has and another lacks


def leaves(value: Any, prefix: str = "") -> dict[str, str]:
    """A JSON object's leaves as ``{"bounds.low": "-1"}`` (lists are leaves)."""
    if not isinstance(value, dict) or not value:
        return {prefix: value_text(value)}
    found: dict[str, str] = {}
    for key, child in value.items():
        found.update(leaves(child, f"{prefix}.{key}" if prefix else str(key)))
    return found


def object_names(values: tuple[Any, ...]) -> tuple[str, ...]:
    """Directory names of inline JSON objects, by what tells them apart: the ``type`` where it
    alone does (``SNES``), else each leaf that differs between them (``sigma=0.1+bounds.low=-1``,
    ``unset`` where an object lacks it); a name over MAX_NAME characters is cut and ends with a
    hash of the value. Values that are not all objects keep their JSON text (``()``)."""
    if not all(isinstance(value, dict) for value in values):
        return ()
    flat = [leaves(value) for value in values]
    types = [value.get("type") for value in values]
    if all(isinstance(t, str) for t in types) and len(set(types)) == len(types):
        names = [str(t) for t in types]
    else:
        keys = sorted({key for leaf in flat for key in leaf}, key=lambda k: (k != "type", k))
        differing = [k for k in keys if len({leaf.get(k, UNSET) for leaf in flat}) > 1]
        names = ["+".join(f"{k}={leaf.get(k, UNSET)}" for k in differing) for leaf in flat]
    return tuple(shortened(name, value) for name, value in zip(names, values))


def shortened(name: str, value: Any) -> str:
    """``name``, or its first characters and a hash of ``value`` where it is too long."""
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}~{digest}"


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    """``data[a][b] = value`` for ``key = "a.b"``, creating missing sections."""
    *path, last = key.split(".")
    node = data
    for index, part in enumerate(path):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            where = ".".join(path[: index + 1])
            raise ConfigError(key, f"{where} is not a section of the config (it is {child!r})")
        node = child
    node[last] = value


def read_config_data(path: Path) -> dict[str, Any]:
    """The config file's JSON object (errors as one-line ConfigErrors, like ``load_config``)."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError("", f"{path}: no such config file") from None
    except json.JSONDecodeError as error:
        raise ConfigError(
            "", f"{path}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("", f"{path}: must hold a JSON object")
    return data


def type_keys(section: str, name: str) -> set[str] | None:
    """The keys a ``section`` of type ``name`` takes (and their old names); None for an
    unknown type (the config's validation names it)."""
    try:
        config_cls, _ = TYPED_SECTIONS[section].get(name)
    except KeyError:
        return None
    keys = {field.name for field in dataclasses.fields(config_cls)} | {"type"}
    return keys | {old for old, new in RENAMED_KEYS.items() if new in keys}


def switch_type(data: dict[str, Any], section: str, name: Any, given: set[str]) -> None:
    """Drop the keys of ``data[section]`` that type ``name`` does not take, but those in
    ``given``, and name them in one :class:`SettingWarning`."""
    current = data.get(section)
    if not isinstance(current, dict) or not isinstance(name, str) or current.get("type") == name:
        return
    keys = type_keys(section, name)
    if keys is None:
        return
    dropped = [key for key in current if key not in keys and key not in given]
    for key in dropped:
        del current[key]
    if dropped:
        warnings.warn(
            f"{section}.type={name}: dropped {', '.join(dropped)} ({current.get('type')} keys "
            f"that {name} does not take)",
            SettingWarning,
            stacklevel=2,
        )


def with_settings(data: dict[str, Any], chosen: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A deep copy of config ``data`` with each (dotted key, value) set; a ``SECTION.type`` that
    changes first drops the section's keys the new type does not take."""
    run = copy.deepcopy(data)
    chosen = list(chosen)
    for key, value in chosen:
        section, _, last = key.rpartition(".")
        if last == "type" and section in TYPED_SECTIONS:
            given = {k.split(".", 1)[1] for k, _ in chosen if k.startswith(section + ".")}
            switch_type(run, section, value, given)
    for key, value in chosen:
        set_dotted(run, key, copy.deepcopy(value))
    return run


def single_settings(texts: Iterable[str], program: str) -> list[tuple[str, Any]]:
    """The (key, value) of each ``--set KEY=VALUE`` of a command that makes one config."""
    chosen: list[tuple[str, Any]] = []
    for text in texts:
        setting = parse_setting(text)
        if len(setting.values) != 1:
            raise UserError(
                f"--set {setting.key}: {program} takes one value per key; to train several, "
                "use python -m neuro_evolution.sweep"
            )
        if setting.key in (key for key, _ in chosen):
            raise UserError(f"--set {setting.key}: the key is given twice; give it once")
        chosen.append((setting.key, setting.values[0]))
    return chosen
