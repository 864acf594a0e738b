"""Scalar expressions of tensor computations (TVM's ``PrimExpr``).

Nodes are immutable and typed (``dtype`` is a dtype string). Equality and hashing are
structural, except for ``Var`` (identity): two ``i + 1`` built from the same ``i`` are
equal, so lowering can share common subexpressions. Each node caches its hash when it
is built, so hashing and comparing shared subtrees stay cheap.

Operators build nodes: ``i * 4 + j``, ``x / y`` (float divide, or C's truncating
divide for integers), ``x // y`` and ``x % y`` (floor semantics, as in Python),
``a < b`` (a bool expression). ``==`` is structural equality, never a node: use
``equal(a, b)`` / ``not_equal(a, b)`` for the comparisons.

Expressions inside one kernel are small, so the helpers here recurse.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import Error

INDEX = "int64"  # the dtype of loop variables, shape dims and buffer offsets


def is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def is_int(dtype: str) -> bool:
    return dtype.startswith("int") or dtype.startswith("uint")


def is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint") or dtype == "bool"


class TEError(Error):
    """A tensor expression was built wrongly (mixed dtypes, a bad reduction)."""


class Expr:
    """Base of scalar expression nodes; ``_fields`` lists the constructor arguments."""

    __slots__ = ("dtype", "_hash")
    _fields: tuple[str, ...] = ()

    def _finish(self, dtype: str) -> None:
        self.dtype = dtype
        self._hash = hash((type(self).__name__, dtype, *self._key()))

    def _key(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if type(self) is not type(other) or self._hash != other._hash:
            return False
        return self.dtype == other.dtype and self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __setattr__(self, key, value):
        if hasattr(self, "_hash"):
            raise AttributeError(f"{type(self).__name__} is immutable")
        object.__setattr__(self, key, value)

    def __bool__(self):
        raise TEError(f"the truth value of expression {self} is not known while building; "
                      f"use select()/if_then_else() for a run-time choice")

    def __repr__(self) -> str:
        from .printer import expr_text

        return expr_text(self)

    # arithmetic
    def __add__(self, o):
        return Add(self, o)

    def __radd__(self, o):
        return Add(o, self)

    def __sub__(self, o):
        return Sub(self, o)

    def __rsub__(self, o):
        return Sub(o, self)

    def __mul__(self, o):
        return Mul(self, o)

    def __rmul__(self, o):
        return Mul(o, self)

    def __truediv__(self, o):
        return divide(self, o)

    def __rtruediv__(self, o):
        return divide(o, self)

    def __floordiv__(self, o):
        return FloorDiv(self, o)

    def __rfloordiv__(self, o):
        return FloorDiv(o, self)

    def __mod__(self, o):
        return FloorMod(self, o)

    def __rmod__(self, o):
        return FloorMod(o, self)

    def __neg__(self):
        return Sub(const(0, self.dtype), self)

    def __lt__(self, o):
        return LT(self, o)

    def __le__(self, o):
        return LE(self, o)

    def __gt__(self, o):
        return GT(self, o)

    def __ge__(self, o):
        return GE(self, o)

    def __and__(self, o):
        return And(self, o)

    def __rand__(self, o):
        return And(o, self)

    def __or__(self, o):
        return Or(self, o)

    def __ror__(self, o):
        return Or(o, self)

    def __invert__(self):
        return Not(self)

    def astype(self, dtype: str) -> Expr:
        return cast(dtype, self)


# ---------------------------------------------------------------- leaves


class IntImm(Expr):
    """An integer (or bool) constant."""

    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, value: int, dtype: str = INDEX):
        self.value = int(value)
        self._finish(dtype)


class FloatImm(Expr):
    """A float constant; ``-0.0`` and ``0.0`` differ, NaN equals NaN."""

    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, value: float, dtype: str = "float32"):
        self.value = float(value)
        self._finish(dtype)

    def _key(self) -> tuple:
        return (self.value.hex(),)


class Var(Expr):
    """A loop, shape or local variable. Equal only to itself."""

    __slots__ = ("name",)

    def __init__(self, name: str, dtype: str = INDEX):
        self.name = name
        self.dtype = dtype
        self._hash = id(self)

    def __eq__(self, other) -> bool:
        return self is other

    def __hash__(self) -> int:
        return self._hash


class IterVar:
    """A loop variable with its extent ``[0, extent)``; reduce axes are IterVars."""

    __slots__ = ("var", "extent")

    def __init__(self, var: Var, extent):
        self.var = var
        self.extent = as_index(extent)

    def __repr__(self) -> str:
        return f"IterVar({self.var.name}, {self.extent})"


# ---------------------------------------------------------------- operators


def _binary_dtypes(a, b) -> tuple[Expr, Expr]:
    """Coerce Python numbers to the other side's dtype; both sides must then agree."""
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        raise TEError(f"an expression needs at least one Expr operand, found {a!r}, {b!r}")
    if not isinstance(a, Expr):
        a = const(a, b.dtype)
    if not isinstance(b, Expr):
        b = const(b, a.dtype)
    if a.dtype != b.dtype:
        raise TEError(f"operand dtypes differ: {a} is {a.dtype} but {b} is {b.dtype}; "
                      f"cast one of them")
    return a, b


