"""Relay → TVM's graph JSON: the static schedule the graph executor runs.

The input is ``@main`` after ``FuseOps``: a dataflow graph of calls of primitive
functions over the inputs and constants. Each node of the JSON is

- ``{"op": "null", "name": ..., "inputs": []}`` for an input of ``@main`` (first, in
  parameter order) or a constant (a *param*, named ``p0``, ``p1``, ...; its value goes
  in the params dict);
- ``{"op": "tvm_op", "name": ..., "attrs": {"func_name", "num_inputs", "num_outputs",
  "flatten_data"}, "inputs": [[node, index, 0], ...]}`` for a call of a primitive
  function: one kernel. Tuple arguments and tuple results are flattened.

``node_row_ptr[i]`` is the first entry (output) of node ``i``; ``heads`` are the entries
``@main`` returns (a returned tuple is flattened), ``output_names`` their names when
``@main``'s ``output_names`` attribute gives one per head (an ONNX model's output names:
``get_output("prob")``); ``attrs`` holds per entry
``shape``, ``dltype`` and the memory plan's ``storage_id`` and ``storage_offset`` (bytes;
the intermediates share storage 0 at 64-byte aligned offsets). Nodes are in execution
order (post order), so the executor runs them front to back.

Structurally equal primitive functions share one kernel. An op call that fusion left
unwrapped (``FuseOps`` disabled) becomes a one-op primitive function here. Only static
shapes can be planned, and only dataflow can be scheduled: a dynamic dimension, an
``if``, a ``match``, a closure, a reference or a call of a global function is an error
that suggests the VM.
"""

from __future__ import annotations

import numpy as np

from ..errors import Error
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    Let,
    Op,
    Tuple,
    TupleGetItem,
    Var,
    short_text,
)
from ..ir.node_table import NODES
from ..ir.structural import structural_equal, structural_hash
from ..ir.types import FuncType, TensorType, TupleType, Type
from ..runtime.kernels import flatten_type
from ..runtime.memory_plan import MemoryPlan, plan_memory
from .kernel_names import kernel_base_name


class GraphCodegenError(Error):
    """``@main`` cannot be turned into a static graph (dynamic shapes, control flow)."""


_VM_HINT = 'compile it with the VM instead (relayir.create_executor("vm", ...))'


def check_static(ty: Type, where: str) -> None:
    """Raise unless every tensor in ``ty`` has a static shape; name the dynamic dim."""
    for t in flatten_type(ty) if isinstance(ty, (TensorType, TupleType)) else ():
        for i, d in enumerate(t.shape):
            if not isinstance(d, int):
                raise GraphCodegenError(
                    f"the graph executor needs static shapes, but {where} has type {t} whose "
                    f"dimension {i} is {d!r} (dynamic); give it a static shape or {_VM_HINT}")


