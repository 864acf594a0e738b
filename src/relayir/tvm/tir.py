"""``tvm.tir``: the few loop-IR names Relay code uses for shapes and constants. A
``tir.IntImm`` is a Python int, ``tir.Any()`` relayir's ``Any``, ``tir.Var`` a
``SymbolicDim``; each name works both as a constructor and in ``isinstance``.
relayir's loop IR is ``relayir.tir``, with its own API."""

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


def _static(op: str, a, b) -> None:
    if not (isinstance(a, int) and isinstance(b, int)):
        raise Error(f"tir.{op}({a!r}, {b!r}): relayir shapes have no symbolic arithmetic "
                    f"(a dim is an int, a named dim or Any)")


def indexdiv(a, b, span=None):
    _static("indexdiv", a, b)
    return a // b


def indexmod(a, b, span=None):
    _static("indexmod", a, b)
    return a % b


floordiv = indexdiv
floormod = indexmod

__all__ = ["Any", "FloatImm", "IntImm", "SizeVar", "Var", "const", "floordiv", "floormod",
           "indexdiv", "indexmod"]
