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
    "JaxBrain": "neuro_evolution.brains.base",
    "register_brain": "neuro_evolution.brains.base",
    "register_optimizer": "neuro_evolution.optimizers.base",
    "register_handler": "neuro_evolution.evaluation.pools.base",
    "config_class": "neuro_evolution.core.schema",
    "option": "neuro_evolution.core.schema",
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
    "JaxBrain",
    "UserError",
    "__version__",
    "config_class",
    "frozen_dataclass",
    "load_config",
    "option",
    "parse_config",
    "register_brain",
    "register_handler",
    "register_optimizer",
    "resume_experiment",
]

if TYPE_CHECKING:  # the same names for type checkers (``X as X``: an explicit re-export)
    from neuro_evolution.brains.base import BatchBrain as BatchBrain
    from neuro_evolution.brains.base import Brain as Brain
    from neuro_evolution.brains.base import BrainConfig as BrainConfig
    from neuro_evolution.brains.base import BrainTemplate as BrainTemplate
    from neuro_evolution.brains.base import JaxBrain as JaxBrain
    from neuro_evolution.brains.base import register_brain as register_brain
    from neuro_evolution.config.tree import ExperimentConfig as ExperimentConfig
    from neuro_evolution.config.tree import load_config as load_config
    from neuro_evolution.config.tree import parse_config as parse_config
    from neuro_evolution.core.schema import config_class as config_class
    from neuro_evolution.core.schema import option as option
    from neuro_evolution.evaluation.pools.base import register_handler as register_handler
    from neuro_evolution.optimizers.base import register_optimizer as register_optimizer
    from neuro_evolution.run.experiment import Experiment as Experiment
    from neuro_evolution.run.resume import resume_experiment as resume_experiment
    from neuro_evolution.support.errors import ConfigError as ConfigError
    from neuro_evolution.support.errors import UserError as UserError
    from neuro_evolution.support.frozen import frozen_dataclass as frozen_dataclass


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'neuro_evolution' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
