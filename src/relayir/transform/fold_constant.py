"""``FoldConstant``: evaluate every subgraph whose inputs are all constants, once.

One bottom-up sweep (an ``ExprMutator``: explicit worklist, each node once): when a
call of a primitive op has only constant arguments (``Constant``\\ s, or tuples of them
for ops such as ``concatenate``), its numpy reference, the same function the
interpreter runs, computes the value right there from the arguments' arrays, and a
``Constant`` replaces the call. Its parent then sees a constant argument in turn, so a
whole constant subgraph folds in the same sweep. Nothing re-runs type inference or
interpretation per node: folding keeps every node's type, so a new constant is typed
from its array and a rebuilt parent takes its old type.

What folds, following TVM's ``FoldConstant``:

- calls of ``Op``\\ s with at least one argument, all constant. A call with no
  arguments (``zeros``, ``ones``) is kept on purpose, as in TVM: it is already as
  small as a constant can be, and folding ``ones(shape=(4096, 4096))`` would only put
  64 MB into the program. Ops with inputs are folded even when the result is larger
  than the inputs (``broadcast_to``, ``tile``), as in TVM;
- an op returning a tuple (``split``) becomes a ``Tuple`` of constants, and a
  projection of a tuple whose dropped fields hold no computation (constants,
  variables) becomes the field;
- ``let %v = <constant>; body``: ``%v`` is replaced by the constant and the ``let``
  dropped;
- ``shape_of(x)`` of an ``x`` whose type is static becomes the shape (``x`` is still
  computed where something else uses it: ops have no effects), as in TVM.

What is left alone: calls of functions, closures and constructors (a function may
have effects; inlining is ``Inline``'s job), reference operations, ``if``/``match``
and everything inside a ``Primitive=1`` function (fusion chose its body). (TVM folds
an ``if`` on a constant; here the branch alone may not type again: ``if (c) { Some(x) }
else { None }`` folded to ``None`` leaves ``Option``'s argument unknown to a ``match``
on it — fuzz seed 51000.) A call
whose evaluation raises (an out-of-range ``take`` index) is kept, so the program
still fails where and when it did; so is a call whose type is not static.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, Expr, Let, Op, Tuple, TupleGetItem, Var
from ..ir.module import IRModule
from ..ir.types import TensorType, TupleType
from .analysis import TypedMutator, typed_module, with_type
from .pass_infra import Pass, PassContext, module_pass, register_pass

_NOT_FOLDED: frozenset[str] = frozenset()  # ops never evaluated at compile time


def _is_constant(e: Expr) -> bool:
    """A ``Constant`` or a (nested) tuple of them: what TVM calls a complex constant."""
    if type(e) is Constant:
        return True
    return type(e) is Tuple and all(_is_constant(f) for f in e.fields)


def _value(e: Expr):
    if type(e) is Constant:
        return e.data
    return tuple(_value(f) for f in e.fields)


def _is_atom(e: Expr) -> bool:
    """No computation: dropping it from a tuple loses nothing."""
    return type(e) in (Constant, Var) or (type(e) is Tuple and all(_is_atom(f) for f in e.fields))


_NP_DTYPES: dict[str, np.dtype] = {}


def _constant(array, ty: TensorType) -> Constant | None:
    """A constant of type ``ty`` holding ``array``, or None when they disagree."""
    a = np.asarray(array)
    if a.shape != ty.shape:
        return None
    dtype = _NP_DTYPES.get(ty.dtype)
    if dtype is None:
        dtype = _NP_DTYPES[ty.dtype] = np.dtype(ty.dtype)
    if a.dtype != dtype:
        a = a.astype(dtype)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    if a.flags.writeable:
        # fresh from the reference (the inputs are read-only, and so are their views):
        # nobody else holds it, so freeze it instead of letting Constant copy it
        a.flags.writeable = False
    return with_type(Constant(a), ty)


def _as_expr(value, ty) -> Expr | None:
    if isinstance(ty, TensorType):
        if isinstance(value, (tuple, list)):
            return None
        return _constant(value, ty)
    if isinstance(ty, TupleType) and isinstance(value, (tuple, list)) and len(value) == len(
            ty.fields):
        fields = [_as_expr(v, t) for v, t in zip(value, ty.fields)]
        if any(f is None for f in fields):
            return None
        return with_type(Tuple(tuple(fields)), ty)
    return None


def _static(ty) -> bool:
    if isinstance(ty, TensorType):
        return ty.is_static
    return isinstance(ty, TupleType) and all(_static(f) for f in ty.fields)


class ConstantFolder(TypedMutator):
    """The folding sweep over one expression; ``folded`` counts the calls it evaluated.

    Folding keeps types, so a node rebuilt around folded children keeps its own."""

    def __init__(self) -> None:
        super().__init__()
        self.folded = 0

    def visit_call(self, call: Call) -> Expr:
        op = call.op
        if type(op) is Op and op.name == "shape_of":
            shape = self._static_shape(call)
            if shape is not None:
                self.folded += 1
                return shape
        if type(op) is Op and call.args and op.name not in _NOT_FOLDED:
            args = [self.visit(a) for a in call.args]  # folded already: memo hits
            if all(_is_constant(a) for a in args):
                folded = self._evaluate(call, args)
                if folded is not None:
                    self.folded += 1
                    return folded
        return super().visit_call(call)

    @staticmethod
    def _static_shape(call: Call) -> Expr | None:
        """``shape_of(x)`` as a constant when ``x``'s type fixes every extent."""
        arg, ty = call.args[0].checked_type, call.checked_type
        if not (isinstance(arg, TensorType) and arg.is_static and _static(ty)):
            return None
        return _constant(np.array(arg.shape, dtype=ty.dtype), ty)

    @staticmethod
    def _evaluate(call: Call, args: list) -> Expr | None:
        ty = call.checked_type
        if not _static(ty):
            return None
        try:
            out = call.op.reference(*[_value(a) for a in args], call.attrs)
        except Exception:  # noqa: BLE001  (kept: it fails at run time, as before)
            return None
        return _as_expr(out, ty)

    def visit_tuple_getitem(self, t: TupleGetItem) -> Expr:
        new = super().visit_tuple_getitem(t)
        tup = new.tuple_value
        if type(tup) is Tuple and all(
                _is_atom(f) for i, f in enumerate(tup.fields) if i != new.index):
            return tup.fields[new.index]
        return new

    def visit_let(self, let: Let) -> Expr:
        chain = []
        e = let
        while type(e) is Let and e not in self.memo:
            value = self.visit(e.value)
            if type(value) is Constant:
                self.memo[e.var] = value  # every use of the variable reads the constant
                chain.append((e, e.var, None))  # inlined: the let is gone
            else:
                chain.append((e, self.visit(e.var), value))
            e = e.body
        return self.rebuild_lets(chain, self.visit(e))

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        return super().visit_function(fn)


def fold_constant(expr: Expr) -> Expr:
    """Fold a type-checked expression (a function, or anything closed)."""
    with np.errstate(all="ignore"):  # as at run time: inf and nan are values, not errors
        return ConstantFolder().visit(expr)


@module_pass(opt_level=2, name="FoldConstant")
def _fold_constant(mod: IRModule, ctx: PassContext) -> IRModule:
    mod = typed_module(mod)
    return mod.with_functions({gv: fold_constant(fn) for gv, fn in mod.functions.items()})


def FoldConstant() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``FoldConstant`` (opt level 2): evaluate constant subgraphs at compile time."""
    return _fold_constant


register_pass("FoldConstant", FoldConstant)
