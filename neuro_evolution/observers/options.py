"""The ``observers`` config section: a list of the observers that mirror each generation's log
row, each entry ``{"type": NAME, ...options}``.

An entry's ``type`` names a registered observer (:mod:`.registry`: the built-in tensorboard and
mlflow, or a user's, registered from a module in the config's ``imports``); its other keys are
that observer's options, the fields of the config class it was registered with (a subclass of
:class:`ObserverConfig`). A type appears at most once. Observers only read what a run logs, so
they never change its results; the section is left out of the run's config hash (see
:mod:`neuro_evolution.run.status`), so a resume may add, change or drop observers. A package an
observer needs is checked when the config is read: its absence is a one-line error naming the
entry and the extra to install.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from typing import Any, ClassVar

from neuro_evolution.core.schema import (
    ConfigBase,
    config_class,
    join,
    option,
    register_polymorphic,
)
from neuro_evolution.observers.registry import OBSERVERS
from neuro_evolution.support.errors import ConfigError

SECTION = "observers"


@config_class
class ObserverConfig(ConfigBase):
    """Base of every observer's options; the entry's ``type`` picks the class."""

    # (module that must be importable, pip extra that installs it); None: nothing extra
    REQUIRES: ClassVar[tuple[str, str] | None] = None

    def type_name(self) -> str:
        """The registered name of this config's observer."""
        return OBSERVERS.name_of(type(self))

    def validate(self, path: str) -> None:
        if self.REQUIRES is None:
            return
        module, extra = self.REQUIRES
        if importlib.util.find_spec(module) is None:
            raise ConfigError(
                path,
                f"{self.type_name()} needs the {module} package, which is not installed: "
                f'pip install -e ".[{extra}]" (or remove this entry)',
            )


@config_class
class TensorBoardConfig(ObserverConfig):
    """TensorBoard event files in the run directory (``tensorboard --logdir RUN_OR_SWEEP_DIR``)."""

    REQUIRES = ("tensorboard", "tensorboard")
    directory: str = option("tensorboard", doc="folder of the event files, in the run directory")


@config_class
class MlflowConfig(ObserverConfig):
    """One MLflow run per experiment: params, per-generation metrics, files as artifacts."""

    REQUIRES = ("mlflow", "mlflow")
    tracking_uri: str | None = option(
        None,
        doc="MLflow tracking URI (http://..., sqlite:///..., a folder); null: a local file store "
        "`mlruns` in the working directory",
    )
    experiment: str = option("neuro_evolution", doc="MLflow experiment the runs are logged to")
    artifacts: bool = option(
        True, doc="upload the run directory's files (not checkpoints) when the run ends or stops"
    )


class ObserverList(tuple[ObserverConfig, ...]):
    """The ``observers`` section: the observers' options, in the order they were listed."""

    __slots__ = ()


def list_form(data: Mapping[str, Any]) -> str:
    """The list form of an object-form section (``{"tensorboard": {...}}``; null entries are
    off), for the error that refuses it."""
    entries = [
        {"type": name, **(options if isinstance(options, Mapping) else {})}
        for name, options in data.items()
        if options is not None
    ]
    return json.dumps(entries)


def stored_observers(section: Any) -> Any:
    """A run directory's stored ``observers`` in the list form: a run written before the list
    form stored an object ``{"tensorboard": options or null, "mlflow": ...}``, whose set entries
    become the list in that order (anything else is returned as it is)."""
    if not isinstance(section, Mapping):
        return section
    return [{"type": name, **options} for name, options in section.items() if options is not None]


def check_config_class(entry: Any, where: str) -> None:
    """A ConfigError unless the observer an entry names was registered with an
    :class:`ObserverConfig` subclass (its ``type`` is what the resolved config writes back)."""
    if not isinstance(entry, Mapping) or "type" not in entry:
        return  # the registry's parse names what is missing
    try:
        config_cls, _ = OBSERVERS.get(str(entry["type"]))
    except KeyError:
        return  # the registry's parse lists the known observers
    if not (isinstance(config_cls, type) and issubclass(config_cls, ObserverConfig)):
        raise ConfigError(
            join(where, "type"),
            f"observer {entry['type']!r} is registered with config={config_cls!r}; register it "
            "with a subclass of neuro_evolution.observers.options.ObserverConfig",
        )


def parse_observers(data: Any, path: str) -> ObserverList:
    """The section from its JSON list; the object form is refused showing the list it means."""
    if isinstance(data, Mapping):
        raise ConfigError(
            path,
            'must be a list of {"type": NAME, ...options} entries, not an object: write '
            f"{list_form(data)}",
        )
    if not isinstance(data, list | tuple):
        raise ConfigError(
            path,
            'must be a list of {"type": NAME, ...options} entries, e.g. [{"type": "tensorboard"}], '
            f"got {data!r}",
        )
    entries: list[ObserverConfig] = []
    for index, entry in enumerate(data):
        where = f"{path}[{index}]"
        check_config_class(entry, where)
        parsed = OBSERVERS.parse_config(entry, where)
        for earlier, known in enumerate(entries):
            if type(known) is type(parsed):
                raise ConfigError(
                    join(where, "type"),
                    f"{parsed.type_name()!r} is listed already (entry {earlier}); list each "
                    "observer once",
                )
        entries.append(parsed)
    return ObserverList(entries)


register_polymorphic(ObserverList, parse_observers)
