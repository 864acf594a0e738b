"""``relay.expr``: expression classes, ``var`` / ``const`` with Relay's exact rules,
and ``TupleWrapper`` (what Relay's multi-output ops return)."""

from __future__ import annotations

from ...errors import Error
from ...ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ...ir.expr import const as _const
from ...ir.printer import astext
from ...ir.types import TensorType
from ...transform.bind import bind as _bind

RelayExpr = Expr


def _dtype(dtype):
    """TVM spells bool ``uint1`` too."""
    return "bool" if dtype == "uint1" else dtype


def var(name_hint: str, type_annotation=None, shape=None, dtype: str = "float32",
        span=None) -> Var:
    """Relay's ``var``: ``shape`` makes a tensor type of ``dtype``; a string annotation is
    a scalar type of that dtype; ``dtype`` alone annotates nothing (relayir's own ``var``
    makes it a scalar)."""
    dtype = _dtype(dtype)
    if type_annotation is not None and shape is not None:
        raise Error(f"var {name_hint!r}: give type_annotation or shape, not both")
    if shape is not None:
        type_annotation = TensorType(tuple(shape), dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), _dtype(type_annotation))
    return Var(name_hint, type_annotation)


def const(value, dtype=None, span=None) -> Constant:
    """Relay's ``const``: ``dtype`` may also be a type (``relay.scalar_type("int32")``),
    whose dtype is taken, as numpy takes it in Relay."""
    if dtype is not None and not isinstance(dtype, str):
        dtype = getattr(dtype, "dtype", dtype)
    return _const(value, _dtype(dtype))


class TupleWrapper:
    """A tuple-valued expression with its arity: ``w[i]`` is a ``TupleGetItem``,
    ``w.astuple()`` the expression itself (it is not an ``Expr``, as in Relay)."""

    def __init__(self, tuple_value: Expr, size: int):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self) -> Expr:
        return self.tuple_value

    def astext(self) -> str:
        return astext(self.tuple_value)

    def __getitem__(self, index: int) -> TupleGetItem:
        if not -self.size <= index < self.size:
            raise IndexError(f"tuple index {index} out of range for {self.size} fields")
        return TupleGetItem(self.tuple_value, index % self.size)

    def __len__(self) -> int:
        return self.size

    def __iter__(self):
        return (self[i] for i in range(self.size))

    def __repr__(self) -> str:
        return f"TupleWrapper({self.astext()}, {self.size})"


def bind(expr: Expr, binds: dict) -> Expr:
    """``relay.bind``: substitute variables (or, for a function, its parameters)."""
    return _bind(expr, binds)


__all__ = ["Call", "Constant", "Expr", "Function", "GlobalVar", "If", "Let", "RefCreate",
           "RefRead", "RefWrite", "RelayExpr", "Tuple", "TupleGetItem", "TupleWrapper", "Var",
           "bind", "const", "var"]