class BinaryOp(Expr):
    __slots__ = ("a", "b")
    _fields = ("a", "b")
    symbol = "?"

    def __init__(self, a, b):
        self.a, self.b = _binary_dtypes(a, b)
        self._finish(self._result_dtype(self.a.dtype))

    def _result_dtype(self, dtype: str) -> str:
        return dtype


class Add(BinaryOp):
    __slots__ = ()
    symbol = "+"


class Sub(BinaryOp):
    __slots__ = ()
    symbol = "-"


class Mul(BinaryOp):
    __slots__ = ()
    symbol = "*"


class Div(BinaryOp):
    """Float division."""

    __slots__ = ()
    symbol = "/"


class TruncDiv(BinaryOp):
    """Integer division rounding toward zero (C's ``/``)."""

    __slots__ = ()
    symbol = "/"


class TruncMod(BinaryOp):
    """Remainder with the sign of the dividend (C's ``%``, ``fmod``)."""

    __slots__ = ()
    symbol = "%"


class FloorDiv(BinaryOp):
    __slots__ = ()
    symbol = "//"


class FloorMod(BinaryOp):
    __slots__ = ()
    symbol = "%%"


class Min(BinaryOp):
    __slots__ = ()
    symbol = "min"


class Max(BinaryOp):
    __slots__ = ()
    symbol = "max"


class BitOp(BinaryOp):
    """Bitwise operators of integer (or bool) operands, C's semantics. A shift by a
    negative amount or by the bit width or more is undefined in C: computes guard it."""

    __slots__ = ()

    def __init__(self, a, b):
        super().__init__(a, b)
        if not (is_int(self.a.dtype) or self.a.dtype == "bool"):
            raise TEError(f"{type(self).__name__} needs integer operands, found {self.a.dtype}")


class BitAnd(BitOp):
    __slots__ = ()
    symbol = "&"


class BitOr(BitOp):
    __slots__ = ()
    symbol = "|"


class BitXor(BitOp):
    __slots__ = ()
    symbol = "^"


class ShiftLeft(BitOp):
    __slots__ = ()
    symbol = "<<"


class ShiftRight(BitOp):
    """Arithmetic for signed operands (as gcc and numpy do), logical for unsigned."""

    __slots__ = ()
    symbol = ">>"


class CmpOp(BinaryOp):
    __slots__ = ()

    def _result_dtype(self, dtype: str) -> str:
        return "bool"


class EQ(CmpOp):
    __slots__ = ()
    symbol = "=="


class NE(CmpOp):
    __slots__ = ()
    symbol = "!="


class LT(CmpOp):
    __slots__ = ()
    symbol = "<"


class LE(CmpOp):
    __slots__ = ()
    symbol = "<="


class GT(CmpOp):
    __slots__ = ()
    symbol = ">"


class GE(CmpOp):
    __slots__ = ()
    symbol = ">="


class And(BinaryOp):
    __slots__ = ()
    symbol = "&&"

    def __init__(self, a, b):
        super().__init__(a, b)
        if self.dtype != "bool":
            raise TEError(f"logical and needs bool operands, found {self.dtype}")


