"""Named registries of pluggable components: brain types, optimizers, handlers, observers.

One mechanism for every kind. A registry knows the names of its built-in components from a map
of name -> module, so listing the names (``train --handler`` choices, a config error's "Known
types") imports nothing; the module of a built-in is imported on the first :meth:`Registry.get`
of its name and registers its class with the :meth:`Registry.register` decorator then. A user's
component registers the same way at runtime (e.g. from a module in the config's ``imports``).

A registry imports none of its components, so a kind's base module (its interface) can import
its registry to look names up; the registry in turn types its classes loosely.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from neuro_evolution.core.schema import ConfigError, did_you_mean, join, parse

ImplT = TypeVar("ImplT")
ClassT = TypeVar("ClassT", bound=type)


class RenamedOptionWarning(FutureWarning):
    """A config used an option's old name (read as its new one)."""


class Registry(Generic[ImplT]):
    """Maps a name to (config class or None, implementation class) for one kind of component.

    ``what`` names one entry in messages ("brain type", "handler"), ``known`` the list of them
    ("types", "handlers"). ``names()`` is sorted, or with ``builtins_first`` the built-in names
    in the map's order followed by the others sorted. ``renamed`` maps an option's old name to
    its new one: a section that uses the old name is read as the new, with one warning.
    """

    def __init__(
        self,
        kind: str,
        builtins: Mapping[str, str],
        *,
        what: str,
        known: str,
        builtins_first: bool = False,
        renamed: Mapping[str, str] | None = None,
    ):
        self.kind = kind
        self.what = what
        self.known = known
        self.builtins: Mapping[str, str] = dict(builtins)
        self.builtins_first = builtins_first
        self.renamed: Mapping[str, str] = dict(renamed or {})  # an option's old name -> new
        self._entries: dict[str, tuple[Any, type[ImplT]]] = {}

    def register(self, name: str, config: type | None = None) -> Callable[[ClassT], ClassT]:
        """Class decorator registering an implementation (and its config class) as ``name``.

        Registering the same class again is a no-op (a module imported twice, e.g. under two
        names); a name taken by another class is a ValueError, and so is a built-in name from
        any module but the built-in's own.
        """

        def decorate(impl: ClassT) -> ClassT:
            builtin = self.builtins.get(name)
            if builtin is not None and impl.__module__ != builtin:
                _, known_impl = self.get(name)  # only the built-in's own module registers it
                raise ValueError(f"{self.what} {name!r} is already registered by {known_impl!r}")
            known = self._entries.get(name)
            if known is not None and known[1].__qualname__ != impl.__qualname__:
                raise ValueError(f"{self.what} {name!r} is already registered by {known[1]!r}")
            self._entries[name] = (config, impl)
            return impl

        return decorate

    def names(self) -> list[str]:
        """Every name: the built-in ones (none imported for this) and those registered since."""
        if self.builtins_first:
            return list(self.builtins) + sorted(set(self._entries) - set(self.builtins))
        return sorted(set(self.builtins) | set(self._entries))

    def get(self, name: str) -> tuple[Any, type[ImplT]]:
        """(config class, implementation) of ``name``, importing a built-in's module on first use;
        a KeyError with a "did you mean" and the known names if there is none."""
        if name not in self._entries and name in self.builtins:
            self._load(name)
        if name not in self._entries:
            names = self.names()
            raise KeyError(
                f"unknown {self.what} {name!r}.{did_you_mean(name, names)} "
                f"Known {self.known}: {', '.join(names)}"
            )
        return self._entries[name]

    def name_of(self, config_cls: type) -> str:
        """The registered name of a config class."""
        for name, (registered, _) in self._entries.items():
            if registered is config_cls:
                return name
        raise KeyError(f"{config_cls.__name__} is not a registered {self.kind} config")

    def impl_name(self, impl: type) -> str | None:
        """The name an implementation class is registered under, or None."""
        for name, (_, registered) in self._entries.items():
            if registered is impl:
                return name
        return None

    def parse_config(self, data: Any, path: str) -> Any:
        """Parse a ``{"type": NAME, ...options}`` section into NAME's config class (a kind's base
        module hands this to :func:`~neuro_evolution.core.schema.register_polymorphic`)."""
        if not isinstance(data, dict):
            raise ConfigError(path, f"must be an object with a 'type', got {data!r}")
        if "type" not in data:
            raise ConfigError(join(path, "type"), f"is required (one of {', '.join(self.names())})")
        try:
            config_cls, _ = self.get(str(data["type"]))
        except KeyError as error:
            raise ConfigError(join(path, "type"), str(error.args[0])) from None
        return parse(
            config_cls, self.read_renamed(data, config_cls, path), path, ignore=frozenset({"type"})
        )

    def read_renamed(self, data: dict[str, Any], config_cls: type, path: str) -> dict[str, Any]:
        """``data`` with each old option name (``renamed``) that ``config_cls`` has under its
        new name read as the new one, with one warning line; both names at once are refused."""
        if not self.renamed or not any(old in data for old in self.renamed):
            return data
        known = {field.name for field in dataclasses.fields(config_cls)}
        found = [old for old in self.renamed if old in data and self.renamed[old] in known]
        if not found:
            return data
        data = dict(data)
        for old in found:
            new, where = self.renamed[old], join(path, old)
            if new in data:
                raise ConfigError(
                    where, f"is the old name of {new}, which is given too; drop {old}"
                )
            data[new] = data.pop(old)
            warnings.warn(
                f"{where} is the old name of {new}; read as {new} (rename it in the config)",
                RenamedOptionWarning,
                stacklevel=3,
            )
        return data

    def _load(self, name: str) -> None:
        module = self.builtins[name]
        importlib.import_module(module)
        if name not in self._entries:
            raise RuntimeError(f"{module} did not register the built-in {self.what} {name!r}")
