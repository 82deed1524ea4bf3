"""Named registries of pluggable components (brain types, optimizers): config + implementation.

A config section such as ``{"type": "CTRNN", ...options}`` is parsed by the registry of the
section's base config class; an unknown name gets a "did you mean" and the list of known names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from neuro_evolution.config.schema import (
    ConfigError,
    did_you_mean,
    join,
    parse,
    register_polymorphic,
)

ImplT = TypeVar("ImplT")


class Registry(Generic[ImplT]):
    """Maps a type name to (config class, implementation class) for one kind of component."""

    def __init__(self, kind: str, config_base: type, load_builtins: Callable[[], None]):
        self.kind = kind
        self._entries: dict[str, tuple[type, type[ImplT]]] = {}
        self._load_builtins = load_builtins
        register_polymorphic(config_base, self.parse_config)

    def register(self, name: str, config: type) -> Callable[[type[ImplT]], type[ImplT]]:
        """Class decorator registering an implementation and its config class under ``name``."""

        def decorate(impl: type[ImplT]) -> type[ImplT]:
            known = self._entries.get(name)
            if known is not None and known[1].__qualname__ != impl.__qualname__:
                raise ValueError(f"{self.kind} type {name!r} is already registered by {known[1]!r}")
            self._entries[name] = (config, impl)
            return impl

        return decorate

    def names(self) -> list[str]:
        """Every registered name."""
        self._load_builtins()
        return sorted(self._entries)

    def get(self, name: str) -> tuple[type, type[ImplT]]:
        """(config class, implementation) for ``name``; KeyError listing the known names."""
        self._load_builtins()
        if name not in self._entries:
            raise KeyError(
                f"unknown {self.kind} type {name!r}.{did_you_mean(name, self._entries)} "
                f"Known types: {', '.join(sorted(self._entries))}"
            )
        return self._entries[name]

    def name_of(self, config_cls: type) -> str:
        """The registered name of a config class."""
        for name, (registered, _) in self._entries.items():
            if registered is config_cls:
                return name
        raise KeyError(f"{config_cls.__name__} is not a registered {self.kind} config")

    def parse_config(self, data: Any, path: str) -> Any:
        """Parse a ``{"type": NAME, ...options}`` section into NAME's config class."""
        if not isinstance(data, dict):
            raise ConfigError(path, f"must be an object with a 'type', got {data!r}")
        if "type" not in data:
            raise ConfigError(join(path, "type"), f"is required (one of {', '.join(self.names())})")
        try:
            config_cls, _ = self.get(str(data["type"]))
        except KeyError as error:
            raise ConfigError(join(path, "type"), str(error.args[0])) from None
        return parse(config_cls, data, path, ignore=frozenset({"type"}))
