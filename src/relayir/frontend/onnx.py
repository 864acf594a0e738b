"""Import ONNX models.

``from_onnx`` loads the model (external data only from inside the model's folder), lists
every op type it has no converter for (subgraphs included) before converting anything,
then walks the graph once: graph inputs that are not initializers become ``@main``
parameters, initializers become params (or constants with ``freeze_params``), inputs
named in ``const_inputs`` become constants, and each node goes through the versioned
converter table in ``onnx_ops`` at the model's opset.

Names. ``@main``'s parameters (and the params dict) keep the model's names exactly,
``gpu_0/data_0`` included (the text format quotes them: ``%"gpu_0/data_0"``), so every
executor takes an input by the name the model declares (``set_input("gpu_0/data_0",
...)``, ``vm.set_input("main", **{"gpu_0/data_0": x})``); code generators that need C
identifiers derive their own. The graph's output names are ``@main``'s ``output_names``
attribute: the graph executor takes them too (``get_output("gpu_0/softmax_1")``).

Shape-like inputs known only at run time. A graph input that is a shape (``Reshape``'s
shape, ``Tile``'s repeats, ``Slice``'s starts) or a parameter (the axes of ``ReduceSum``
and ``Unsqueeze``, ``TopK``'s k, ``CumSum``'s axis, ``Trilu``'s k, ``OneHot``'s depth,
``Split``'s sizes, ``Resize``'s scales/sizes/roi, ``NonMaxSuppression``'s limits) imports
as a ``dyn`` op with ``Any`` result extents (``op/dynamic.py``, ``op/dynamic_params.py``),
which the VM runs (the graph executor needs static shapes and says so). We chose this
over specialising the model on the first call's values: the compiled model stays one
artifact that is right for every value (a specialisation is only right for the values
it saw, and re-compiling per value hides a compile in a call), the text shows what is
dynamic, and ``DynamicToStatic`` still gives the static ops when the values are bound
(``const_inputs``) or fold to constants. Such an input needs a static length (it fixes
the result's rank); one without it, or an op with no ``dyn`` form yet, raises
``ConstantInputRequired`` naming the input to bind.

Subgraphs (``If`` branches, ``Loop``/``Scan`` bodies) convert in a child scope of the
same importer (``convert_subgraph``), so they read every enclosing graph's names. An
ONNX sequence built in the graph is a Python list of expressions while importing and a
tuple where it leaves the graph.
"""

from __future__ import annotations

import os
from collections import ChainMap

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import Error
from ..ir.expr import Function, Tuple, TupleGetItem, Var, const
from ..ir.module import IRModule
from ..ir.types import Any, TensorType, TupleType
from .common import ConversionError, UnsupportedOperatorError
from .onnx_ops import TABLE
from .onnx_ops.base import ConstantInputRequired, OnnxImport, importing
from .onnx_ops.elementwise import onnx_dtype
from .onnx_ops.sequence import EMPTY

_DEFAULT_DOMAINS = ("", "ai.onnx")
# the newest default-domain opset the converter table was written against (onnx 1.23):
# a newer one may change an op's meaning in ways no converter knows, so it is refused
MAX_OPSET = 28


def _load(model):
    if isinstance(model, onnx.ModelProto):
        base, what = os.getcwd(), "the model"
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            model = onnx.load(path, load_external_data=False)
        except Exception as e:  # noqa: BLE001  (protobuf raises several kinds)
            raise Error(f"cannot read ONNX model {path!r}: {e}") from None
        base, what = os.path.dirname(os.path.abspath(path)), repr(path)
    else:
        raise ConversionError(f"from_onnx takes a ModelProto or a path, found "
                              f"{type(model).__name__}")
    if not model.graph.output:  # protobuf reads an empty file as an empty model
        raise ConversionError(f"{what} holds no ONNX graph (its graph has no outputs): an "
                              "empty or truncated file, or not an ONNX model")
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


def _tensor_type(t, override, dtype):
    if override is not None:
        dims = tuple(override)
    else:
        dims = tuple(d.dim_value if d.HasField("dim_value") else Any() for d in t.shape.dim)
    dt = onnx_dtype(t.elem_type) if t.elem_type else dtype
    return TensorType(dims, dt)


def _value_type(vi, override, dtype):
    """A tensor input's type; a sequence input is a tuple whose length (and element
    shapes) ``shape`` must give, as a list of shapes: Relay needs its length."""
    ty = vi.type
    if ty.WhichOneof("value") == "optional_type":  # present: the value it holds
        ty = ty.optional_type.elem_type
    kind = ty.WhichOneof("value")
    if kind == "sequence_type":
        elem = ty.sequence_type.elem_type
        if override is None or elem.WhichOneof("value") != "tensor_type":
            raise ConversionError(f"sequence input {vi.name!r} needs its element shapes: "
                                  f"pass shape={{{vi.name!r}: [shape, ...]}}")
        return TupleType(tuple(_tensor_type(elem.tensor_type, s, dtype) for s in override))
    if kind != "tensor_type":
        raise ConversionError(f"input {vi.name!r} is a {kind or 'untyped value'}, which has "
                              "no Relay equivalent")
    return _tensor_type(ty.tensor_type, override, dtype)


def _subgraphs(node):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _all_nodes(graph):
    """The nodes of ``graph`` and of every subgraph in it (a worklist, no recursion)."""
    stack = [graph]
    while stack:
        g = stack.pop()
        for n in g.node:
            yield n
            stack.extend(_subgraphs(n))


def _op_key(node) -> str:
    """The converter table's key: the op type, qualified by its domain outside ai.onnx."""
    return node.op_type if node.domain in _DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"