class GraphCodegen:
    """Builds the graph JSON, the params and the list of kernels of one function."""

    def __init__(self, func: Function):
        self.func = func
        self.nodes: list[dict] = []
        self.row_ptr: list[int] = [0]
        self.shapes: list[list[int]] = []
        self.dtypes: list[str] = []
        self.params: dict[str, np.ndarray] = {}
        self.functions: list[tuple[str, Function]] = []  # (kernel name, primitive fn)
        self._by_hash: dict[int, list[tuple[Function, str]]] = {}
        self._names: set[str] = set()
        self._value: dict[Expr, object] = {}  # expr -> entry (nid, i) or tuple of those

    # ------------------------------------------------------------ nodes

    def _add_node(self, node: dict, types: list[TensorType]) -> int:
        nid = len(self.nodes)
        self.nodes.append(node)
        self.row_ptr.append(self.row_ptr[-1] + len(types))
        for t in types:
            self.shapes.append(list(t.shape))
            self.dtypes.append(t.dtype)
        return nid

    def _input(self, v: Var) -> None:
        ty = v.checked_type
        if not isinstance(ty, TensorType):
            raise GraphCodegenError(
                f"input %{v.name_hint} of @main has type {ty}; the graph executor takes "
                f"tensor inputs only ({_VM_HINT})")
        check_static(ty, f"input %{v.name_hint}")
        # two parameters may share a name hint (%x, %x): the graph names inputs, so the
        # second becomes x_1 (positional calls still reach both)
        name = self._unique(v.name_hint)
        nid = self._add_node({"op": "null", "name": name, "inputs": []}, [ty])
        self._value[v] = (nid, 0)

    def _constant(self, c: Constant):
        name = self._unique(f"p{len(self.params)}")
        self.params[name] = c.data
        t = TensorType(c.data.shape, c.data.dtype.name)
        return (self._add_node({"op": "null", "name": name, "inputs": []}, [t]), 0)

    def _unique(self, base: str) -> str:
        name, k = base, 0
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def _kernel_name(self, fn: Function) -> str:
        h = structural_hash(fn)
        for other, name in self._by_hash.get(h, ()):
            if other is fn or structural_equal(other, fn):
                return name
        name = self._unique(kernel_base_name(fn))
        self._by_hash.setdefault(h, []).append((fn, name))
        self.functions.append((name, fn))
        return name

    def _call(self, call: Call, fn: Function):
        args = []
        for a in call.args:
            _flatten_value(self._value[a], args)
        outs = flatten_type(fn.checked_type.ret_type)
        for i, t in enumerate(outs):
            check_static(t, f"output {i} of {short_text(call)}")
        name = self._kernel_name(fn)
        node = {"op": "tvm_op", "name": name,
                "attrs": {"func_name": name, "num_inputs": str(len(args)),
                          "num_outputs": str(len(outs)), "flatten_data": "0"},
                "inputs": [[nid, i, 0] for nid, i in args]}
        nid = self._add_node(node, outs)
        return _structure(fn.checked_type.ret_type, nid)

    # ------------------------------------------------------------ traversal

    def run(self) -> dict:
        for p in self.func.params:
            self._input(p)
        body = self.func.body
        stack: list[tuple[Expr, int]] = [(body, 0)]
        value = self._value
        while stack:
            e, state = stack.pop()
            if state == 0 and e in value:
                continue
            t = type(e)
            if t is Let:
                if state == 0:  # value, then bind the variable, then the body
                    stack += [(e, 2), (e.body, 0), (e, 1), (e.value, 0)]
                elif state == 1:
                    value[e.var] = value[e.value]
                else:
                    value[e] = value[e.body]
                continue
            children = _children(e)
            if state == 0 and children:
                stack.append((e, 1))
                stack.extend((c, 0) for c in reversed(children) if c not in value)
                continue
            value[e] = self._visit(e)
        heads: list = []
        _flatten_value(value[body], heads)
        check_static(self.func.checked_type.ret_type, "the result of @main")
        return self._graph(heads)

    def _visit(self, e: Expr):
        t = type(e)
        if t is Constant:
            return self._constant(e)
        if t is Var:
            raise GraphCodegenError(f"@main uses {short_text(e)}, which it does not bind")
        if t is Tuple:
            return tuple(self._value[f] for f in e.fields)
        if t is TupleGetItem:
            return self._value[e.tuple_value][e.index]
        if t is Call and type(e.op) is Function and e.op.is_primitive:
            return self._call(e, e.op)
        if t is Call and type(e.op) is Op:
            return self._call(e, _wrap_op_call(e))
        if t is Call:
            what = ("a call of a global function" if type(e.op) is GlobalVar
                    else "a call of a closure or a function value")
        else:
            what = f"a {t.__name__} node"
        raise GraphCodegenError(
            f"the graph executor runs dataflow only; {short_text(e)} is {what}; {_VM_HINT}")

    def _graph(self, heads: list) -> dict:
        arg_nodes = [i for i, n in enumerate(self.nodes) if n["op"] == "null"]
        graph = {
            "nodes": self.nodes,
            "arg_nodes": arg_nodes,
            "heads": [[nid, i, 0] for nid, i in heads],
            "attrs": {
                "dltype": ["list_str", self.dtypes],
                "shape": ["list_shape", self.shapes],
            },
            "node_row_ptr": self.row_ptr,
        }
        names = self.func.attrs.get("output_names")
        if names is not None and len(names) == len(heads):
            graph["output_names"] = [str(n) for n in names]
        plan = plan_memory(graph)
        graph["attrs"]["storage_id"] = ["list_int", list(plan.storage_ids)]
        graph["attrs"]["storage_offset"] = ["list_int", list(plan.storage_offsets)]
        return graph


def _children(e: Expr) -> tuple:
    """What the schedule evaluates before ``e``: a kernel call's arguments (its callee
    is the kernel, not a value) and a tuple's or projection's input. Any other node
    has none here: ``_visit`` rejects it before its children could matter."""
    t = type(e)
    if t is Call:
        return e.args if type(e.op) in (Op, Function) else ()
    return NODES[t].children(e) if t in _PROJECTIONS else ()


_PROJECTIONS = frozenset({Tuple, TupleGetItem})


def _structure(ty: Type, nid: int):
    """The entries of a node whose result has type ``ty`` (nested like ``ty``)."""
    counter = iter(range(1 << 30))

    def build(t):
        if isinstance(t, TupleType):
            return tuple(build(f) for f in t.fields)
        return (nid, next(counter))

    return build(ty)


def _flatten_value(v, out: list) -> None:
    stack = [v]
    while stack:
        x = stack.pop()
        if type(x) is tuple and len(x) == 2 and type(x[0]) is int:
            out.append(x)
        else:
            stack.extend(reversed(x))


def _wrap_op_call(call: Call) -> Function:
    """``op(args)`` as ``fn (%p0, ..., Primitive=1) { op(%p0, ...) }`` (typed)."""
    params = []
    for i, a in enumerate(call.args):
        p = Var(f"p{i}", a.checked_type)
        p.set_checked_type(a.checked_type)
        params.append(p)
    body = Call(call.op, tuple(params), call.attrs, call.type_args)
    ret = call.checked_type
    body.set_checked_type(ret)
    fn = Function(params, body, ret, attrs={"Primitive": 1})
    fn.set_checked_type(FuncType([p.checked_type for p in params], ret))
    return fn


def graph_codegen(func: Function) -> tuple[dict, dict[str, np.ndarray], list[tuple[str, Function]]]:
    """``(graph, params, functions)`` of a typed, fused ``@main``."""
    cg = GraphCodegen(func)
    graph = cg.run()
    return graph, cg.params, cg.functions


def memory_plan(graph: dict) -> MemoryPlan:
    return MemoryPlan.from_graph(graph)


__all__ = ["GraphCodegen", "GraphCodegenError", "check_static", "graph_codegen", "memory_plan"]
