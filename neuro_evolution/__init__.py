"""neuro_evolution: evolve small recurrent networks with evolution strategies on Gymnasium.

The front door: everything a script or a new component needs, importable from here::

    from neuro_evolution import Experiment, load_config

    experiment = Experiment(load_config("configs/cartpole.json"))
    summary = experiment.run()

The names load on first use (PEP 562), so ``import neuro_evolution`` stays cheap for worker
processes and imports no optional stack. ``docs/architecture.md`` draws where each lives.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from neuro_evolution.support.console import ignore_known_noise

__version__ = "0.1.0"

ignore_known_noise()  # third-party warnings no user can act on (see console.KNOWN_NOISE)

# public name -> the module that defines it
_EXPORTS = {
    # running experiments
    "Experiment": "neuro_evolution.run.experiment",
    "ExperimentConfig": "neuro_evolution.config.tree",
    "load_config": "neuro_evolution.config.tree",
    "parse_config": "neuro_evolution.config.tree",
    "resume_experiment": "neuro_evolution.run.resume",
    # writing and registering components
    "Brain": "neuro_evolution.brains.base",
    "BatchBrain": "neuro_evolution.brains.base",
    "BrainConfig": "neuro_evolution.brains.base",
    "BrainTemplate": "neuro_evolution.brains.base",
    "register_brain": "neuro_evolution.brains.base",
    "register_handler": "neuro_evolution.evaluation.handlers.options",
    "config_class": "neuro_evolution.config.schema",
    "option": "neuro_evolution.config.schema",
    "frozen_dataclass": "neuro_evolution.support.frozen",
    # errors a caller may catch
    "ConfigError": "neuro_evolution.support.errors",
    "UserError": "neuro_evolution.support.errors",
}

__all__ = [
    "BatchBrain",
    "Brain",
    "BrainConfig",
    "BrainTemplate",
    "ConfigError",
    "Experiment",
    "ExperimentConfig",
    "UserError",
    "__version__",
    "config_class",
    "frozen_dataclass",
    "load_config",
    "option",
    "parse_config",
    "register_brain",
    "register_handler",
    "resume_experiment",
]

if TYPE_CHECKING:
    from neuro_evolution.brains.base import (
        BatchBrain,
        Brain,
        BrainConfig,
        BrainTemplate,
        register_brain,
    )
    from neuro_evolution.config.schema import config_class, option
    from neuro_evolution.config.tree import ExperimentConfig, load_config, parse_config
    from neuro_evolution.evaluation.handlers.options import register_handler
    from neuro_evolution.run.experiment import Experiment
    from neuro_evolution.run.resume import resume_experiment
    from neuro_evolution.support.errors import ConfigError, UserError
    from neuro_evolution.support.frozen import frozen_dataclass


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'neuro_evolution' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
