"""``tvm.tir``: the few loop-IR names Relay code uses for shapes and constants. A
``tir.IntImm`` is a Python int, ``tir.Any()`` relayir's ``Any``, ``tir.Var`` a
``SymbolicDim``; each name works both as a constructor and in ``isinstance``.
relayir's loop IR is ``relayir.tir``, with its own API. ``indexdiv`` / ``indexmod`` /
``floordiv`` / ``floormod`` / ``min`` / ``max`` of dims build dim expressions
(``relayir.ir.dim_expr``), as ``d - 1`` and ``2 * d`` do with Python's operators."""

from __future__ import annotations

import numpy as np

from ...errors import Error
from ...ir import dim_expr
from ...ir.dim_expr import is_dim
from ...ir.types import Any, SymbolicDim


class _Alias(type):
    """A TVM class name standing for a relayir (or Python) type: calling it makes the
    relayir value, ``isinstance`` checks against the relayir type."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, cls._type)

    def __call__(cls, *args, **kwargs):
        return cls._make(*args, **kwargs)


class IntImm(metaclass=_Alias):
    _type = int

    @staticmethod
    def _make(dtype: str, value, span=None) -> int:
        return int(value)


class FloatImm(metaclass=_Alias):
    _type = float

    @staticmethod
    def _make(dtype: str, value, span=None) -> float:
        return float(value)


class Var(metaclass=_Alias):
    _type = SymbolicDim

    @staticmethod
    def _make(name: str, dtype="int32", span=None) -> SymbolicDim:
        return SymbolicDim(name)


SizeVar = Var


def const(value, dtype: str | None = None, span=None):
    return value


def _dims_only(op: str, *args) -> None:
    for v in args:
        if not is_dim(v) and not isinstance(v, np.integer):
            raise Error(f"tir.{op}{tuple(args)!r}: relayir.tvm's tir takes shape dims (ints, "
                        f"named dims, dim expressions, Any), found {type(v).__name__}")


def indexdiv(a, b, span=None):
    """``a // b`` rounding down: an int of ints, else a dim expression
    (``floordiv(n, 4)``) that type inference carries symbolically."""
    _dims_only("indexdiv", a, b)
    return dim_expr.floordiv(a, b)


def indexmod(a, b, span=None):
    _dims_only("indexmod", a, b)
    return dim_expr.floormod(a, b)


def min(a, b, span=None):  # noqa: A001  (TVM's name)
    _dims_only("min", a, b)
    return dim_expr.dim_min(a, b)


def max(a, b, span=None):  # noqa: A001  (TVM's name)
    _dims_only("max", a, b)
    return dim_expr.dim_max(a, b)


floordiv = indexdiv
floormod = indexmod

__all__ = ["Any", "FloatImm", "IntImm", "SizeVar", "Var", "const", "floordiv", "floormod",
           "indexdiv", "indexmod", "max", "min"]
