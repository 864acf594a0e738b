"""Import ONNX models.

``from_onnx`` loads the model (external data only from inside the model's folder), lists
every op type it has no converter for before converting anything, then walks the graph
once: graph inputs that are not initializers become ``@main`` parameters (named as in
the model), initializers become params (or constants with ``freeze_params``), each node
goes through the versioned converter table in ``onnx_ops`` at the model's opset.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import Error
from ..ir.expr import Expr, Function, Tuple, Var, const
from ..ir.module import IRModule
from ..ir.types import Any, TensorType
from .common import ConversionError, UnsupportedOperatorError, sanitize_name
from .onnx_ops import TABLE
from .onnx_ops.base import _OPSET
from .onnx_ops.elementwise import onnx_dtype

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _load(model):
    if isinstance(model, onnx.ModelProto):
        base = os.getcwd()
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            model = onnx.load(path, load_external_data=False)
        except Exception as e:  # noqa: BLE001  (protobuf raises several kinds)
            raise Error(f"cannot read ONNX model {path!r}: {e}") from None
        base = os.path.dirname(os.path.abspath(path))
    else:
        raise ConversionError(f"from_onnx takes a ModelProto or a path, found "
                              f"{type(model).__name__}")
    _load_external(model, base)
    return model


def _load_external(model, base):
    from onnx.external_data_helper import load_external_data_for_tensor

    root = os.path.realpath(base)
    for tensor in model.graph.initializer:
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in tensor.external_data}
        loc = info.get("location", "")
        full = os.path.realpath(os.path.join(root, loc))
        if os.path.isabs(loc) or os.path.commonpath([root, full]) != root:
            raise Error(f"initializer {tensor.name!r}: external data location {loc!r} is "
                        f"outside the model's folder {root}")
        if not os.path.isfile(full):
            raise Error(f"initializer {tensor.name!r}: external data file {loc!r} not found")
        load_external_data_for_tensor(tensor, root)
        tensor.data_location = onnx.TensorProto.DEFAULT
        del tensor.external_data[:]


def _opset_of(model) -> int:
    for imp in model.opset_import:
        if imp.domain in _DEFAULT_DOMAINS:
            return int(imp.version)
    return 1


def _attrs(node) -> dict:
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, onnx.TensorProto):
            v = numpy_helper.to_array(v)
        elif isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode() for s in v]
        out[a.name] = v
    return out


def _value_type(vi, override, dtype):
    t = vi.type.tensor_type
    if override is not None:
        dims = tuple(override)
    else:
        dims = tuple(d.dim_value if d.HasField("dim_value") else Any() for d in t.shape.dim)
    dt = onnx_dtype(t.elem_type) if t.elem_type else dtype
    return TensorType(dims, dt)


def missing_ops(graph) -> dict[str, int]:
    return TABLE.missing(n.op_type for n in graph.node if n.domain in _DEFAULT_DOMAINS) | \
        {f"{n.domain}.{n.op_type}": 1 for n in graph.node if n.domain not in _DEFAULT_DOMAINS}


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True):
    """Import ``model`` (a ``ModelProto`` or a path to an ``.onnx`` file).

    ``shape`` maps input names to shapes overriding the graph's; ``opset`` defaults to the
    model's default-domain opset. Returns ``(mod, params)``: ``@main`` takes the user
    inputs, then (unless ``freeze_params``) the initializers, named as in the model.
    Raises ``UnsupportedOperatorError`` naming every unconverted op type with its count.
    """
    model = _load(model)
    graph = model.graph
    missing = missing_ops(graph)
    if missing:
        raise UnsupportedOperatorError(missing, "ONNX")
    _OPSET.append(int(opset) if opset is not None else _opset_of(model))
    try:
        return _Importer(graph, shape or {}, dtype, freeze_params).run()
    finally:
        _OPSET.pop()


class _Importer:
    def __init__(self, graph, shapes, dtype, freeze):
        self.graph = graph
        self.shapes = shapes
        self.dtype = dtype
        self.freeze = freeze
        self.env: dict[str, Expr] = {}
        self.inputs: list[Var] = []
        self.weights: list[Var] = []
        self.params: dict[str, np.ndarray] = {}

    def _bind_inputs(self):
        for tensor in self.graph.initializer:
            array = numpy_helper.to_array(tensor)
            if self.freeze:
                self.env[tensor.name] = const(array)
            else:
                name = sanitize_name(tensor.name)
                v = Var(name, TensorType(array.shape, array.dtype.name))
                self.weights.append(v)
                self.params[name] = array
                self.env[tensor.name] = v
        for vi in self.graph.input:
            if vi.name in self.env:
                continue
            v = Var(sanitize_name(vi.name), _value_type(vi, self.shapes.get(vi.name),
                                                         self.dtype))
            self.inputs.append(v)
            self.env[vi.name] = v

    def _lookup(self, node, name):
        if name == "":
            return None
        if name not in self.env:
            raise ConversionError(f"node {node.name or node.op_type!r} ({node.op_type}) reads "
                                  f"{name!r}, which no input, initializer or earlier node "
                                  "defines")
        return self.env[name]

    def _convert(self, node):
        attrs = _attrs(node)
        inputs = [self._lookup(node, n) for n in node.input]
        while inputs and inputs[-1] is None:
            inputs.pop()
        if node.op_type in ("Split", "Dropout"):
            attrs["_outputs"] = len(node.output)
        fn = TABLE.lookup(node.op_type, _OPSET[-1])
        try:
            return fn(*inputs, **attrs)
        except (ConversionError, TypeError, ValueError) as e:
            raise ConversionError(f"node {node.name or node.op_type!r} ({node.op_type}): "
                                  f"{e}") from None

    def run(self):
        self._bind_inputs()
        for node in self.graph.node:
            out = self._convert(node)
            if isinstance(out, tuple):
                for name, o in zip(node.output, out):
                    self.env[name] = o
            else:
                self.env[node.output[0]] = out
        outs = [self._lookup_output(o.name) for o in self.graph.output]
        body = outs[0] if len(outs) == 1 else Tuple(outs)
        fn = Function(self.inputs + self.weights, body)
        return IRModule.from_expr(fn), self.params

    def _lookup_output(self, name):
        if name not in self.env:
            raise ConversionError(f"graph output {name!r} is not produced by any node")
        return self.env[name]



