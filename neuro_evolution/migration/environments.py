"""The ``environment`` section from the predecessor's env id and its ``environment_attributes``.

Rules: an id this package offers under another name is renamed (:data:`RENAMED`); an id of an
env that only the predecessor had, or of a family not supported here, is refused
(:data:`NOT_HERE`, :data:`NOT_HERE_PREFIXES`); an Atari ``...NoFrameskip-v4`` id is made by
``ale_py`` with the predecessor's ``AtariPreprocessing``; an id whose version is not registered
here (or needs ``mujoco-py``) becomes the newest registered version of that env, with a
``changed`` line; any other id must be registered with Gymnasium, or the migration stops.
"""

from __future__ import annotations

import difflib
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import find_highest_version, get_env_id, parse_env_id

from neuro_evolution.migration.rules import MigrationError, Notes, shown

REACHER_MEMORY = "neuro_evolution.envs:neuro_evolution/ReacherMemory-v0"
RENAMED = {"ReacherMemory-v0": REACHER_MEMORY}
NOT_HERE = {
    "ReacherMemoryDynamic-v0": "the predecessor's own env; of its memory envs only "
    "ReacherMemory-v0 exists here",
    "QbertHard-v0": "the predecessor's own Qbert without the rewards for luring an enemy and "
    "for the fruit; QbertNoFrameskip-v4 exists here",
    "ReverseShaped-v0": "the predecessor's shaped Reverse-v0; Gym's algorithmic envs are not "
    "part of Gymnasium",
    "Reverse-v0": "Gym's algorithmic envs are not part of Gymnasium",
}
NOT_HERE_PREFIXES = {"procgen": "ProcGen envs are not supported here"}
ATARI_SUFFIX = "NoFrameskip-v4"
# The predecessor's AtariAttr defaults (its AtariPreprocessing arguments).
ATARI_DEFAULTS = {
    "screen_size": 64,
    "scale_obs": True,
    "terminal_on_life_loss": True,
    "grayscale_obs": False,
}
REACHER_KEYS = ("observation_frames", "memory_frames", "action_frames")
# Behaviour the predecessor added to an env family without an option (env id prefix -> what).
ENV_NOTES = {
    "BipedalWalker": "the predecessor ended an episode after 50 steps without forward motion, "
    "with -100; here the env's own rules apply",
}
FIX = "migrate a config of a Gymnasium env, or write the new config by hand (docs/environments.md)"


def migrate_environment(
    env_id: Any, runner: dict[str, Any], source: str, notes: Notes
) -> dict[str, Any]:
    """The ``environment`` section of ``env_id`` (refused in one line where it does not exist
    here), with the predecessor's ``episode_runner.environment_attributes`` folded in."""
    if not isinstance(env_id, str):
        raise MigrationError(
            f"{source}: environment must be a Gym id string, got {shown(env_id)}: not a config "
            "of the predecessor; pass one of its configurations/*.json"
        )
    refuse_missing(env_id, source)
    attributes = runner.get("environment_attributes")
    if env_id.endswith(ATARI_SUFFIX):
        section = atari_environment(env_id, attributes, notes)
    elif env_id in RENAMED:
        section = reacher_memory_environment(attributes, notes)
    else:
        section = {"id": current_version(env_id, source, notes)}
        if attributes is not None:
            notes.dropped(
                "episode_runner.environment_attributes",
                attributes,
                "the predecessor read them only for ReacherMemory, Atari and ProcGen envs",
            )
    for prefix, message in ENV_NOTES.items():
        if env_id.startswith(prefix):
            notes.note(f"environment {env_id}", message)
    return section


def refuse_missing(env_id: str, source: str) -> None:
    """A :class:`MigrationError` for an env that only the predecessor had."""
    reason = NOT_HERE.get(env_id)
    for prefix, why in NOT_HERE_PREFIXES.items():
        if env_id.startswith(prefix):
            reason = why
    if reason is not None:
        raise MigrationError(
            f"{source}: environment {env_id!r} does not exist here ({reason}); {FIX}"
        )


def usable(env_id: str) -> bool:
    """Whether ``env_id`` is registered and can be made here (Gymnasium keeps the ids of its
    ``mujoco-py`` envs registered, with an entry point that only raises)."""
    spec = gym.registry.get(env_id)
    if spec is None:
        return False
    entry = spec.entry_point
    return not (callable(entry) and "raise" in getattr(entry, "__name__", ""))


def current_version(env_id: str, source: str, notes: Notes) -> str:
    """``env_id``, or the newest usable version of its env where that version is not usable
    here (one ``changed`` line); an env without a usable version is refused."""
    if usable(env_id):
        return env_id
    try:
        namespace, name, version = parse_env_id(env_id)
    except gym.error.Error:
        namespace, name, version = None, env_id, None
    newest = find_highest_version(namespace, name)
    if newest is not None and newest != version and usable(get_env_id(namespace, name, newest)):
        new_id = get_env_id(namespace, name, newest)
        notes.changed(
            "environment",
            env_id,
            f"environment.id={shown(new_id)}",
            f"{env_id} cannot be made here; {new_id} is the newest version: its dynamics or "
            "rewards may differ",
        )
        return new_id
    close = difflib.get_close_matches(env_id, [key for key in gym.registry if usable(key)], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise MigrationError(
        f"{source}: environment {env_id!r} does not exist here (not a Gymnasium env id{hint}); "
        f"{FIX}"
    )


def atari_attributes(attributes: Any, notes: Notes) -> dict[str, Any]:
    """The predecessor's AtariAttr options with its defaults filled in."""
    values = dict(ATARI_DEFAULTS)
    for key, value in (attributes or {}).items():
        if key in values:
            values[key] = value
        elif key != "type":
            notes.dropped(f"episode_runner.environment_attributes.{key}", value, "no Atari option")
    return values


def atari_environment(env_id: str, attributes: Any, notes: Notes) -> dict[str, Any]:
    """An Atari id made by ``ale_py``, wrapped in ``AtariPreprocessing`` as the predecessor did
    (its defaults: 64 x 64 colour frames scaled to [0, 1], terminal on the first life lost)."""
    wrapper = {"name": "AtariPreprocessing", "kwargs": atari_attributes(attributes, notes)}
    return {"id": f"ale_py:{env_id}", "wrappers": [wrapper]}


def reacher_memory_environment(attributes: Any, notes: Notes) -> dict[str, Any]:
    """The ReacherMemory env of this package with the predecessor's frame counts as kwargs."""
    kwargs: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        if key in REACHER_KEYS:
            kwargs[key] = value
        elif key != "type":
            notes.dropped(
                f"episode_runner.environment_attributes.{key}", value, "no ReacherMemory option"
            )
    section: dict[str, Any] = {"id": REACHER_MEMORY}
    if kwargs:
        section["kwargs"] = kwargs
    return section
