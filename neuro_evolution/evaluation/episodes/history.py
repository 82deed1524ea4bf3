"""Episodes that depend on their seed alone, not on the episodes an env ran before.

The determinism contract needs it: which worker runs which episode after which depends on
timing, so an env that carries state from one episode into the next makes results depend on
the schedule. Gymnasium's Box2D envs keep one ``Box2D.b2World`` for their whole life
(BipedalWalker and CarRacing create it in ``__init__`` and reuse it on every reset; LunarLander
makes a new one in ``reset``), and the world's contact and island caches change how the next
episode integrates: the same BipedalWalker genome scored 241.87 in a fresh env and 241.43 after
other episodes in the same env. MinAtar (``minatar`` 1.0.15) keeps the last action of the
previous episode for its sticky actions (the first step of an episode could repeat it), and
seeds its game from ``RandomState(seed)``, which refuses the held-out validation seeds (all
>= 2**32).

:func:`history_free` wraps such an env: a Box2D env starts every reset in a new world with the
old one's gravity; a MinAtar env starts every seeded reset with no last action and a game
generator drawn from the whole seed (``RandomState(PCG64(seed))``: any seed >= 0, and a
tenth of the ~0.1 ms MinAtar's ``RandomState(seed)`` takes, which short episodes notice).

ALE's Atari envs (``ale_py`` 0.12) are history-free on their own: ``reset(seed=...)`` loads the
ROM again with a seed derived from the episode seed, which also drives ALE's sticky actions
(``repeat_action_probability``, 0.25 in v5 ids) and the env's generator (the no-op starts of
``AtariPreprocessing``). Loading the ROM takes ~0.2 s per episode here. Where ALE has no sticky
actions of its own (``repeat_action_probability`` 0; Gymnasium's ``StickyAction`` wrapper gives
them per frame from the env's seeded generator instead), its generator is never drawn from, and
:class:`AtariResetFromSnapshot` restores the emulator state saved right after the ROM was loaded
instead (~0.01 s): the same episodes as ALE's own seeded reset, bit for bit. A plain
``reset_game`` without either would carry state between episodes in some games (Seaquest).

``EnvironmentConfig.make`` applies :func:`history_free`, so it holds for every process that
makes an env (runner, mp and Dask workers, each sub-env of a lockstep vector env, validation,
replay). ``tests/evaluation/episodes/test_env_history.py`` audits every shipped config's env and
each pixel env family (ALE, MinAtar): an episode played after other episodes equals the same
episode in a fresh env, bit for bit.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym
import numpy as np


class FreshBox2DWorld(gym.Wrapper):
    """Gives a Box2D env a new ``b2World`` (same gravity) before every reset."""

    def reset(self, **kwargs: Any) -> Any:
        env: Any = self.env.unwrapped  # a Box2D env (keeps_box2d_world)
        box2d = sys.modules["Box2D"]
        env._destroy()  # the bodies belong to the old world: remove them while it exists
        env.world = box2d.b2World(gravity=env.world.gravity)
        return self.env.reset(**kwargs)


class FreshMinAtarGame(gym.Wrapper):
    """Resets a MinAtar env's game with no last action and, for a seeded reset, a new generator
    (game and sticky actions alike) drawn from the whole seed."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        unwrapped: Any = self.env.unwrapped  # a minatar.gym.BaseEnv (is_minatar)
        game = unwrapped.game  # its minatar.Environment
        game.last_action = 0  # as a new minatar.Environment starts
        if seed is not None:
            random = np.random.RandomState(np.random.PCG64(seed))
            game.random = game.env.random = random  # what minatar.Environment.seed sets
        return self.env.reset(seed=None, options=options)


class AtariResetFromSnapshot(gym.Wrapper):
    """A seeded reset of an ALE env without sticky actions of its own: the emulator state saved
    when the wrapper was made (right after the ROM was loaded) restored, and the env's generator
    seeded as ``AtariEnv.seed_game`` seeds it, instead of loading the ROM again."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        unwrapped: Any = env.unwrapped  # an ale_py AtariEnv (resets_atari_from_snapshot)
        self._snapshot = unwrapped.ale.cloneState()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            unwrapped: Any = self.env.unwrapped
            np_seed, _ = np.random.SeedSequence(seed).generate_state(n_words=2)  # as seed_game
            unwrapped._np_random, _ = gym.utils.seeding.np_random(int(np_seed))
            unwrapped.ale.restoreState(self._snapshot)
        return self.env.reset(seed=None, options=options)


def resets_atari_from_snapshot(env: gym.Env) -> bool:
    """Whether ``env`` is an ALE env whose own sticky actions are off (its ALE generator unused),
    so that :class:`AtariResetFromSnapshot` gives exactly its seeded resets."""
    ale_env = getattr(sys.modules.get("ale_py.env"), "AtariEnv", None)  # loaded by any ALE env
    if not (isinstance(ale_env, type) and isinstance(env.unwrapped, ale_env)):
        return False
    unwrapped: Any = env.unwrapped
    return bool(unwrapped.ale.getFloat("repeat_action_probability") == 0.0)


def keeps_box2d_world(env: gym.Env) -> bool:
    """Whether ``env`` holds a Box2D world it could carry from one episode into the next."""
    box2d = sys.modules.get("Box2D")  # loaded by any env that uses it
    unwrapped = env.unwrapped
    return (
        box2d is not None
        and isinstance(getattr(unwrapped, "world", None), box2d.b2World)
        and callable(getattr(unwrapped, "_destroy", None))
    )


def is_minatar(env: gym.Env) -> bool:
    """Whether ``env`` is a Gymnasium env of the ``minatar`` package (its ``game`` a
    ``minatar.Environment``)."""
    minatar = sys.modules.get("minatar")  # loaded by any env that uses it
    environment = getattr(minatar, "Environment", None)
    return isinstance(environment, type) and isinstance(
        getattr(env.unwrapped, "game", None), environment
    )


def history_free(env: gym.Env) -> gym.Env:
    """``env``, wrapped where needed so that no episode depends on the ones before it."""
    if keeps_box2d_world(env):
        return FreshBox2DWorld(env)
    if is_minatar(env):
        return FreshMinAtarGame(env)
    if resets_atari_from_snapshot(env):
        return AtariResetFromSnapshot(env)
    return env
