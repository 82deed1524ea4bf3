"""A :class:`~.graph.PolicyGraph` as an ONNX model, built with the ``onnx`` package's helpers.

Opset :data:`OPSET`, IR version :data:`IR_VERSION` (tested with onnx 1.23, onnxruntime 1.32). Every
value is float64 except the observation (its env dtype, cast first) and the action (its action
space dtype, cast last). onnxruntime's CPU provider has no float64 kernel for ``Conv`` or
``AveragePool``, so the graph uses neither: a convolution is a ``Gather`` of image patches (the
indices computed at export) and a ``MatMul``, pooling is strided ``Slice``s combined with
``Max`` or ``Add``; every operator used has a float64 kernel. A state input is also an
initializer holding the initial state, so a first step may leave it out.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from neuro_evolution.export.graph import PolicyGraph

OPSET = 17
IR_VERSION = 8

_SIMPLE = {
    "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "max": "Max", "min": "Min",
    "matmul": "MatMul", "tanh": "Tanh", "relu": "Relu", "greater": "Greater", "equal": "Equal",
    "clip": "Clip",
}  # fmt: skip


def _int64(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def build_model(graph: PolicyGraph, metadata: dict[str, str], doc: str) -> Any:
    """The ``onnx.ModelProto`` of ``graph``, checked by ``onnx.checker``."""
    import onnx
    from onnx import helper, numpy_helper

    graph.check()
    nodes, extra = [], {}
    for node in graph.nodes:
        arguments, attributes = list(node.inputs), dict(node.attributes)
        op = _SIMPLE.get(node.op)
        if node.op == "cast":
            op = "Cast"
            attributes = {"to": helper.np_dtype_to_tensor_dtype(np.dtype(attributes["dtype"]))}
        elif node.op == "reshape":
            op, name = "Reshape", f"{node.output}.shape"
            extra[name] = _int64(attributes.pop("shape"))
            arguments.append(name)
        elif node.op == "slice":
            op = "Slice"
            for key in ("starts", "stops", "axes", "steps"):
                extra[f"{node.output}.{key}"] = _int64(attributes.pop(key))
                arguments.append(f"{node.output}.{key}")
        elif node.op == "gather":
            op, attributes = "Gather", {"axis": 0}
        elif node.op == "concat":
            op = "Concat"
        elif node.op == "argmax":
            op = "ArgMax"
            attributes = {"axis": attributes["axis"], "keepdims": int(attributes["keepdims"])}
        if op is None:
            raise ValueError(f"no ONNX operator for {node.op!r}")
        nodes.append(helper.make_node(op, arguments, [node.output], **attributes))
    double = onnx.TensorProto.DOUBLE
    observation_type = helper.np_dtype_to_tensor_dtype(np.dtype(graph.observation_dtype))
    inputs = [
        helper.make_tensor_value_info(
            graph.OBSERVATION, observation_type, list(graph.observation_shape)
        )
    ]
    outputs = [
        helper.make_tensor_value_info(
            graph.ACTION,
            helper.np_dtype_to_tensor_dtype(np.dtype(graph.action_dtype)),
            list(graph.action_shape),
        )
    ]
    nodes.append(helper.make_node("Identity", [graph.action], [graph.ACTION]))
    initializers = [
        numpy_helper.from_array(np.array(value, order="C"), name)
        for name, value in {**graph.constants, **extra}.items()
    ]
    for state in graph.states:
        shape = list(state.initial.shape)
        inputs.append(helper.make_tensor_value_info(state.name, double, shape))
        outputs.append(helper.make_tensor_value_info(f"next.{state.name}", double, shape))
        nodes.append(helper.make_node("Identity", [state.next_value], [f"next.{state.name}"]))
        initializers.append(numpy_helper.from_array(state.initial, state.name))
    onnx_graph = helper.make_graph(nodes, "policy", inputs, outputs, initializers, doc_string=doc)
    model = helper.make_model(
        onnx_graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="neuro_evolution",
        doc_string=doc,
    )
    model.ir_version = IR_VERSION
    helper.set_model_props(model, metadata)
    onnx.checker.check_model(model, full_check=True)
    return model


def model_bytes(graph: PolicyGraph, metadata: dict[str, Any], doc: str) -> bytes:
    """The serialized model; ``metadata`` values that are not strings are stored as JSON."""
    props = {k: v if isinstance(v, str) else json.dumps(v) for k, v in metadata.items()}
    return bytes(build_model(graph, props, doc).SerializeToString())
