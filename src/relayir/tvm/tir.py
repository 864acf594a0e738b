"""``tvm.tir``: the few loop-IR names Relay code uses for shapes and constants. A
``tir.IntImm`` is a Python int, ``tir.Any()`` relayir's ``Any``, ``tir.Var`` a
``SymbolicDim``; each name works both as a constructor and in ``isinstance``.
relayir's loop IR is ``relayir.tir``, with its own API. ``indexdiv`` / ``indexmod`` of a
named dim give ``Any()`` (relayir has no symbolic shape arithmetic)."""

from __future__ import annotations

from ..errors import Error
from ..ir.types import Any, SymbolicDim


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


def _dims_only(op: str, a, b) -> None:
    for v in (a, b):
        if not isinstance(v, (int, SymbolicDim, Any)):
            raise Error(f"tir.{op}({a!r}, {b!r}): relayir.tvm's tir takes shape dims (ints, "
                        f"named dims, Any), found {type(v).__name__}")


def indexdiv(a, b, span=None):
    """``a // b`` of ints; of a named dim, ``Any()``: relayir has no symbolic shape
    arithmetic yet, so the quotient is a dim type inference treats as unknown."""
    _dims_only("indexdiv", a, b)
    return a // b if isinstance(a, int) and isinstance(b, int) else Any()


def indexmod(a, b, span=None):
    _dims_only("indexmod", a, b)
    return a % b if isinstance(a, int) and isinstance(b, int) else Any()


floordiv = indexdiv
floormod = indexmod

__all__ = ["Any", "FloatImm", "IntImm", "SizeVar", "Var", "const", "floordiv", "floormod",
           "indexdiv", "indexmod"]
