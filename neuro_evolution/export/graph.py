"""The policy graph: one step of an exported policy as a list of array operations.

Every brain type describes its step once, as a :class:`PolicyGraph`; two back ends turn the
same graph into an ONNX model (:mod:`.onnx_model`) and into a numpy-only Python file
(:mod:`.numpy_file`). A graph has one input, ``observation`` (the env's observation, its own
dtype and shape), and one output, ``action``; a recurrent brain adds a state input per array it
carries (its ``internal_state`` names, e.g. ``neuron_state``) and, in the same order, an output
``next.<name>`` to feed back at the next step. Every state starts at a stored initial value.

Operations (each maps to one ONNX operator and one numpy call, with numpy's semantics):
``cast reshape add sub mul div max min matmul tanh relu concat slice gather argmax greater
equal clip``. Values are float64 unless cast: an exported policy computes what the brain does.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

OPERATIONS = (
    "cast", "reshape", "add", "sub", "mul", "div", "max", "min", "matmul", "tanh", "relu",
    "concat", "slice", "gather", "argmax", "greater", "equal", "clip",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Node:
    """``output = op(*inputs, **attributes)``; inputs name values, constants or graph inputs."""

    op: str
    inputs: tuple[str, ...]
    output: str
    attributes: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class State:
    """A recurrent state: input ``name``, output ``next.<name>``, its initial value."""

    name: str
    initial: np.ndarray
    next_value: str = ""


class PolicyGraph:
    """Builder of one policy step. Names of constants and states get the current scope's prefix
    (``part1.`` inside a composed brain's second part)."""

    OBSERVATION = "observation"
    ACTION = "action"

    def __init__(self, observation_dtype: str, observation_shape: tuple[int, ...]):
        self.observation_dtype = str(np.dtype(observation_dtype))
        self.observation_shape = tuple(int(n) for n in observation_shape)
        self.nodes: list[Node] = []
        self.constants: dict[str, np.ndarray] = {}
        self.states: list[State] = []
        self.action = ""
        self.action_dtype = ""
        self.action_shape: tuple[int, ...] = ()
        self._prefix = ""
        self._count = 0

    # --- naming ----------------------------------------------------------------------------
    @contextmanager
    def scope(self, prefix: str) -> Iterator[None]:
        """Prefix the names of constants and states made inside (``part0.``)."""
        outer = self._prefix
        self._prefix = outer + prefix
        try:
            yield
        finally:
            self._prefix = outer

    def constant(self, name: str, value: Any) -> str:
        """A stored array (a weight, a bound); returns its name (unique, scope-prefixed)."""
        key = self._prefix + name
        while key in self.constants or re.fullmatch(r"v\d+", key):  # v<n>: operation values
            key = f"{key}_"
        self.constants[key] = np.asarray(value)
        return key

    def state(self, name: str, initial: np.ndarray) -> str:
        """Declare a recurrent state input starting at ``initial``; returns its value name."""
        key = self._prefix + name
        if any(s.name == key for s in self.states):
            raise ValueError(f"state {key!r} declared twice")
        self.states.append(State(key, np.array(initial, dtype=np.float64)))
        return key

    def next_state(self, name: str, value: str) -> None:
        """The value state ``name`` (as returned by :meth:`state`) takes for the next step."""
        for index, state in enumerate(self.states):
            if state.name == name:
                self.states[index] = dataclasses.replace(state, next_value=value)
                return
        raise KeyError(f"no state {name!r}")

    def op(self, op: str, *inputs: str, **attributes: Any) -> str:
        """Append ``op(*inputs, **attributes)``; returns the name of its value."""
        if op not in OPERATIONS:
            raise ValueError(f"unknown operation {op!r}; the graph knows {', '.join(OPERATIONS)}")
        self._count += 1
        output = f"v{self._count}"
        self.nodes.append(Node(op, tuple(inputs), output, dict(attributes)))
        return output

    def set_action(self, value: str, dtype: str, shape: tuple[int, ...]) -> None:
        """The step's action: ``value``, of ``dtype`` and ``shape``."""
        self.action, self.action_dtype, self.action_shape = value, str(np.dtype(dtype)), shape

    def check(self) -> None:
        """Every state has a next value and the action is set (a ValueError otherwise)."""
        if not self.action:
            raise ValueError("the policy graph has no action")
        missing = [s.name for s in self.states if not s.next_value]
        if missing:
            raise ValueError(f"states without a next value: {', '.join(missing)}")

    # --- shorthands ------------------------------------------------------------------------
    def matmul(self, a: str, b: str) -> str:
        return self.op("matmul", a, b)

    def add(self, a: str, b: str) -> str:
        return self.op("add", a, b)

    def mul(self, a: str, b: str) -> str:
        return self.op("mul", a, b)

    def tanh(self, a: str) -> str:
        return self.op("tanh", a)

    def activation(self, name: str, a: str) -> str:
        """``tanh``, ``relu`` (max with 0) or ``none`` of ``a``."""
        if name == "none":
            return a
        if name not in ("tanh", "relu"):
            raise ValueError(f"activation {name!r} cannot be exported")
        return self.op(name, a)

    def scalar(self, name: str, value: float) -> str:
        """A float64 scalar constant."""
        return self.constant(name, np.float64(value))

    def slice(self, a: str, start: int, stop: int, axis: int = 0, step: int = 1) -> str:
        return self.op("slice", a, starts=(start,), stops=(stop,), axes=(axis,), steps=(step,))

    def reshape(self, a: str, shape: tuple[int, ...]) -> str:
        return self.op("reshape", a, shape=tuple(int(n) for n in shape))

    def concat(self, parts: list[str], axis: int = 0) -> str:
        return parts[0] if len(parts) == 1 else self.op("concat", *parts, axis=axis)
