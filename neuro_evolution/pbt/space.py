"""The settings a PBT explores: each a dotted config key with a range or a list of values.

- ``{"range": [low, high]}``: a float setting. A run starts at a value drawn uniformly from the
  range (log-uniformly with ``"log": true``); explore multiplies the donor's value by one of
  ``pbt.perturb_factors`` (the paper's 0.8 / 1.2) and clips it into the range.
- ``{"values": [...]}``: any setting (an integer such as a population size, a string, a list).
  A run starts at a value drawn uniformly from the list; explore draws again from the list.

Every draw comes from the PBT's own generator (seeded by ``pbt.seed``, saved in its state), in a
fixed order, so a PBT is deterministic. A key must name a setting the resolved config holds, and
every value it can take (each listed value, both ends of a range) is validated with the whole
config at start-up.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import did_you_mean, flatten
from neuro_evolution.support.errors import ConfigError
from neuro_evolution.sweep.grid import set_dotted

# Sections whose settings are the same for every run of a PBT, or that define its score.
FIXED = {
    "random_seed": "each run's seed is the config's random_seed + its index",
    "number_generations": "it is the length of every run",
    "max_env_steps": "every run trains number_generations",
    "max_evaluations": "every run trains number_generations",
    "evaluation": "every run shares one pool",
    "checkpoint": "it does not change results",
    "observers": "it does not change results",
    "validation": "validation is the score runs are ranked by",
    "imports": "every run imports the same modules",
}
SPEC_KEYS = {"range", "values", "log"}


@dataclasses.dataclass(frozen=True)
class ExploredSetting:
    """One explored setting: its dotted key and either a float range or a list of values."""

    key: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    values: tuple[Any, ...] = ()

    @property
    def is_range(self) -> bool:
        return self.low is not None

    def candidates(self) -> list[Any]:
        """The values start-up validates: both ends of a range, or every listed value."""
        return [self.low, self.high] if self.is_range else list(self.values)

    def draw(self, rng: np.random.Generator) -> Any:
        """A start value."""
        if not self.is_range:
            return copy.deepcopy(self.values[int(rng.integers(len(self.values)))])
        assert self.low is not None and self.high is not None
        if self.log:
            return float(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))
        return float(rng.uniform(self.low, self.high))

    def explore(self, value: Any, rng: np.random.Generator, factors: tuple[float, ...]) -> Any:
        """The explored value of a copied run whose donor holds ``value``."""
        if not self.is_range:
            return self.draw(rng)
        assert self.low is not None and self.high is not None
        factor = factors[int(rng.integers(len(factors)))]
        return float(min(self.high, max(self.low, float(value) * factor)))


def spec_error(key: str, message: str) -> ConfigError:
    return ConfigError(f"pbt.explore.{key}", message)


def check_key(key: str, settings: Mapping[str, Any]) -> None:
    """Refuse a key the config does not hold, a section, or a setting every run shares."""
    section = key.split(".")[0]
    if section in FIXED:
        raise spec_error(key, f"cannot be explored: {FIXED[section]}")
    if key not in settings:
        prefix = key + "."
        if any(name.startswith(prefix) for name in settings):
            raise spec_error(key, "is a section; name one setting in it")
        raise spec_error(
            key,
            "the config has no such setting (an env kwarg must be given in "
            f"environment.kwargs first).{did_you_mean(key, settings)}",
        )


def parse_range(key: str, spec: Mapping[str, Any], current: Any) -> ExploredSetting:
    """A ``{"range": [low, high], "log": bool}`` spec of a float setting."""
    bounds = spec["range"]
    numbers = isinstance(bounds, list) and all(
        isinstance(b, int | float) and not isinstance(b, bool) for b in bounds
    )
    if not numbers or len(bounds) != 2:
        raise spec_error(key, f"range must be [low, high], two numbers, got {bounds!r}")
    low, high = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
        raise spec_error(key, f"range must have low < high, got [{bounds[0]}, {bounds[1]}]")
    if not (isinstance(current, float) or current is None):
        raise spec_error(
            key,
            f"holds {json.dumps(current)}, not a float; explore it with a list: "
            '{"values": [...]}',
        )
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise spec_error(key, f"log must be true or false, got {log!r}")
    if log and low <= 0:
        raise spec_error(key, f"a log range needs low > 0, got {bounds[0]}")
    return ExploredSetting(key, low=low, high=high, log=log)


def parse_values(key: str, spec: Mapping[str, Any]) -> ExploredSetting:
    """A ``{"values": [...]}`` spec."""
    values = spec["values"]
    if not isinstance(values, list) or not values:
        raise spec_error(key, f"values must be a non-empty list, got {values!r}")
    texts = [json.dumps(value, sort_keys=True) for value in values]
    if len(set(texts)) != len(texts):
        raise spec_error(key, "a value is listed twice")
    if "log" in spec:
        raise spec_error(key, "log goes with a range, not with values")
    return ExploredSetting(key, values=tuple(values))


def parse_setting(key: str, spec: Any, settings: Mapping[str, Any]) -> ExploredSetting:
    """One entry of ``pbt.explore``, checked against the resolved config's ``settings``."""
    check_key(key, settings)
    if not isinstance(spec, Mapping):
        raise spec_error(
            key, f'must be {{"range": [low, high]}} or {{"values": [...]}}, got {spec!r}'
        )
    unknown = sorted(set(spec) - SPEC_KEYS)
    if unknown:
        raise spec_error(key, f"unknown key {unknown[0]!r} (known: log, range, values)")
    if ("range" in spec) == ("values" in spec):
        raise spec_error(key, 'give exactly one of "range": [low, high] or "values": [...]')
    if "range" in spec:
        return parse_range(key, spec, settings[key])
    return parse_values(key, spec)


def with_values(data: dict[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of config ``data`` with each dotted key of ``values`` set."""
    run = copy.deepcopy(data)
    for key, value in values.items():
        set_dotted(run, key, copy.deepcopy(value))
    return run


def check_candidates(setting: ExploredSetting, data: dict[str, Any]) -> None:
    """Validate the whole config with each value ``setting`` can take (one line naming it)."""
    for value in setting.candidates():
        try:
            parse_config(with_values(data, {setting.key: value}))
        except ConfigError as error:
            raise spec_error(
                setting.key, f"the value {json.dumps(value)} is refused: {error}"
            ) from None


def parse_space(explore: Mapping[str, Any], data: dict[str, Any]) -> tuple[ExploredSetting, ...]:
    """Every explored setting of ``pbt.explore``, checked against the resolved config ``data``."""
    settings = flatten(data)
    space = tuple(parse_setting(str(key), spec, settings) for key, spec in explore.items())
    for setting in space:
        check_candidates(setting, data)
    return space


def start_values(space: tuple[ExploredSetting, ...], rng: np.random.Generator) -> dict[str, Any]:
    """One run's start values, drawn in the order of ``space``."""
    return {setting.key: setting.draw(rng) for setting in space}


def explored_values(
    space: tuple[ExploredSetting, ...],
    donor: Mapping[str, Any],
    rng: np.random.Generator,
    factors: tuple[float, ...],
) -> dict[str, Any]:
    """A copied run's values: the donor's ``donor`` values explored, in the order of ``space``."""
    return {s.key: s.explore(donor[s.key], rng, factors) for s in space}


def current_values(space: tuple[ExploredSetting, ...], data: dict[str, Any]) -> dict[str, Any]:
    """The explored settings' values in config ``data``."""
    settings = flatten(data)
    return {setting.key: settings[setting.key] for setting in space}
