"""The config's ``pbt`` section: how many runs, how often they exploit, what they explore.

A PBT config is an ordinary experiment config with one more top-level key, ``pbt``; the rest of
the file is the experiment every run trains. ``number_generations`` is the length of every run,
cut into intervals of ``pbt.interval`` generations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neuro_evolution.config.tree import ExperimentConfig, parse_config
from neuro_evolution.core.schema import ConfigBase, config_class, option, parse
from neuro_evolution.support.errors import ConfigError
from neuro_evolution.sweep.grid import read_config_data

SECTION = "pbt"


@config_class
class PbtConfig(ConfigBase):
    """The ``pbt`` section of a PBT config."""

    interval: int = option(
        doc="generations between exploit steps; a multiple of validation.every_generations",
        ge=1,
    )
    explore: dict[str, Any] = option(
        doc='dotted config key -> {"range": [low, high]} (a float, perturbed by a factor; '
        '"log": true draws the start value log-uniformly) or {"values": [...]} (resampled)'
    )
    runs: int = option(4, doc="runs in the population (--runs overrides)", ge=2)
    quantile: float = option(
        0.25,
        doc="share of runs in the bottom (they copy) and the top (they are copied), in (0, 0.5]",
        gt=0,
        le=0.5,
    )
    perturb_factors: tuple[float, ...] = option(
        (0.8, 1.2), doc="a range setting is multiplied by one of these, drawn uniformly", gt=0
    )
    seed: int = option(0, doc="seed of the PBT's own draws (start values, donors, explore)", ge=0)

    def validate(self, path: str) -> None:
        if not self.perturb_factors:
            raise ConfigError(
                f"{path}.perturb_factors", "give at least one factor, e.g. [0.8, 1.2]"
            )
        if not self.explore:
            raise ConfigError(
                f"{path}.explore", 'name at least one setting, e.g. {"optimizer.sigma": ...}'
            )


def split_pbt_data(data: dict[str, Any], path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(experiment data, pbt section data) of a PBT config file's JSON object."""
    if SECTION not in data:
        raise ConfigError(
            SECTION,
            f"{path} has no pbt section; add one (interval, explore, ...: docs/guide/pbt.md)",
        )
    experiment = {key: value for key, value in data.items() if key != SECTION}
    return experiment, data[SECTION]


def parse_pbt_section(data: Any, runs: int | None = None) -> PbtConfig:
    """The validated ``pbt`` section (``runs``: the --runs override)."""
    if isinstance(data, dict) and runs is not None:
        data = {**data, "runs": runs}
    return parse(PbtConfig, data, SECTION)


def load_pbt_config(path: str | Path) -> tuple[ExperimentConfig, PbtConfig]:
    """The experiment and the ``pbt`` section of a PBT config file (one-line ConfigErrors)."""
    experiment, section = split_pbt_data(read_config_data(Path(path)), Path(path))
    return parse_config(experiment), parse_pbt_section(section)


def section_data(config: PbtConfig) -> dict[str, Any]:
    """The resolved section as JSON-ready data (keys of ``explore`` in the file's order)."""
    return {
        "interval": config.interval,
        "explore": json.loads(json.dumps(dict(config.explore))),
        "runs": config.runs,
        "quantile": config.quantile,
        "perturb_factors": list(config.perturb_factors),
        "seed": config.seed,
    }
