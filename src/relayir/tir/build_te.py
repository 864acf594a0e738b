"""A Relay primitive function as a tensor-expression graph.

Parameters become placeholders (a tuple-typed parameter becomes one placeholder per
field, in order), scalar constants become constant computes (folded into their
readers), larger constants become embedded constant tensors, and every op call applies
the op's rule from the compute table. Named symbolic dimensions (``SymbolicDim``)
become ``Var``s shared by name (dim expressions: see ``_Dims``); each ``Any`` dimension
becomes a fresh ``Var`` (``anydim0``, ...), so a kernel with dynamic shapes takes every
extent it loops over in its ``dims`` argument. The graph's ``input_types`` /
``output_types`` name those dims (``SymbolicDim("anydim0")``): a caller reads each dim's
value off the first argument that has it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import Error
from ..ir.dim_expr import DimExpr, DimOp, dim_symbols
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


DIM_EXPR_PREFIX = "dimexpr"
_TE_DIM_OPS = {"floordiv": E.FloorDiv, "floormod": E.FloorMod, "min": E.Min, "max": E.Max}


class _Dims:
    """The kernel's dim ``Var``s. A dim expression (``n - 1``) that an argument's type
    holds is a ``Var`` of its own (``dimexpr0``), read off that argument like a named
    dim; one only temporaries hold is computed from its names' ``Var``s when every name
    is an argument's dim, else it too is a ``Var`` (no argument holds it: the kernel
    then runs its reference)."""

    def __init__(self, argument_types=()):
        self.vars: dict[str, E.Var] = {}
        self.exprs: dict = {}  # dim expression -> its Var
        self.fresh = 0
        self.bare: set[str] = set()
        for ty in argument_types:
            for d in ty.shape:
                if isinstance(d, SymbolicDim):
                    self.bare.add(d.name)
        for ty in argument_types:
            for d in ty.shape:
                if isinstance(d, DimExpr) and not isinstance(d, SymbolicDim):
                    self.expr_var(d)

    def _fresh(self, prefix: str) -> E.Var:
        while f"{prefix}{self.fresh}" in self.vars or f"{prefix}{self.fresh}" in self.bare:
            self.fresh += 1
        name = f"{prefix}{self.fresh}"
        v = self.vars[name] = E.Var(name)
        return v

    def any_var(self) -> E.Var:
        return self._fresh(ANY_DIM_PREFIX)

    def expr_var(self, d) -> E.Var:
        v = self.exprs.get(d)
        if v is None:
            v = self.exprs[d] = self._fresh(DIM_EXPR_PREFIX)
        return v

    def name_var(self, name: str) -> E.Var:
        v = self.vars.get(name)
        if v is None:
            v = self.vars[name] = E.Var(name)
        return v

    def dim(self, d):
        if isinstance(d, int):
            return E.IntImm(d)
        if isinstance(d, SymbolicDim):
            return self.name_var(d.name)
        if d in self.exprs or not dim_symbols(d) <= self.bare:
            return self.expr_var(d)
        if isinstance(d, DimOp):
            return _TE_DIM_OPS[d.op](self.dim(d.args[0]), self.dim(d.args[1]))
        out = None
        for mono, coef in d.terms:
            term = None if coef == 1 else E.IntImm(coef)
            for atom in mono:
                v = self.dim(atom)
                term = v if term is None else E.Mul(term, v)
            out = term if out is None else E.Add(out, term)
        return E.Add(out, E.IntImm(d.const)) if d.const else out

    def shape(self, ty: TensorType, where: str) -> tuple:
        out = []
        for d in ty.shape:
            if isinstance(d, (int, DimExpr)):
                out.append(self.dim(d))
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
    argument_types = [t for p in func.params
                      for t in _flatten_types(p.checked_type if p.has_type else p.type_annotation)]
    dims = _Dims([t for t in argument_types + _flatten_types(func.body.checked_type)
                  if isinstance(t, TensorType)])
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
    """``ty`` with each ``Any`` and dim expression replaced by the name of the ``Var``
    standing for it."""
    if all(isinstance(d, (int, SymbolicDim)) for d in ty.shape):
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
