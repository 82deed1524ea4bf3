"""Generator state owned by one optimizer: a swapped-in Python ``random`` state, numpy Generators.

DEAP's operators (MU_ES) draw from the global ``random`` module. An optimizer keeps its own saved
state and swaps it in only around the calls that draw (``with owned.active(): ...``); the previous
global state is put back afterwards, so code outside the optimizer sees the global generator
untouched and the optimizer's sequence does not depend on what anyone else drew. The other
optimizers draw from a numpy ``Generator`` of their own (:func:`owned_generator`), which needs no
swapping.

The state round-trips through plain arrays and scalars (:meth:`to_state` / :meth:`load_state`),
so a checkpoint needs no pickle.

Caveat: the swap is global to the process. A module lock serialises swaps made through this
module, but another thread drawing from the global ``random`` *during* a swap (e.g. a Dask
scheduler thread) would perturb both sequences; keep ask/tell on one thread while nothing else
draws.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from neuro_evolution.support.seeds import PYTHON_RANDOM_PURPOSE, optimizer_generator_seed

_SWAP_LOCK = threading.RLock()


def state_scalar(state: Mapping[str, Any], key: str) -> Any:
    """The Python scalar stored under ``key`` (a 0-d array after ``np.load`` is fine)."""
    if key not in state:
        raise KeyError(f"optimizer state is missing {key!r}")
    return np.asarray(state[key]).item()


def state_array(
    state: Mapping[str, Any], key: str, dtype: Any, shape: tuple[int | None, ...]
) -> np.ndarray:
    """An owned copy of the array under ``key``; a clear error when missing or mis-shaped.

    ``None`` in ``shape`` accepts any length along that axis.
    """
    if key not in state:
        raise KeyError(f"optimizer state is missing {key!r}")
    value = np.asarray(state[key])
    if value.ndim != len(shape) or any(
        want is not None and got != want for got, want in zip(value.shape, shape)
    ):
        raise ValueError(f"optimizer state {key!r}: expected shape {shape}, got {value.shape}")
    return np.array(value, dtype=dtype)


class PythonRandomState:
    """A state of Python's Mersenne Twister (``random``) that belongs to one optimizer."""

    def __init__(self, seed: int):
        self._state = random.Random(
            optimizer_generator_seed(seed, PYTHON_RANDOM_PURPOSE)
        ).getstate()

    @contextmanager
    def active(self) -> Iterator[None]:
        """Make this state the global ``random`` state for the duration of the block."""
        with _SWAP_LOCK:
            saved = random.getstate()
            random.setstate(self._state)
            try:
                yield
            finally:
                self._state = random.getstate()
                random.setstate(saved)

    def to_state(self, prefix: str) -> dict[str, Any]:
        """``{prefix}_words`` (625 uint32: key and position), ``{prefix}_gauss_next`` (+ flag)."""
        version, words, gauss_next = self._state
        return {
            f"{prefix}_version": int(version),
            f"{prefix}_words": np.array(words, dtype=np.uint32),
            f"{prefix}_has_gauss_next": gauss_next is not None,
            f"{prefix}_gauss_next": float(gauss_next) if gauss_next is not None else 0.0,
        }

    def load_state(self, state: Mapping[str, Any], prefix: str) -> None:
        """Restore what :meth:`to_state` returned (also after ``np.savez``/``np.load``)."""
        words = state_array(state, f"{prefix}_words", np.uint32, (625,))
        has_gauss = bool(state_scalar(state, f"{prefix}_has_gauss_next"))
        gauss_next = float(state_scalar(state, f"{prefix}_gauss_next")) if has_gauss else None
        restored = (
            int(state_scalar(state, f"{prefix}_version")),
            tuple(int(w) for w in words),
            gauss_next,
        )
        random.Random().setstate(restored)  # validates before we adopt it
        self._state = restored


def owned_generator(seed: int, purpose: int) -> np.random.Generator:
    """A numpy ``Generator`` (PCG64) of the optimizer's own, seeded from the run-derived seed.

    Optimizers that draw with numpy's ``Generator`` API use this instead of the global
    generators, so nothing needs swapping in or out.
    """
    return np.random.Generator(np.random.PCG64(optimizer_generator_seed(seed, purpose)))


_WORD = (1 << 64) - 1


def generator_to_state(generator: np.random.Generator, prefix: str) -> dict[str, Any]:
    """A PCG64 generator's state as plain data: ``{prefix}_words`` holds the 128-bit state and
    increment as four uint64 words (high, low, high, low), plus the buffered 32-bit draw."""
    raw = generator.bit_generator.state
    if raw["bit_generator"] != "PCG64":
        raise ValueError(f"only PCG64 generators are saved, got {raw['bit_generator']}")
    value, increment = int(raw["state"]["state"]), int(raw["state"]["inc"])
    words = [value >> 64, value & _WORD, increment >> 64, increment & _WORD]
    return {
        f"{prefix}_words": np.array(words, dtype=np.uint64),
        f"{prefix}_has_uint32": int(raw["has_uint32"]),
        f"{prefix}_uinteger": int(raw["uinteger"]),
    }


def generator_load_state(
    generator: np.random.Generator, state: Mapping[str, Any], prefix: str
) -> None:
    """Put the state :func:`generator_to_state` returned back into ``generator`` (PCG64)."""
    high, low, inc_high, inc_low = (
        int(w) for w in state_array(state, f"{prefix}_words", np.uint64, (4,))
    )
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (high << 64) | low, "inc": (inc_high << 64) | inc_low},
        "has_uint32": int(state_scalar(state, f"{prefix}_has_uint32")),
        "uinteger": int(state_scalar(state, f"{prefix}_uinteger")),
    }
