"""The ``environment`` config section and making Gymnasium envs from it.

Three ways to name an env (see ``docs/environments.md``):

- ``id``: a registered id (``CartPole-v1``), an id that a module in the top-level ``imports``
  registers, or ``module:EnvId`` -- the module is imported first, as ``gymnasium.make`` does,
  in every process that makes the env (``ale_py:ALE/Pong-v5``, ``minatar:MinAtar/Breakout-v1``,
  ``popgym:popgym-RepeatPreviousEasy-v0``). A package that registers its ids only through a
  ``gymnasium.envs`` entry point (Gymnasium 1.x no longer runs them; MinAtar 1.0.15 does so)
  has that entry point run too. A module of an optional extra (:data:`MODULE_EXTRAS`) that is
  not installed is a one-line error naming the extra;
- ``entry_point``: ``module:Class`` of an env class (or function) that is not registered at all;

then ``kwargs`` for the env and ``wrappers`` applied in order. Everything a name refers to is
imported and checked when the config is read, so a typo is one line at start-up.

``backend`` says whose env the id names: ``gymnasium`` (the default), or a JAX env stepped whole
on the device by the ``jax`` handler -- ``gymnax`` (classic control, MinAtar) or ``brax``
(locomotion), see :mod:`neuro_evolution.evaluation.jax.envs` and ``docs/jax.md``.
"""

from __future__ import annotations

import copy
import importlib.metadata
from typing import Any, Literal

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, load_env_creator

from neuro_evolution.core.importing import (
    describe_exception,
    import_extra,
    import_module,
    load_object,
    split_reference,
)
from neuro_evolution.core.schema import (
    ConfigBase,
    ConfigError,
    config_class,
    did_you_mean,
    option,
)
from neuro_evolution.evaluation.episodes.history import history_free
from neuro_evolution.evaluation.episodes.wrappers import WrapperConfig, check_arguments
from neuro_evolution.support.console import quiet_mujoco
from neuro_evolution.support.frozen import FrozenDict

# Keyword arguments that gymnasium.make itself takes (not passed to the env constructor).
MAKE_OPTIONS = frozenset({"max_episode_steps", "disable_env_checker"})
PATH = "environment"  # where this section sits in an experiment config
# Top-level modules of module:EnvId ids -> the optional extra of pyproject.toml that installs them.
MODULE_EXTRAS = {"ale_py": "atari", "minatar": "minatar", "popgym": "popgym"}
# Namespaces of ids that a module registers -> that module (for the hint on a bare id).
NAMESPACE_MODULES = {"ALE": "ale_py", "MinAtar": "minatar"}


