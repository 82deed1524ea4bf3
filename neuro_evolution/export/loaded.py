"""Step an exported policy from Python: an ONNX model through onnxruntime, or the numpy file.

:func:`load_policy` gives either as one interface (``initial_state``, ``step``, ``metadata``);
:class:`ExportedBrain` lets the package's episode runner play it like a brain.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.brains.base import Brain
from neuro_evolution.export.writer import EXTRA
from neuro_evolution.support.errors import DamagedFileError, UserError

State = dict[str, np.ndarray]


class OnnxPolicy:
    """An exported ``.onnx`` model in an onnxruntime session (CPU)."""

    def __init__(self, path: Path):
        try:
            import onnxruntime
        except ImportError:
            raise UserError(f"{path}: running an ONNX policy needs onnxruntime: {EXTRA}") from None

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # not the warning that a state input has a default
        try:
            self.session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime's InvalidProtobuf, Fail, ... on a bad file
            raise damaged(path, error) from None
        inputs = self.session.get_inputs()
        props = self.session.get_modelmeta().custom_metadata_map
        self.metadata = {k: _json_or_text(v) for k, v in props.items()}
        self.output_names = [o.name for o in self.session.get_outputs()]
        # onnxruntime lists a state among the overridable initializers, not the inputs: its
        # output next.<name> names it
        self.state_names = [name.removeprefix("next.") for name in self.output_names[1:]]
        self._input_type = inputs[0].type

    def initial_state(self) -> State:
        """Empty: the model holds every state's initial value as the input's default."""
        return {}

    def step(self, observation: Any, state: State | None = None) -> tuple[Any, State]:
        feed = {"observation": np.asarray(observation, dtype=_numpy_type(self._input_type))}
        action, *following = self.session.run(self.output_names, {**feed, **(state or {})})
        return action, dict(zip(self.state_names, following))


class NumpyPolicy:
    """An exported numpy-only ``.py`` (with its ``.npz``), imported from its path."""

    def __init__(self, path: Path):
        spec = importlib.util.spec_from_file_location(f"_exported_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise UserError(f"{path}: not a Python file that can be imported")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            self.policy = module.load()
            self.metadata = self.policy.metadata
        except UserError:
            raise
        except Exception as error:  # a damaged .py or .npz beside it
            raise damaged(path, error) from None

    def initial_state(self) -> State:
        return dict(self.policy.initial_state())

    def step(self, observation: Any, state: State | None = None) -> tuple[Any, State]:
        return self.policy.step(observation, state)


def damaged(path: Path, error: Exception) -> DamagedFileError:
    """The one line for an exported file that cannot be loaded."""
    detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return DamagedFileError(
        f"{path}: not a loadable exported policy ({type(error).__name__}: {detail}); export it "
        "again with python -m neuro_evolution.export"
    )


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


_TYPES = {
    "tensor(double)": np.float64, "tensor(float)": np.float32, "tensor(int64)": np.int64,
    "tensor(int32)": np.int32, "tensor(bool)": np.bool_, "tensor(uint8)": np.uint8,
    "tensor(int8)": np.int8,
}  # fmt: skip


def _numpy_type(onnx_type: str) -> Any:
    if onnx_type not in _TYPES:
        raise UserError(f"the model's observation is a {onnx_type}, which this loader cannot feed")
    return _TYPES[onnx_type]


def load_policy(path: str | Path) -> OnnxPolicy | NumpyPolicy:
    """The exported policy at ``path`` (``.onnx``, or the numpy file's ``.py``)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file (export one with python -m neuro_evolution.export)")
    if path.suffix == ".onnx":
        return OnnxPolicy(path)
    if path.suffix == ".py":
        return NumpyPolicy(path)
    raise UserError(f"{path}: an exported policy is a .onnx file or a numpy policy's .py file")


class ExportedBrain(Brain):
    """An exported policy played as a brain: ``reset`` restarts from the initial state."""

    __slots__ = ("policy", "state")

    def __init__(self, policy: OnnxPolicy | NumpyPolicy):
        self.policy = policy
        self.state: State = {}

    def reset(self, rng: np.random.Generator) -> None:
        self.state = self.policy.initial_state()

    def step(self, observation: Any) -> Any:
        action, self.state = self.policy.step(observation, self.state)
        return action

    def internal_state(self) -> dict[str, np.ndarray]:
        return {name: np.array(value) for name, value in self.state.items()}
