"""A Relay primitive function as a tensor-expression graph.

Parameters become placeholders (a tuple-typed parameter becomes one placeholder per
field, in order), scalar constants become constant computes (folded into their
readers), larger constants become embedded constant tensors, and every op call applies
the op's rule from the compute table. Named symbolic dimensions (``SymbolicDim``)
become ``Var``s shared by name; each ``Any`` dimension becomes a fresh ``Var``
(``anydim0``, ...), so a kernel with dynamic shapes takes every extent it loops over in
its ``dims`` argument. The graph's ``input_types`` / ``output_types`` name those dims
(``SymbolicDim("anydim0")``): a caller reads each dim's value off the first argument
that has it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import Error
from ..ir.expr import Call, Constant, Function, Op, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.types import Any, SymbolicDim, TensorType, TupleType
from ..te import expr as E
from ..te.computes import COMPUTE, OutType
from ..te.tensor import PlaceholderOp, Tensor, compute


class LoweringError(Error):
    """A primitive function cannot be lowered to a kernel (an unsupported construct)."""


class ConstantOp(PlaceholderOp):
    """A tensor whose values are known when the kernel is compiled."""

    __slots__ = ("data",)

    def __init__(self, name: str, data: np.ndarray):
        super().__init__(name)
        self.data = data


@dataclasses.dataclass
class TEGraph:
    inputs: list  # placeholders, in argument order
    input_types: list  # their Relay TensorTypes
    outputs: list  # output tensors
    output_types: list
    dim_vars: list  # symbolic dims, in first-use order


ANY_DIM_PREFIX = "anydim"


class _Dims:
    def __init__(self):
        self.vars: dict[str, E.Var] = {}
        self.fresh = 0

    def any_var(self) -> E.Var:
        while f"{ANY_DIM_PREFIX}{self.fresh}" in self.vars:
            self.fresh += 1
        v = self.vars[f"{ANY_DIM_PREFIX}{self.fresh}"] = E.Var(f"{ANY_DIM_PREFIX}{self.fresh}")
        return v

    def shape(self, ty: TensorType, where: str) -> tuple:
        out = []
        for d in ty.shape:
            if isinstance(d, int):
                out.append(E.IntImm(d))
            elif isinstance(d, SymbolicDim):
                v = self.vars.get(d.name)
                if v is None:
                    v = self.vars[d.name] = E.Var(d.name)
                out.append(v)
            elif isinstance(d, Any):
                out.append(self.any_var())
            else:
                raise LoweringError(f"{where}: unexpected dimension {d!r}")
        return tuple(out)

    def spec(self, ty, where: str):
        if isinstance(ty, TupleType):
            return [self.spec(f, where) for f in ty.fields]
        if not isinstance(ty, TensorType):
            raise LoweringError(f"{where} has type {ty}; kernels take and give tensors")
        return OutType(self.shape(ty, where), ty.dtype)


def _flatten_types(ty) -> list:
    if isinstance(ty, TupleType):
        return [t for f in ty.fields for t in _flatten_types(f)]
    return [ty]


def _flatten(value) -> list:
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten(v)]
    return [value]


def _typed(func: Function) -> Function:
    if func.body.has_type:
        return func
    from ..ir.module import IRModule
    from ..typing.infer import infer_module

    mod = infer_module(IRModule.from_expr(func))
    return mod["main"]


def build_te(func: Function) -> TEGraph:
    """The tensor-expression graph of a primitive function's body."""
    func = _typed(func)
    dims = _Dims()
    inputs, input_types, values = [], [], {}
    for p in func.params:
        ty = p.checked_type if p.has_type else p.type_annotation
        tensors = []
        for t in _flatten_types(ty):
            spec = dims.spec(t, f"parameter %{p.name_hint}")
            ph = Tensor(spec.shape, spec.dtype, f"p{len(inputs)}", PlaceholderOp(p.name_hint))
            inputs.append(ph)
            input_types.append(_named_type(spec.shape, t))
            tensors.append(ph)
        values[p] = tensors if isinstance(ty, TupleType) else tensors[0]
    for node in post_order(func.body):
        if node in values:
            continue
        values[node] = _value(node, values, dims)
    result = _flatten(values[func.body])
    out_types = [_named_type(t.shape, ty)
                 for t, ty in zip(result, _flatten_types(func.body.checked_type))]
    return TEGraph(inputs, input_types, result, out_types, list(dims.vars.values()))


def _named_type(shape, ty: TensorType) -> TensorType:
    """``ty`` with each ``Any`` replaced by the name of the ``Var`` standing for it."""
    if not any(isinstance(d, Any) for d in ty.shape):
        return ty
    return TensorType(tuple(SymbolicDim(s.name) if isinstance(s, E.Var) else d
                            for s, d in zip(shape, ty.shape)), ty.dtype)


def _value(node, values: dict, dims: _Dims):
    if isinstance(node, Constant):
        data = node.data
        if data.ndim == 0:
            v = data.item()
            return compute((), lambda: E.const(v, data.dtype.name), name="const",
                           tag="elemwise")
        shape = tuple(E.IntImm(d) for d in data.shape)
        return Tensor(shape, data.dtype.name, "const", ConstantOp("const", data))
    if isinstance(node, Tuple):
        return [values[f] for f in node.fields]
    if isinstance(node, TupleGetItem):
        return values[node.tuple_value][node.index]
    if isinstance(node, Call) and isinstance(node.op, Op):
        name = node.op.name
        if name not in COMPUTE:
            raise LoweringError(f"operator {name} has no compute rule for the C backend")
        args = [values[a] for a in node.args]
        spec = dims.spec(node.checked_type, f"the result of {name}")
        try:
            return COMPUTE.get(name)(node.attrs, args, spec)
        except E.TEError as exc:
            raise LoweringError(f"{name}: {exc}") from None
    if isinstance(node, (Op, Var)):
        return None
    raise LoweringError(f"a primitive function cannot contain {type(node).__name__} nodes")
