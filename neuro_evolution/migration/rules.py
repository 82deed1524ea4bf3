"""The notes a migration prints and the table-driven mapper of one config section.

A section is mapped by a table ``{old key: rule}``. A rule is a dotted target path (the value is
copied there), a :class:`Drop` (the option has no meaning here: one ``dropped`` line), or a
function ``(value, where, notes) -> {target path: value}`` for a value that needs converting.
A key the table does not name is dropped too: it was no option of the predecessor either.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from neuro_evolution.support.errors import UserError

PROGRAM = "migrate"  # the prefix of every note line


class MigrationError(UserError):
    """The old config cannot be migrated; the message is one line naming the file and the fix."""


def shown(value: Any) -> str:
    """A value as the JSON file writes it (``true``, ``null``, ``"relu"``)."""
    return json.dumps(value)


@dataclass
class Notes:
    """The lines a migration reports: options dropped, options whose value changed, notes."""

    lines: list[str] = field(default_factory=list)

    def dropped(self, where: str, value: Any, reason: str) -> None:
        """An option with no meaning here: it is not written."""
        self.lines.append(f"{PROGRAM}: dropped {where}={shown(value)} ({reason})")

    def changed(self, where: str, old: Any, new: str, reason: str) -> None:
        """An option written with another value or name than the predecessor's (``new`` says
        where and what)."""
        self.lines.append(f"{PROGRAM}: changed {where}={shown(old)} -> {new} ({reason})")

    def note(self, where: str, message: str) -> None:
        """Behaviour of the predecessor that no option named and that is not kept here."""
        self.lines.append(f"{PROGRAM}: note: {where}: {message}")


@dataclass(frozen=True)
class Drop:
    """The rule of an option that has no meaning here, with the reason."""

    reason: str


Converter = Callable[[Any, str, Notes], dict[str, Any]]
Rule = str | Drop | Converter
UNKNOWN = "not an option of the predecessor either"


def skip(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """The rule of a key that another step maps (a sub-section, the env's attributes)."""
    return {}


def map_section(
    section: Mapping[str, Any], where: str, rules: Mapping[str, Rule], notes: Notes
) -> dict[str, Any]:
    """``{target path: value}`` of every option of ``section`` (at ``where`` in the old file)
    that its rule maps; every other option is reported as dropped."""
    mapped: dict[str, Any] = {}
    for key, value in section.items():
        rule = rules.get(key, Drop(UNKNOWN))
        path = f"{where}.{key}" if where else key
        if isinstance(rule, Drop):
            notes.dropped(path, value, rule.reason)
        elif isinstance(rule, str):
            mapped[rule] = value
        else:
            mapped.update(rule(value, path, notes))
    return mapped


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1, "a.c": 2}`` -> ``{"a": {"b": 1, "c": 2}}`` (keys in first-seen order)."""
    tree: dict[str, Any] = {}
    for path, value in flat.items():
        *parents, last = path.split(".")
        node = tree
        for parent in parents:
            node = node.setdefault(parent, {})
        node[last] = value
    return tree


def require_section(data: Mapping[str, Any], key: str, source: str) -> dict[str, Any]:
    """``data[key]`` if it is a JSON object, else a :class:`MigrationError` naming it."""
    section = data.get(key)
    if not isinstance(section, dict):
        found = "missing" if section is None else f"a {type(section).__name__}"
        raise MigrationError(
            f"{source}: {key} is {found}, not an object: not a config of the predecessor "
            "(its configurations/*.json); pass one of those"
        )
    return section
