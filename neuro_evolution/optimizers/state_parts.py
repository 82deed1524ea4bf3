"""Pieces of optimizer state that several optimizers save alike: whose state it is and the
counters of periodic restarts (declared entries, :mod:`.declared_state`), under fixed keys, so
two optimizers that save them write the same keys in the same form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neuro_evolution.optimizers.declared_state import Value
from neuro_evolution.optimizers.rng import state_scalar


def _none_yet(_: Any) -> int:
    return 0


# The fresh starts so far and the generation count at the latest; a state saved before restarts
# existed has neither and means no restart yet.
RESTART_COUNTERS = (
    Value("restarts", int, missing=_none_yet),
    Value("restart_generation", int, missing=_none_yet),
)


def check_owner(state: Mapping[str, Any], name: str) -> None:
    """Refuse a state that another optimizer type wrote (its ``optimizer`` key names it)."""
    owner = str(state_scalar(state, "optimizer"))
    if owner != name:
        raise ValueError(f"optimizer state is for {owner!r}, not {name}")