@config_class
class EnvironmentConfig(ConfigBase):
    """Which Gymnasium environment to evolve brains on (give ``id`` or ``entry_point``)."""

    id: str | None = option(
        None,
        doc="Gymnasium environment id: registered (CartPole-v1), registered by a module in "
        "imports, or module:EnvId (the module is imported first)",
    )
    entry_point: str | None = option(
        None, doc="module:Class of an env that is not registered (instead of id)"
    )
    kwargs: dict = option(
        FrozenDict(),
        doc="keyword arguments of the env (and of gymnasium.make, e.g. max_episode_steps)",
    )
    wrappers: tuple[WrapperConfig, ...] = option(
        (), doc="Gymnasium wrappers applied in order: {name, kwargs} or just a name"
    )
    backend: Literal["gymnasium", "gymnax", "brax"] = option(
        "gymnasium",
        doc="whose env id names: gymnasium, or a JAX env for the jax handler: gymnax (classic "
        "control or MinAtar, e.g. CartPole-v1, Breakout-MinAtar) or brax (locomotion, e.g. "
        "hopper); see docs/jax.md",
    )

    def validate(self, path: str) -> None:
        path = path or PATH
        if self.backend != "gymnasium":
            self._validate_jax(path)
            return
        if (self.id is None) == (self.entry_point is None):
            raise ConfigError(
                path,
                "give exactly one of id (a Gymnasium id such as CartPole-v1, or module:EnvId) "
                "and entry_point (module:Class of an unregistered env)",
            )
        if self.id is not None:
            spec = self.registered_spec(f"{path}.id")
            creator: Any = spec.entry_point  # a callable, or its "module:attr" name
            spec_kwargs = dict(spec.kwargs)
        else:
            creator = self._entry_point(f"{path}.entry_point")
            spec_kwargs = {}
        if isinstance(creator, str):
            try:
                creator = load_env_creator(creator)
            except Exception as error:
                raise ConfigError(
                    f"{path}.id", f"{self.id!r} cannot be loaded: {describe_exception(error)}"
                ) from None
        env_kwargs = {k: v for k, v in self.kwargs.items() if k not in MAKE_OPTIONS}
        check_arguments(creator, (), {**spec_kwargs, **env_kwargs}, f"{path}.kwargs")

    def _validate_jax(self, path: str) -> None:
        if self.id is None or self.entry_point is not None or self.wrappers:
            raise ConfigError(
                f"{path}.backend",
                f"a {self.backend} env is named by id alone (no entry_point, no wrappers: "
                "they are Gymnasium code the device cannot run)",
            )
        self.make_jax_env(path)

    def make_jax_env(self, path: str = PATH) -> Any:
        """The :class:`~neuro_evolution.evaluation.jax.envs.JaxEnv` of a gymnax/brax env."""
        if self.backend == "gymnasium":
            raise ConfigError(
                f"{path}.backend",
                f"{self.label} is a Gymnasium env; the jax handler steps JAX envs: set backend "
                "to 'gymnax' (CartPole-v1, Acrobot-v1, ...) or 'brax' (hopper, ...)",
            )
        jax_envs = import_extra("neuro_evolution.evaluation.jax.envs", "jax", f"{path}.backend")
        return jax_envs.make_jax_env(self.backend, str(self.id), dict(self.kwargs), path)

    @property
    def label(self) -> str:
        """The env's name for messages and titles: its id or its entry point."""
        name = self.id if self.id is not None else str(self.entry_point)
        return name if self.backend == "gymnasium" else f"{name} ({self.backend})"

    def registered_spec(self, path: str = f"{PATH}.id") -> EnvSpec:
        """The registry entry of ``id`` (its module imported first for ``module:EnvId``)."""
        if self.id is None:
            raise ConfigError(path, f"{self.label} is not a registered env (it has no id)")
        module, name = None, self.id
        if ":" in self.id:
            module, name = split_reference(self.id, path, "my_package.envs:MyEnv-v0")
            extra = MODULE_EXTRAS.get(module.partition(".")[0])
            if extra is not None:
                import_extra(module, extra, path)
            else:
                import_module(module, path)
            if name not in gym.registry:
                register_plugin_envs(module)
        if name not in gym.registry:
            where = f" (module {module!r} registers no such id)" if module else ""
            raise ConfigError(
                path,
                f"unknown Gymnasium environment {name!r}{where}.{did_you_mean(name, gym.registry)}"
                f"{_namespace_hint(name) if module is None else ''}"
                " An env registered by your own package: add its module to imports, or write "
                "module:EnvId",
            )
        return gym.registry[name]

    def _entry_point(self, path: str) -> Any:
        creator = load_object(str(self.entry_point), path, "my_package.envs:MyEnv")
        if not callable(creator):
            raise ConfigError(path, f"{self.entry_point!r} is not a class or function")
        return creator

    def make(self, render_mode: str | None = None) -> gym.Env:
        """A new env instance, history-free (:mod:`.history`) and wrapped (the passive env
        checker is off: it costs every step)."""
        if self.backend != "gymnasium":
            if render_mode is not None:
                raise ConfigError(
                    f"{PATH}.backend", f"a {self.backend} env cannot render here ({render_mode})"
                )
            from neuro_evolution.evaluation.jax.envs import JaxGymEnv

            return JaxGymEnv(self.make_jax_env())
        kwargs = copy.deepcopy(dict(self.kwargs))
        if render_mode is not None:
            kwargs["render_mode"] = render_mode
        if self.entry_point is not None:
            creator = self._entry_point(f"{PATH}.entry_point")
            spec = EnvSpec(id=self.entry_point, entry_point=creator)
            env = self._make_with(spec, kwargs)
        else:
            assert self.id is not None  # validate: exactly one of id and entry_point
            if ":" in self.id:  # module:EnvId: registered in this process (a worker's too)
                entry_point = str(self.registered_spec().entry_point)
            else:
                entry_point = _entry_point_of(self.id)
            if "gymnasium.envs.mujoco" in entry_point:
                quiet_mujoco()
            elif entry_point.startswith("ale_py"):
                _quiet_ale()
            env = self._make_with(self.id, kwargs)
        env = history_free(env)
        for index, wrapper in enumerate(self.wrappers):
            env = wrapper.apply(env, f"{PATH}.wrappers[{index}]")
        return env

    def _make_with(self, spec: str | EnvSpec, kwargs: dict[str, Any]) -> gym.Env:
        """``gym.make``; an env constructor that refuses a value of the config's ``kwargs``
        (ValueError; unknown names are refused when the config is read) is one ConfigError line
        on ``environment.kwargs``."""
        try:
            return gym.make(spec, disable_env_checker=True, **kwargs)
        except ValueError as error:
            if not self.kwargs:
                raise
            name = spec if isinstance(spec, str) else spec.id
            message = " ".join(str(error).split()) or type(error).__name__
            raise ConfigError(f"{PATH}.kwargs", f"{name} refused them: {message}") from None


def register_plugin_envs(module: str) -> None:
    """Run the ``gymnasium.envs`` entry points of the package ``module`` belongs to (Gymnasium
    1.x no longer runs them when it is imported; ``minatar`` 1.0.15 registers its
    ``MinAtar/<Game>-v0/v1`` ids only through one)."""
    package = module.partition(".")[0]
    for entry_point in importlib.metadata.entry_points(group="gymnasium.envs"):
        if entry_point.module.partition(".")[0] == package:
            entry_point.load()()


def _namespace_hint(name: str) -> str:
    """For an id such as ``ALE/Pong-v5`` whose namespace a known module registers: the
    ``module:EnvId`` form to write instead."""
    namespace, slash, _ = name.partition("/")
    module = NAMESPACE_MODULES.get(namespace) if slash else None
    if module is None:
        return ""
    return (
        f" {namespace} ids are registered by {module}: write {module}:{name} (the "
        f"{MODULE_EXTRAS[module]!r} extra)."
    )


def _entry_point_of(env_id: str) -> str:
    """The registered entry point of ``env_id`` as text ("" where it is not registered:
    gymnasium.make will tell)."""
    try:
        return str(gym.spec(env_id).entry_point)
    except gym.error.Error:
        return ""


def _quiet_ale() -> None:
    """No ALE banner on stderr: the first ALEInterface of a process prints two lines unless the
    logger is set to errors first (AtariEnv sets it only after making its interface)."""
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