def missing_ops(graph) -> dict[str, int]:
    return TABLE.missing(_op_key(n) for n in _all_nodes(graph))


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True,
              const_inputs=None):
    """Import ``model`` (a ``ModelProto`` or a path to an ``.onnx`` file).

    ``shape`` maps input names to shapes overriding the graph's (for a sequence input, a
    list of its elements' shapes: it becomes a tuple parameter); ``opset`` defaults to the
    model's default-domain opset. Returns ``(mod, params)``: ``@main`` takes the user
    inputs, then (unless ``freeze_params``) the initializers, named as in the model.
    Raises ``UnsupportedOperatorError`` naming every unconverted op type with its count.

    Shape-like inputs (``Reshape``'s shape, ``Slice``'s starts, ``ReduceSum``'s axes,
    ``Resize``'s scales...) may be graph inputs: they import as ``dyn.*`` ops, whose
    result extents are known at run time (a constant or foldable one gives the static op;
    see the module docstring). Such an input whose length is not static (it would fix the
    result's rank), or one an op has no ``dyn`` form for, raises ``ConstantInputRequired``
    naming it: ``const_inputs`` maps graph inputs to values bound as constants, like params
    bound by name, and they leave ``@main``'s parameters (``None`` binds an optional input
    as empty).
    """
    model = _load(model)
    graph = model.graph
    missing = missing_ops(graph)
    if missing:
        raise UnsupportedOperatorError(missing, "ONNX")
    known = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    unknown = sorted(set(const_inputs or {}) - known)
    if unknown:
        raise ConversionError(f"const_inputs names {unknown}, which are not graph inputs")
    opset = int(opset) if opset is not None else _opset_of(model)
    if not 1 <= opset <= MAX_OPSET:
        raise ConversionError(f"the model uses opset {opset} of the default ONNX domain; this "
                              f"importer knows opsets 1 to {MAX_OPSET} (a newer opset may "
                              "change what an op means)")
    importer = _Importer(graph, opset, shape or {}, dtype, freeze_params, const_inputs or {})
    with importing(OnnxImport(opset, importer.convert_subgraph)):
        return importer.run()


class _Importer:
    def __init__(self, graph, opset, shapes, dtype, freeze, const_inputs):
        self.graph = graph
        self.opset = opset
        self.shapes = shapes
        self.dtype = dtype
        self.freeze = freeze
        self.const_inputs = const_inputs
        self.env: ChainMap = ChainMap({})
        self.inputs: list[Var] = []
        self.weights: list[Var] = []
        self.params: dict[str, np.ndarray] = {}

    def _bind_inputs(self):
        for tensor in self.graph.initializer:
            array = numpy_helper.to_array(tensor)
            if self.freeze or tensor.name in self.const_inputs:
                self.env[tensor.name] = const(array)
            else:
                v = Var(tensor.name, TensorType(array.shape, array.dtype.name))
                self.weights.append(v)
                self.params[tensor.name] = array
                self.env[tensor.name] = v
        for vi in self.graph.input:
            if vi.name in self.const_inputs:
                bound = self.const_inputs[vi.name]
                self.env[vi.name] = EMPTY if bound is None else const(np.asarray(bound))
                continue
            if vi.name in self.env:
                continue
            v = Var(vi.name, _value_type(vi, self.shapes.get(vi.name), self.dtype))
            self.inputs.append(v)
            if isinstance(v.type_annotation, TupleType):  # a sequence: a list while importing
                self.env[vi.name] = [TupleGetItem(v, i)
                                     for i in range(len(v.type_annotation.fields))]
            else:
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
        attrs["_outputs"] = len(node.output)
        fn = TABLE.lookup(_op_key(node), self.opset)
        if not _takes(fn, "_outputs"):
            del attrs["_outputs"]
        where = f"node {node.name or node.op_type!r} ({node.op_type})"
        try:
            return fn(*inputs, **attrs)
        except ConstantInputRequired as e:
            raise ConstantInputRequired(f"{where}: {e}", e.input_names) from None
        except (ConversionError, TypeError, ValueError) as e:
            raise ConversionError(f"{where}: {e}") from None

    def _convert_nodes(self, graph):
        for node in graph.node:
            out = self._convert(node)
            if isinstance(out, tuple):  # one value per output (a list is one sequence)
                for name, o in zip(node.output, out):
                    if name:
                        self.env[name] = o
            else:
                self.env[node.output[0]] = out
        return [self._lookup_output(o.name) for o in graph.output]

    def convert_subgraph(self, graph, inputs: dict) -> list:
        """Outputs of ``graph`` with its inputs bound; its names live in a child scope."""
        scope = dict(inputs)
        for tensor in graph.initializer:
            scope[tensor.name] = const(numpy_helper.to_array(tensor))
        saved = self.env
        self.env = saved.new_child(scope)
        try:
            return self._convert_nodes(graph)
        finally:
            self.env = saved

    def run(self):
        self._bind_inputs()
        # an ONNX sequence (a Python list of expressions while importing) leaves as a tuple
        outs = [Tuple(v) if isinstance(v, list) else v
                for v in self._convert_nodes(self.graph)]
        body = outs[0] if len(outs) == 1 else Tuple(outs)
        fn = Function(self.inputs + self.weights, body).with_attr(
            "output_names", tuple(o.name for o in self.graph.output))
        return IRModule.from_expr(fn), self.params

    def _lookup_output(self, name):
        if name not in self.env:
            raise ConversionError(f"graph output {name!r} is not produced by any node")
        return self.env[name]


def _takes(fn, name) -> bool:
    """Whether converter ``fn`` declares the parameter ``name`` (``_outputs``: how many
    outputs the node uses, for Split, Dropout, TopK...)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params
