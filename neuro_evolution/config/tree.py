"""The experiment config: a JSON file becomes a frozen, validated tree of config classes.

Every section is a config class with documented defaults (see ``docs/config.md``, which a test
checks against these classes). Errors are :class:`ConfigError`s whose one-line message starts
with the field path, e.g. ``brain.number_neurons: must be an integer >= 1, got -3``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from neuro_evolution.brains.base import BrainConfig
from neuro_evolution.core.importing import import_module
from neuro_evolution.core.normalization import ObservationNormalizationConfig
from neuro_evolution.core.schema import (
    ConfigBase,
    ConfigError,
    config_class,
    option,
    parse,
    to_dict,
)
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig
from neuro_evolution.evaluation.episodes.validation import ValidationConfig
from neuro_evolution.evaluation.pools.options import EvaluationConfig
from neuro_evolution.observers.options import ObserverList, stored_observers
from neuro_evolution.optimizers.base import OptimizerConfig
from neuro_evolution.optimizers.novelty import NoveltyConfig


@config_class
class CheckpointConfig(ConfigBase):
    """When checkpoints are written."""

    every_generations: int = option(10, doc="write a checkpoint every N generations", ge=1)
    keep: int = option(3, doc="how many of the newest checkpoints to keep", ge=1)


@config_class
class ExperimentConfig(ConfigBase):
    """A whole experiment."""

    environment: EnvironmentConfig = option(doc="the Gymnasium environment")
    random_seed: int = option(0, doc="seed of every random choice of the run", ge=0, lt=2**32)
    number_generations: int = option(doc="generations to run", ge=1)
    max_env_steps: int | None = option(
        None,
        doc="training env-step budget: the run ends (validated) after the generation whose "
        "training env steps reach it, or at number_generations if that comes first; null: "
        "number_generations alone",
        ge=1,
    )
    max_evaluations: int | None = option(
        None,
        doc="training evaluation budget (genomes scored, each over number_fitness_runs "
        "episodes; validation not counted): the run ends (validated) after the generation whose "
        "evaluations reach it, or at number_generations or max_env_steps if that comes first; "
        "null: no such budget",
        ge=1,
    )
    optimizer: OptimizerConfig = option(
        doc="evolution strategy: {type: a registered optimizer, ...} (sections below)"
    )
    brain: BrainConfig = option(doc="network: {type: CTRNN | FFNN | LSTM | registered, ...}")
    episode_runner: EpisodeRunnerConfig = option(EpisodeRunnerConfig(), doc="episode options")
    evaluation: EvaluationConfig = option(EvaluationConfig(), doc="evaluation handler")
    checkpoint: CheckpointConfig = option(CheckpointConfig(), doc="checkpoint options")
    novelty: NoveltyConfig | None = option(
        None, doc="novelty search options; null or absent: select on fitness alone"
    )
    observation_normalization: ObservationNormalizationConfig | None = option(
        None,
        doc="running mean/std normalization of observations, frozen per generation "
        "(identical across handlers); null or absent: brains see raw observations",
    )
    validation: ValidationConfig | None = option(
        ValidationConfig(),
        doc="held-out validation of the genome the run stands behind (the one meaning of "
        "'solved'); null: none",
    )
    observers: ObserverList = option(
        ObserverList(),
        doc='list of observers mirroring each generation\'s log row, each {"type": a registered '
        "observer (tensorboard, mlflow, ...), ...its options} (never changes results)",
    )
    hall_of_fame_size: int = option(10, doc="best genomes kept across generations", ge=1)
    imports: tuple[str, ...] = option(
        (),
        doc="modules imported before the config is read (and by every worker), e.g. to register "
        "a brain type or an env id",
    )


def parse_config(data: Any) -> ExperimentConfig:
    """Validate a JSON-like dict into an :class:`ExperimentConfig`."""
    if isinstance(data, dict) and "pbt" in data:
        raise ConfigError(
            "pbt",
            "a population-based training section: run this config with python -m "
            "neuro_evolution.pbt CONFIG (train and sweep read configs without one)",
        )
    if isinstance(data, dict):
        for index, module in enumerate(data.get("imports", ()) or ()):
            import_module(str(module), f"imports[{index}]")
    return parse(ExperimentConfig, data)


def parse_run_config(data: Any) -> ExperimentConfig:
    """A run directory's stored ``config.json``, validated as :func:`parse_config` does, with a
    section stored in an earlier form read in its current one (the ``observers`` object of a run
    written before the list form, see :func:`~neuro_evolution.observers.options.stored_observers`).
    A config a person writes goes through :func:`parse_config`, which refuses the old form."""
    if isinstance(data, dict) and "observers" in data:
        data = {**data, "observers": stored_observers(data["observers"])}
    return parse_config(data)


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and validate a config file; every problem is a one-line :class:`ConfigError`."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError("", f"{path}: no such config file") from None
    except OSError as error:
        raise ConfigError("", f"{path}: cannot read the config file ({error.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            "", f"{path}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    return parse_config(data)


def config_to_dict(config: ExperimentConfig) -> dict[str, Any]:
    """The resolved config (every default filled in) as JSON-ready data."""
    return to_dict(config)


def config_hash(config: ExperimentConfig, ignore: tuple[str, ...] = ()) -> str:
    """SHA-256 of the resolved config without the top-level keys in ``ignore``."""
    return data_hash(config_to_dict(config), ignore)


def data_hash(data: dict[str, Any], ignore: tuple[str, ...] = ()) -> str:
    """SHA-256 of config data as stored (a resolved config written by any release) without the
    top-level keys in ``ignore``."""
    kept = {k: v for k, v in data.items() if k not in ignore}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()
