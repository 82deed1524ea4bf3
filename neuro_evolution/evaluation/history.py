"""Episodes that depend on their seed alone, not on the episodes an env ran before.

The determinism contract needs it: which worker runs which episode after which depends on
timing, so an env that carries state from one episode into the next makes results depend on
the schedule. Gymnasium's Box2D envs keep one ``Box2D.b2World`` for their whole life
(BipedalWalker and CarRacing create it in ``__init__`` and reuse it on every reset; LunarLander
makes a new one in ``reset``), and the world's contact and island caches change how the next
episode integrates: the same BipedalWalker genome scored 241.87 in a fresh env and 241.43 after
other episodes in the same env.

:func:`history_free` wraps such an env so every reset starts in a new world with the old one's
gravity. ``EnvironmentConfig.make`` applies it, so it holds for every process that makes an env
(runner, mp and Dask workers, each sub-env of a lockstep vector env, validation, replay).
``tests/test_env_history.py`` audits every shipped config's env: an episode played after other
episodes equals the same episode in a fresh env, bit for bit.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym


class FreshBox2DWorld(gym.Wrapper):
    """Gives a Box2D env a new ``b2World`` (same gravity) before every reset."""

    def reset(self, **kwargs: Any) -> Any:
        env: Any = self.env.unwrapped  # a Box2D env (keeps_box2d_world)
        box2d = sys.modules["Box2D"]
        env._destroy()  # the bodies belong to the old world: remove them while it exists
        env.world = box2d.b2World(gravity=env.world.gravity)
        return self.env.reset(**kwargs)


def keeps_box2d_world(env: gym.Env) -> bool:
    """Whether ``env`` holds a Box2D world it could carry from one episode into the next."""
    box2d = sys.modules.get("Box2D")  # loaded by any env that uses it
    unwrapped = env.unwrapped
    return (
        box2d is not None
        and isinstance(getattr(unwrapped, "world", None), box2d.b2World)
        and callable(getattr(unwrapped, "_destroy", None))
    )


def history_free(env: gym.Env) -> gym.Env:
    """``env``, wrapped where needed so that no episode depends on the ones before it."""
    return FreshBox2DWorld(env) if keeps_box2d_world(env) else env
