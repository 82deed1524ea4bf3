"""Pieces of optimizer state that several optimizers save alike: whose state it is, the rows of
a pending ask, and the counters of periodic restarts.

Each piece round-trips through plain arrays and scalars under fixed keys, so two optimizers that
save it write the same keys in the same form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from neuro_evolution.optimizers.rng import state_array, state_scalar


def check_owner(state: Mapping[str, Any], name: str) -> None:
    """Refuse a state that another optimizer type wrote (its ``optimizer`` key names it)."""
    owner = str(state_scalar(state, "optimizer"))
    if owner != name:
        raise ValueError(f"optimizer state is for {owner!r}, not {name}")


def asked_rows_state(rows: Mapping[str, np.ndarray | None], genome_size: int) -> dict[str, Any]:
    """``has_asked`` and, under each key, a copy of the pending ask's rows (none asked: a
    (0, genome_size) array). The keys' rows are pending together or not at all."""
    asked = any(value is not None for value in rows.values())
    empty = np.zeros((0, genome_size))
    saved = {key: empty if value is None else value.copy() for key, value in rows.items()}
    return {"has_asked": asked, **saved}


def load_asked_rows(
    state: Mapping[str, Any], keys: tuple[str, ...], population_size: int, genome_size: int
) -> tuple[np.ndarray, ...] | None:
    """The pending ask's rows saved by :func:`asked_rows_state` under ``keys``, each
    (population_size, genome_size), or None when the state has no pending ask."""
    asked = bool(state_scalar(state, "has_asked"))
    shape = (population_size if asked else 0, genome_size)
    rows = tuple(state_array(state, key, np.float64, shape) for key in keys)
    return rows if asked else None


def restart_counters_state(restarts: int, restart_generation: int) -> dict[str, int]:
    """The fresh starts so far and the generation count at the latest."""
    return {"restarts": restarts, "restart_generation": restart_generation}


def load_restart_counters(state: Mapping[str, Any]) -> tuple[int, int]:
    """``restarts`` and ``restart_generation`` of a state; one saved before restarts existed has
    neither key and means no restart yet: (0, 0)."""
    restarts = int(state_scalar(state, "restarts")) if "restarts" in state else 0
    since = int(state_scalar(state, "restart_generation")) if "restart_generation" in state else 0
    return restarts, since
