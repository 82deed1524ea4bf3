"""Start-up check of ``info`` measures reduced with ``last``: the key of the final info dict.

Such a measure reads ``info[key]`` of the step that ended the episode, so a step in the middle
need not have the key, and a check of one step cannot refuse it. Instead one episode is played
with sampled actions (reset seed 0, at most :data:`CHECK_STEPS` steps): when it ends and its
last info lacks the key, the run would fail at generation 0, so it is refused now in one line.
An episode that has not ended after :data:`CHECK_STEPS` steps proves nothing and is accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neuro_evolution.core.schema import ConfigError, join
from neuro_evolution.measures.base import MeasureConfig

CHECK_STEPS = 2_000


def check_final_info_keys(measures: Sequence[MeasureConfig], env: Any, path: str) -> None:
    """A one-line ConfigError on ``path[i].key`` for an ``info`` measure with ``reduce: last``
    whose key is missing from the final info dict of an episode of sampled actions."""
    last = [
        (position, measure)
        for position, measure in enumerate(measures)
        if measure.source == "info" and measure.reduce == "last"
    ]
    if not last:
        return
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(CHECK_STEPS):
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated or truncated:
            break
    else:
        return
    for position, measure in last:
        if measure.key not in info:
            known = ", ".join(sorted(map(str, info))) or "none"
            raise ConfigError(
                join(f"{path}[{position}]", "key"),
                f"{measure.key!r} is not in the info dict of the step that ends an episode "
                f"(keys: {known}); reduce last reads that dict",
            )