class Or(BinaryOp):
    __slots__ = ()
    symbol = "||"

    def __init__(self, a, b):
        super().__init__(a, b)
        if self.dtype != "bool":
            raise TEError(f"logical or needs bool operands, found {self.dtype}")


class Not(Expr):
    __slots__ = ("a",)
    _fields = ("a",)

    def __init__(self, a):
        if a.dtype != "bool":
            raise TEError(f"logical not needs a bool operand, found {a.dtype}")
        self.a = a
        self._finish("bool")


class Select(Expr):
    """``cond ? t : f``; only the chosen side is evaluated (guards out-of-range reads)."""

    __slots__ = ("cond", "t", "f")
    _fields = ("cond", "t", "f")

    def __init__(self, cond, t, f):
        if not isinstance(cond, Expr):
            cond = const(bool(cond), "bool")
        if cond.dtype != "bool":
            raise TEError(f"a select condition must be bool, found {cond.dtype}")
        self.cond = cond
        self.t, self.f = _binary_dtypes(t, f)
        self._finish(self.t.dtype)


class Cast(Expr):
    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, dtype: str, value):
        self.value = value
        self._finish(dtype)


class Call(Expr):
    """A math intrinsic (``exp``, ``sqrt``, ``pow``, ``isnan``, ...) by name."""

    __slots__ = ("name", "args")
    _fields = ("name", "args")

    def __init__(self, name: str, args, dtype: str):
        self.name = name
        self.args = tuple(args)
        self._finish(dtype)


class TensorRead(Expr):
    """``tensor[indices]``: one element of a tensor (a placeholder or a compute)."""

    __slots__ = ("tensor", "indices")
    _fields = ("tensor", "indices")

    def __init__(self, tensor, indices):
        self.tensor = tensor
        self.indices = tuple(as_index(i) for i in indices)
        if len(self.indices) != len(tensor.shape):
            raise TEError(f"{tensor.name} has rank {len(tensor.shape)} but is read with "
                          f"{len(self.indices)} indices")
        self._finish(tensor.dtype)


COMBINERS = ("sum", "prod", "max", "min", "and", "or", "argmax", "argmin")


class Reduce(Expr):
    """A commutative reduction of ``source`` over ``axes`` (TVM's ``Reduce``).

    The reduction runs in ``acc_dtype`` (float64 for sums of float32 by default in the
    op computes, so results match numpy's pairwise sums) and the result is cast to
    ``dtype``. ``argmax``/``argmin`` give ``index`` (an int64 expression of the reduce
    variables) of the first extreme (the last one when ``last``).
    """

    __slots__ = ("combiner", "source", "axes", "acc_dtype", "index", "last")
    _fields = ("combiner", "source", "axes", "acc_dtype", "index", "last")

    def __init__(self, combiner: str, source: Expr, axes, dtype: str | None = None,
                 acc_dtype: str | None = None, index: Expr | None = None, last: bool = False):
        if combiner not in COMBINERS:
            raise TEError(f"unknown reduction {combiner!r}; expected one of {COMBINERS}")
        self.combiner = combiner
        self.source = source
        self.axes = tuple(axes)
        arg = combiner in ("argmax", "argmin")
        self.acc_dtype = acc_dtype or source.dtype
        self.index = index
        self.last = bool(last)
        if arg and index is None:
            raise TEError(f"{combiner} needs an index expression")
        self._finish(dtype or ("int32" if arg else source.dtype))

    def _key(self) -> tuple:
        return (self.combiner, self.source, tuple(a.var for a in self.axes), self.acc_dtype,
                self.index, self.last)


# ---------------------------------------------------------------- constructors


def const(value, dtype: str) -> Expr:
    """A constant of ``dtype`` (an ``IntImm`` for integer and bool dtypes)."""
    if is_float(dtype):
        return FloatImm(float(value), dtype)
    if dtype == "bool":
        return IntImm(int(bool(value)), "bool")
    if isinstance(value, float) and not value.is_integer():
        raise TEError(f"cannot make an {dtype} constant from {value!r}")
    return IntImm(int(value), dtype)


