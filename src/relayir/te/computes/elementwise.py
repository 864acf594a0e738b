"""Computes of the elementwise and broadcast ops (``op/tensor.py``, creation, cast,
clip, where, and the ``nn`` activations).

Integer ``divide``/``mod`` truncate like C, ``floor_*`` round down, ``round`` is half to
even (``rint``); the C printer guards integer division by zero (numpy gives 0).
"""

from __future__ import annotations

import numpy as np

from .. import expr as E
from ..tensor import compute
from .common import COMPUTE, elementwise, norm_axis


def _wrapping(op):
    """``op`` of 32/64-bit signed integers computed on their unsigned images: it wraps
    like numpy's instead of overflowing, which C leaves undefined (gcc then assumes
    ``abs(x) >= 0``, and ``relu(abs(INT_MIN))`` came out INT_MIN). Narrower integers are
    computed in ``int`` and cast back by the C printer; floats are left alone."""

    def fn(a, b):
        if a.dtype not in ("int32", "int64"):
            return op(a, b)
        u = "u" + a.dtype
        return E.cast(a.dtype, op(E.cast(u, a), E.cast(u, b)))

    return fn


_add = _wrapping(lambda a, b: a + b)
_subtract = _wrapping(lambda a, b: a - b)
_multiply = _wrapping(lambda a, b: a * b)


def _floor_divide(a, b):
    return E.floor(a / b) if E.is_float(a.dtype) else E.FloorDiv(a, b)


def _mod(a, b):
    return E.fmod(a, b) if E.is_float(a.dtype) else E.TruncMod(a, b)


def _power(a, b):
    return E.pow(a, b)


_BINARY = {
    "add": _add,
    "subtract": _subtract,
    "multiply": _multiply,
    "divide": E.divide,
    "floor_divide": _floor_divide,
    "mod": _mod,
    "floor_mod": lambda a, b: E.FloorMod(a, b),
    "power": _power,
    "maximum": E.Max,
    "minimum": E.Min,
    "equal": E.EQ,
    "not_equal": E.NE,
    "less": E.LT,
    "less_equal": E.LE,
    "greater": E.GT,
    "greater_equal": E.GE,
    "logical_and": E.And,
    "logical_or": E.Or,
    "logical_xor": E.NE,
}


def _sign(x):
    if E.is_unsigned(x.dtype):
        return E.cast(x.dtype, x > 0)
    zero, one = E.const(0, x.dtype), E.const(1, x.dtype)
    if not E.is_float(x.dtype):
        return E.select(x > zero, one, E.select(x < zero, -one, zero))
    # numpy: NaN stays NaN, and both zeros give +0.0
    return E.select(x > zero, one, E.select(x < zero, -one, E.select(E.isnan(x), x, zero)))


def _negative(x):
    # 0 - x would turn +0.0 into +0.0; numpy's -x flips the sign bit of every float
    return x * E.const(-1, x.dtype) if E.is_float(x.dtype) else _subtract(E.const(0, x.dtype), x)


def _abs(x):
    if E.is_float(x.dtype) or E.is_unsigned(x.dtype):
        return E.abs(x)
    return E.select(x < E.const(0, x.dtype), _negative(x), x)  # abs(INT_MIN) wraps


_UNARY = {
    "exp": E.exp,
    "log": E.log,
    "log2": E.log2,
    "log10": E.log10,
    "sqrt": E.sqrt,
    "rsqrt": E.rsqrt,
    "tanh": E.tanh,
    "sigmoid": E.sigmoid,
    "erf": E.erf,
    "floor": E.floor,
    "ceil": E.ceil,
    "round": E.rint,
    "trunc": E.trunc,
    "sin": E.sin,
    "cos": E.cos,
    "tan": E.tan,
    "sinh": E.sinh,
    "cosh": E.cosh,
    "asin": E.asin,
    "acos": E.acos,
    "atan": E.atan,
    "asinh": E.asinh,
    "acosh": E.acosh,
    "atanh": E.atanh,
    "abs": _abs,
    "negative": _negative,
    "sign": _sign,
    "copy": lambda x: x,
    "logical_not": E.Not,
    "isnan": E.isnan,
    "isinf": E.isinf,
    "isfinite": E.isfinite,
    "nn.relu": lambda x: E.Max(x, E.const(0, x.dtype)),
}


