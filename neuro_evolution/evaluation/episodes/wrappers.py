"""``environment.wrappers``: Gymnasium wrappers named in JSON, checked at start-up, applied in turn.

An entry is ``{"name": NAME, "kwargs": {...}}`` (or just ``"NAME"``), where NAME is a class of
``gymnasium.wrappers`` (``FlattenObservation``, ``ClipAction``, ``RescaleAction``, ``TimeLimit``,
...), one of the project's own wrappers by its short name (:data:`PROJECT_WRAPPERS`:
``RewardOffset``, ``ObservationIndices``, ``ObservationNoise``, ``FramesAsChannels``), or
``module:Class``. Every process that makes the env -- the main process, each mp or Dask worker,
every sub-env of the vectorized handler, replay -- applies the same list, so results stay
identical across handlers (see ``docs/environments.md``). A wrapper that needs an optional extra
(:data:`WRAPPER_EXTRAS`: ``AtariPreprocessing`` needs opencv) is one line naming the extra.

A wrapper's keyword arguments are checked against its signature when the config is read, and by
its ``check_kwargs(**kwargs)`` classmethod if it has one (checks that need no env); a
:class:`WrapperArgumentError` it raises then, or while wrapping the env at start-up, is a one-line
ConfigError on the field it names, e.g. ``environment.wrappers[i].kwargs.<argument>``.

Refused, with the fix in the message: wrappers that take a Python function (JSON cannot hold
one; :class:`RewardOffset` is the JSON form of a reward offset), and wrappers whose running
statistics carry over from episode to episode inside one worker (fitness would depend on which
worker evaluated what, in which order).
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import math
from typing import Any, SupportsFloat

import gymnasium as gym
import gymnasium.wrappers

from neuro_evolution.core.importing import describe_exception, load_object
from neuro_evolution.core.schema import (
    ConfigBase,
    ConfigError,
    config_class,
    did_you_mean,
    option,
    parse,
    register_polymorphic,
)
from neuro_evolution.support.frozen import FrozenDict

REWARD_OFFSET = "neuro_evolution.evaluation.episodes.wrappers:RewardOffset"
_OBSERVATION_WRAPPERS = "neuro_evolution.evaluation.episodes.observation_wrappers"
# The project's wrappers, named in a config by the short name or the full module:Class alike.
PROJECT_WRAPPERS: dict[str, str] = {
    "RewardOffset": REWARD_OFFSET,
    "ObservationIndices": f"{_OBSERVATION_WRAPPERS}:ObservationIndices",
    "ObservationNoise": f"{_OBSERVATION_WRAPPERS}:ObservationNoise",
    "FramesAsChannels": f"{_OBSERVATION_WRAPPERS}:FramesAsChannels",
}

# Gymnasium wrappers that need a module of an optional extra -> (module, package, extra).
WRAPPER_EXTRAS: dict[str, tuple[str, str, str]] = {
    "AtariPreprocessing": ("cv2", "opencv-python-headless", "atari"),
}

_OWN_WRAPPER_HINT = "write a gymnasium.Wrapper subclass and name it as module:Class"
_STATEFUL_HINT = (
    "updates running statistics on every step inside each worker's env, so fitness would depend "
    "on which worker ran which genome in what order (handlers, resume and replay would disagree)"
)
REFUSED: dict[str, str] = {
    "TransformReward": (
        "takes a Python function, which JSON cannot hold; for a reward offset use "
        f'{{"name": "{REWARD_OFFSET}", "kwargs": {{"offset": -1.0}}}}, otherwise '
        + _OWN_WRAPPER_HINT
    ),
    "TransformObservation": f"takes a Python function, which JSON cannot hold; {_OWN_WRAPPER_HINT}",
    "TransformAction": f"takes a Python function, which JSON cannot hold; {_OWN_WRAPPER_HINT}",
    "NormalizeObservation": (
        f"{_STATEFUL_HINT}; use the project's observation normalization instead (statistics "
        "merged in submission order and frozen per generation, see docs/environments.md)"
    ),
    "NormalizeReward": f"{_STATEFUL_HINT}; rank-based fitness shaping makes it unnecessary",
}


class WrapperArgumentError(ValueError):
    """A wrapper's arguments do not fit; ``field`` says where, relative to the wrapper's entry:
    ``"kwargs.keep"`` (one argument), ``"kwargs"`` (how they combine), ``""`` (the wrapper as a
    whole, e.g. for this env's spaces)."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(message)

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return (type(self), (self.field, self.message))

    def config_error(self, path: str) -> ConfigError:
        """The one-line ConfigError of this error for the wrapper entry at ``path``."""
        return ConfigError(f"{path}.{self.field}" if self.field else path, self.message)


class RewardOffset(gym.RewardWrapper, gym.utils.RecordConstructorArgs):
    """Adds ``offset`` to every reward: ``TransformReward(env, lambda r: r + offset)`` in a form a
    JSON config can name (e.g. a locomotion task's ``decrease_rewards_by``, with a negative
    offset)."""

    def __init__(self, env: gym.Env, offset: float):
        if isinstance(offset, bool) or not isinstance(offset, int | float):
            raise TypeError(f"offset must be a number, got {offset!r}")
        if not math.isfinite(offset):
            raise ValueError(f"offset must be finite, got {offset!r}")
        gym.utils.RecordConstructorArgs.__init__(self, offset=offset)
        gym.RewardWrapper.__init__(self, env)
        self.offset = float(offset)

    def reward(self, reward: SupportsFloat) -> float:
        """The env's reward plus the offset."""
        return float(reward) + self.offset


def gymnasium_wrapper_names() -> list[str]:
    """The names ``gymnasium.wrappers`` exports, its ``vector`` submodule aside (some load lazily:
    those needing jax or torch are only imported when named)."""
    return [name for name in gymnasium.wrappers.__all__ if name != "vector"]


def resolve_wrapper(name: str, path: str) -> type[gym.Wrapper]:
    """The wrapper class ``name`` stands for; a one-line ConfigError (on ``path``) if none."""
    if name in PROJECT_WRAPPERS:
        wrapper = load_object(PROJECT_WRAPPERS[name], path, REWARD_OFFSET)
    elif ":" in name:
        wrapper = load_object(name, path, REWARD_OFFSET)
    else:
        if name in REFUSED:
            raise ConfigError(path, f"{name} is not supported: it {REFUSED[name]}")
        known = gymnasium_wrapper_names()
        if name not in known:
            hint = did_you_mean(name, [*known, *PROJECT_WRAPPERS])
            raise ConfigError(
                path,
                f"unknown Gymnasium wrapper {name!r}.{hint} Name a class of gymnasium.wrappers, "
                f"one of the project's ({', '.join(PROJECT_WRAPPERS)}) or your own as "
                "module:Class",
            )
        try:
            wrapper = getattr(gymnasium.wrappers, name)
        except Exception as error:  # a lazily loaded wrapper whose dependency is missing
            raise ConfigError(
                path, f"{name} cannot be loaded: {describe_exception(error)}"
            ) from None
    if not (isinstance(wrapper, type) and issubclass(wrapper, gym.Wrapper)):
        raise ConfigError(path, f"{name!r} is not a gymnasium.Wrapper subclass")
    return wrapper


def check_arguments(target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], path: str) -> None:
    """ConfigError on ``path`` if ``target(*args, **kwargs)`` would not bind to its signature."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # no inspectable signature: the dry run will tell
        return
    parameters = signature.parameters
    names = [
        name
        for name, p in list(parameters.items())[len(args) :]
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    takes = f"{getattr(target, '__name__', target)} takes: {', '.join(names) or 'nothing'}"
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        for key in kwargs:
            if key not in names:
                raise ConfigError(
                    path,
                    f"got an unexpected keyword argument {key!r} ({takes})."
                    + did_you_mean(key, names),
                )
    try:
        signature.bind(*args, **kwargs)
    except TypeError as error:
        raise ConfigError(path, f"{error} ({takes})") from None


@config_class
class WrapperConfig(ConfigBase):
    """One entry of ``environment.wrappers`` (a plain string is short for ``{"name": ...}``)."""

    name: str = option(
        doc="a class of gymnasium.wrappers (e.g. FlattenObservation) or module:Class"
    )
    kwargs: dict = option(FrozenDict(), doc="keyword arguments of the wrapper besides the env")

    def validate(self, path: str) -> None:
        wrapper = resolve_wrapper(self.name, f"{path}.name")
        if self.name in WRAPPER_EXTRAS:
            module, package, extra = WRAPPER_EXTRAS[self.name]
            if importlib.util.find_spec(module) is None:
                raise ConfigError(
                    f"{path}.name",
                    f"{self.name} needs the optional {extra!r} extra ({package}: no module named "
                    f"{module!r}): pip install 'neuro_evolution[{extra}]'",
                )
        check_arguments(wrapper, (None,), dict(self.kwargs), f"{path}.kwargs")
        check_kwargs = getattr(wrapper, "check_kwargs", None)  # what needs no env, checked now
        if callable(check_kwargs):
            try:
                check_kwargs(**dict(self.kwargs))
            except WrapperArgumentError as error:
                raise error.config_error(path) from None

    def apply(self, env: gym.Env, path: str) -> gym.Env:
        """``env`` wrapped; a wrapper that cannot wrap this env is a ConfigError on ``path``."""
        wrapper = resolve_wrapper(self.name, f"{path}.name")
        try:  # a deep copy: no two envs share a mutable JSON value (a list) handed to a wrapper
            return wrapper(env, **copy.deepcopy(dict(self.kwargs)))
        except WrapperArgumentError as error:
            raise error.config_error(path) from None
        except Exception as error:
            if self.name == "AtariPreprocessing" and "frame-skipping" in str(error):
                raise ConfigError(
                    f"{path}.kwargs.frame_skip",
                    "AtariPreprocessing skips frames itself, and the env skips frames too (ALE "
                    'v5 ids skip 4): make the env with environment.kwargs {"frameskip": 1}',
                ) from None
            raise ConfigError(
                path, f"{self.name} cannot wrap this env: {describe_exception(error)}"
            ) from error


def _parse_wrapper(value: Any, path: str) -> WrapperConfig:
    return parse(WrapperConfig, {"name": value} if isinstance(value, str) else value, path)


register_polymorphic(WrapperConfig, _parse_wrapper)