def as_index(value) -> Expr:
    """An int, numpy integer or int64 expression as an index expression."""
    if isinstance(value, Expr):
        if value.dtype != INDEX:
            raise TEError(f"an index must be {INDEX}, found {value} of {value.dtype}")
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return IntImm(int(value), INDEX)
    raise TEError(f"an index must be an int or an int64 expression, found {value!r}")


def as_expr(value, dtype: str) -> Expr:
    return value if isinstance(value, Expr) else const(value, dtype)


def cast(dtype: str, value) -> Expr:
    value = as_expr(value, dtype)
    return value if value.dtype == dtype else Cast(dtype, value)


def divide(a, b) -> Expr:
    """Float division, or C's truncating division for integer dtypes."""
    a, b = _binary_dtypes(a, b)
    return Div(a, b) if is_float(a.dtype) else TruncDiv(a, b)


def truncdiv(a, b) -> Expr:
    return TruncDiv(a, b)


def truncmod(a, b) -> Expr:
    return TruncMod(a, b)


def equal(a, b) -> Expr:
    return EQ(a, b)


def not_equal(a, b) -> Expr:
    return NE(a, b)


def select(cond, t, f) -> Expr:
    return Select(cond, t, f)


if_then_else = select


def minimum(a, b) -> Expr:
    return Min(a, b)


def maximum(a, b) -> Expr:
    return Max(a, b)


def logical_and(*conds) -> Expr:
    out = conds[0]
    for c in conds[1:]:
        out = And(out, c)
    return out


def _intrinsic(name: str, *, float_only: bool = True, result: str | None = None):
    def make(*args) -> Expr:
        for a in args:
            if float_only and not is_float(a.dtype):
                raise TEError(f"{name} needs a float operand, found {a.dtype}")
        return Call(name, args, result or args[0].dtype)

    make.__name__ = name
    return make


exp = _intrinsic("exp")
log = _intrinsic("log")
log2 = _intrinsic("log2")
log10 = _intrinsic("log10")
sqrt = _intrinsic("sqrt")
tanh = _intrinsic("tanh")
erf = _intrinsic("erf")
floor = _intrinsic("floor")
ceil = _intrinsic("ceil")
trunc = _intrinsic("trunc")
rint = _intrinsic("rint")  # round half to even in the default rounding mode
sin = _intrinsic("sin")
cos = _intrinsic("cos")
tan = _intrinsic("tan")
sinh = _intrinsic("sinh")
cosh = _intrinsic("cosh")
asin = _intrinsic("asin")
acos = _intrinsic("acos")
atan = _intrinsic("atan")
asinh = _intrinsic("asinh")
acosh = _intrinsic("acosh")
atanh = _intrinsic("atanh")
fmod = _intrinsic("fmod")
isnan = _intrinsic("isnan", result="bool")
isinf = _intrinsic("isinf", result="bool")
isfinite = _intrinsic("isfinite", result="bool")


def pow(a, b) -> Expr:  # noqa: A001  (the C name)
    a, b = _binary_dtypes(a, b)
    return Call("pow", (a, b), a.dtype)


def abs(x) -> Expr:  # noqa: A001
    if is_unsigned(x.dtype):
        return x
    return Call("fabs", (x,), x.dtype) if is_float(x.dtype) else Select(x < 0, -x, x)


def sigmoid(x) -> Expr:
    one = const(1, x.dtype)
    return one / (one + exp(-x))


def rsqrt(x) -> Expr:
    return const(1, x.dtype) / sqrt(x)


def max_value(dtype: str) -> Expr:
    if is_float(dtype):
        return FloatImm(math.inf, dtype)
    if dtype == "bool":
        return IntImm(1, "bool")
    return IntImm(int(np.iinfo(dtype).max), dtype)


def min_value(dtype: str) -> Expr:
    if is_float(dtype):
        return FloatImm(-math.inf, dtype)
    if dtype == "bool":
        return IntImm(0, "bool")
    return IntImm(int(np.iinfo(dtype).min), dtype)


def const_value(e) -> int | float | None:
    """The Python value of a constant expression (or a plain number), else None."""
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        return e
    if isinstance(e, (IntImm, FloatImm)):
        return e.value
    return None
