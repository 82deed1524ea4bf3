"""Importing what a config names (``imports``, ``module:EnvId``, ``module:Class``) with errors a
person can act on: one line naming the config field, the module and what went wrong in it.
"""

from __future__ import annotations

import importlib
import traceback
from types import ModuleType
from typing import Any

from neuro_evolution.core.schema import ConfigError, did_you_mean


def describe_exception(error: BaseException) -> str:
    """``Type: first line of the message (file.py:LINE)`` -- where the error was raised."""
    lines = str(error).splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    frames = traceback.extract_tb(error.__traceback__)
    if frames and not isinstance(error, ModuleNotFoundError):
        text += f" ({frames[-1].filename}:{frames[-1].lineno})"
    return text


# Modules of this package that moved, old name -> new name (below ``neuro_evolution.``): a
# config saved in an older run directory, naming ``measure_functions:lunar_lander_fuel`` or
# ``evaluation.wrappers:RewardOffset`` of the package, still loads.
MOVED_MODULES = {
    "measure_functions": "measures.functions",
    "evaluation.environment": "evaluation.episodes.environment",
    "evaluation.episode": "evaluation.episodes.runner",
    "evaluation.handlers.base": "evaluation.pools.base",
    "evaluation.handlers.dask": "evaluation.pools.dask_handler",
    "evaluation.handlers.dask_plugin": "evaluation.pools.dask_plugin",
    "evaluation.handlers.dask_pool": "evaluation.pools.dask_pool",
    "evaluation.handlers.dask_recovery": "evaluation.pools.dask_recovery",
    "evaluation.handlers.dask_security": "evaluation.pools.dask_security",
    "evaluation.handlers.factory": "evaluation.pools.factory",
    "evaluation.handlers.in_process": "evaluation.pools.in_process",
    "evaluation.handlers.jax": "evaluation.jax.handler",
    "evaluation.handlers.multiprocessing": "evaluation.pools.process_pool",
    "evaluation.handlers.options": "evaluation.pools.options",
    "evaluation.handlers.orphans": "evaluation.pools.parent_watchdog",
    "evaluation.handlers.pool": "evaluation.pools.run_pool",
    "evaluation.handlers.pool_handler": "evaluation.pools.pool_handler",
    "evaluation.handlers.sequential": "evaluation.pools.sequential",
    "evaluation.handlers.vectorized": "evaluation.lockstep.handler",
    "evaluation.handlers.worker": "evaluation.pools.worker",
    "evaluation.history": "evaluation.episodes.history",
    "evaluation.jax_envs": "evaluation.jax.envs",
    "evaluation.jax_lockstep": "evaluation.jax.lockstep",
    "evaluation.lane_memory": "evaluation.lockstep.lane_memory",
    "evaluation.lockstep_env": "evaluation.lockstep.base",
    "evaluation.observation_wrappers": "evaluation.episodes.observation_wrappers",
    "evaluation.trace": "evaluation.episodes.trace",
    "evaluation.validation": "evaluation.episodes.validation",
    "evaluation.vector_env": "evaluation.lockstep.vector_env",
    "evaluation.wave_check": "evaluation.lockstep.wave_check",
    "evaluation.wrappers": "evaluation.episodes.wrappers",
}


def import_module(name: str, path: str) -> ModuleType:
    """Import ``name`` (a moved module by its new name); any failure (not found, or an error
    raised while it runs) is a one-line :class:`ConfigError` on ``path``."""
    package, _, inner = name.partition(".")
    if package == "neuro_evolution" and inner in MOVED_MODULES:
        name = f"{package}.{MOVED_MODULES[inner]}"
    try:
        return importlib.import_module(name)
    except Exception as error:
        found = getattr(error, "name", None)
        if isinstance(error, ModuleNotFoundError) and found and name.startswith(found):
            reason = f"no module named {found!r} (is it installed, or on PYTHONPATH?)"
        else:
            reason = describe_exception(error)
        raise ConfigError(path, f"cannot import module {name!r}: {reason}") from None


def split_reference(reference: str, path: str, example: str) -> tuple[str, str]:
    """``"module:Name"`` -> ``("module", "Name")``; ConfigError unless it has exactly that form."""
    module, _, attribute = reference.partition(":")
    if not module or not attribute or ":" in attribute:
        raise ConfigError(
            path, f"must have the form module:Name (e.g. {example}), got {reference!r}"
        )
    return module, attribute


def load_object(reference: str, path: str, example: str) -> Any:
    """The object ``Name`` of ``"module:Name"``, the module imported first."""
    module_name, attribute = split_reference(reference, path, example)
    module = import_module(module_name, path)
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            public = [n for n in dir(module) if not n.startswith("_")]
            raise ConfigError(
                path,
                f"module {module_name!r} has no {attribute!r}.{did_you_mean(attribute, public)}",
            )
        target = getattr(target, part)
    return target


def import_extra(name: str, extra: str, path: str) -> ModuleType:
    """Import ``name`` of the optional extra ``extra``; when it is not installed, a one-line
    :class:`ConfigError` on ``path`` saying which extra to install."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ConfigError(
            path,
            f"needs the optional {extra!r} extra ({describe_exception(error)}): "
            f"pip install 'neuro_evolution[{extra}]'",
        ) from None