def _register_binary(name, fn):
    @COMPUTE.register(name)
    def rule(attrs, inputs, out):
        return elementwise(out, inputs, fn, name.replace("nn.", ""), "broadcast")


def _register_unary(name, fn):
    @COMPUTE.register(name)
    def rule(attrs, inputs, out):
        return elementwise(out, inputs, fn, name.replace("nn.", ""))


for _name, _fn in _BINARY.items():
    _register_binary(_name, _fn)
for _name, _fn in _UNARY.items():
    _register_unary(_name, _fn)


@COMPUTE.register("nn.leaky_relu")
def leaky_relu(attrs, inputs, out):
    def fn(x):
        return E.select(x > E.const(0, x.dtype), x, E.const(attrs.alpha, x.dtype) * x)

    return elementwise(out, inputs, fn, "leaky_relu")


def _along(t, axis: int, index: tuple) -> E.Expr:
    """A per-channel vector ``t`` read at the channel of ``index``."""
    return t[index[axis]]


@COMPUTE.register("nn.prelu")
def prelu(attrs, inputs, out):
    data, alpha = inputs
    axis = norm_axis(attrs.axis, data.ndim)

    def fn(*i):
        x = data[i]
        return E.select(x > E.const(0, x.dtype), x, _along(alpha, axis, i) * x)

    return compute(out.shape, fn, name="prelu", tag="broadcast")


@COMPUTE.register("nn.bias_add")
def bias_add(attrs, inputs, out):
    data, bias = inputs
    axis = norm_axis(attrs.axis, data.ndim)
    return compute(out.shape, lambda *i: data[i] + _along(bias, axis, i), name="bias_add",
                   tag="broadcast")


@COMPUTE.register("cast")
def cast(attrs, inputs, out):
    def fn(x):
        if out.dtype == "bool":
            return E.NE(x, E.const(0, x.dtype))
        return E.cast(out.dtype, x)

    return elementwise(out, inputs, fn, "cast")


def _bound(value: float, dtype: str):
    """A clip bound in the data's dtype, as TVM casts it (ints truncate, saturating)."""
    if E.is_float(dtype):
        return E.const(float(np.dtype(dtype).type(value)), dtype)
    info = np.iinfo(dtype)
    return E.const(int(min(max(np.trunc(value), info.min), info.max)), dtype)


@COMPUTE.register("clip")
def clip(attrs, inputs, out):
    def fn(x):
        return E.Max(E.Min(x, _bound(attrs.a_max, x.dtype)), _bound(attrs.a_min, x.dtype))

    return elementwise(out, inputs, fn, "clip")


@COMPUTE.register("where")
def where(attrs, inputs, out):
    return elementwise(out, inputs, E.select, "where", "broadcast")


def _fill(value):
    def rule(attrs, inputs, out):
        return compute(out.shape, lambda *i: E.const(value, out.dtype), name="fill",
                       tag="elemwise")

    return rule


COMPUTE.register("zeros", "zeros_like")(_fill(0))
COMPUTE.register("ones", "ones_like")(_fill(1))


@COMPUTE.register("full")
def full(attrs, inputs, out):
    (fill,) = inputs
    return compute(out.shape, lambda *i: E.cast(out.dtype, fill[()]), name="full",
                   tag="elemwise")


@COMPUTE.register("full_like")
def full_like(attrs, inputs, out):
    fill = inputs[1]
    return compute(out.shape, lambda *i: E.cast(out.dtype, fill[()]), name="full_like",
                   tag="elemwise")

