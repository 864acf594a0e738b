"""Elementwise math, activations, comparisons, logic, Cast, Clip, Where."""

from __future__ import annotations

import functools

import numpy as np

from ...ir.expr import const
from ...ir.types import dtype_range, is_float
from ...op import nn as N
from ...op import tensor as E
from ...op import transform as T
from .base import OnnxTable, dtype, shape

TABLE = OnnxTable()

_BINARY = {"Add": E.add, "Sub": E.subtract, "Mul": E.multiply, "Pow": E.power,
           "Equal": E.equal, "Less": E.less, "Greater": E.greater,
           "LessOrEqual": E.less_equal, "GreaterOrEqual": E.greater_equal,
           "And": E.logical_and, "Or": E.logical_or, "Xor": E.logical_xor}
_UNARY = {"Neg": E.negative, "Abs": E.abs, "Exp": E.exp, "Log": E.log, "Sqrt": E.sqrt,
          "Floor": E.floor, "Ceil": E.ceil, "Round": E.round, "Sign": E.sign, "Sin": E.sin,
          "Cos": E.cos, "Tanh": E.tanh, "Sigmoid": E.sigmoid, "Erf": E.erf, "Relu": N.relu,
          "Not": E.logical_not, "Identity": lambda x: x}


def _scalar(v, like):
    return const(np.asarray(v, dtype=dtype(like)))


for _name, _fn in _BINARY.items():
    TABLE.register(_name)(lambda a, b, _fn=_fn, **_: _fn(a, b))
for _name, _fn in _UNARY.items():
    TABLE.register(_name)(lambda x, _fn=_fn, **_: _fn(x))


@TABLE.register("Pow", since=7)
def pow_(x, y):
    return E.power(x, y if dtype(y) == dtype(x) else T.cast(y, dtype(x)))


@TABLE.register("Div")
def div(a, b, **_):
    return E.divide(a, b)


def _variadic(fn):
    def convert(*xs, **_):
        return functools.reduce(fn, xs)
    return convert


TABLE.register("Max")(_variadic(E.maximum))
TABLE.register("Min")(_variadic(E.minimum))
TABLE.register("Sum")(_variadic(E.add))


@TABLE.register("Mean")
def mean(*xs, **_):
    return E.divide(functools.reduce(E.add, xs), _scalar(len(xs), xs[0]))


@TABLE.register("Reciprocal")
def reciprocal(x, **_):
    return E.divide(_scalar(1, x), x)


@TABLE.register("LeakyRelu")
def leaky_relu(x, alpha=0.01):
    return N.leaky_relu(x, alpha=float(alpha))


@TABLE.register("Elu")
def elu(x, alpha=1.0):
    neg = E.multiply(_scalar(alpha, x), E.subtract(E.exp(x), _scalar(1, x)))
    return T.where(E.greater(x, _scalar(0, x)), x, neg)


@TABLE.register("Selu")
def selu(x, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875):
    neg = E.multiply(_scalar(alpha, x), E.subtract(E.exp(x), _scalar(1, x)))
    y = T.where(E.greater(x, _scalar(0, x)), x, neg)
    return E.multiply(_scalar(gamma, x), y)


@TABLE.register("HardSigmoid")
def hard_sigmoid(x, alpha=0.2, beta=0.5):
    y = E.add(E.multiply(_scalar(alpha, x), x), _scalar(beta, x))
    return T.clip(y, 0.0, 1.0)


@TABLE.register("Softplus")
def softplus(x):
    return E.log(E.add(E.exp(x), _scalar(1, x)))


@TABLE.register("PRelu")
def prelu(x, slope):
    """A 1-D slope with one value per channel (axis 1, as opsets < 7 and old exporters
    write it) that does not broadcast from the right gets unit axes after it."""
    xs, ss = shape(x), shape(slope)
    if len(ss) == 1 and len(xs) > 2 and ss[0] != 1 and ss[0] != xs[-1] and ss[0] == xs[1]:
        slope = T.reshape(slope, (ss[0],) + (1,) * (len(xs) - 2))
    return T.where(E.less(x, _scalar(0, x)), E.multiply(x, slope), x)


@TABLE.register("Gelu", since=20)
def gelu(x, approximate="none"):
    half = E.multiply(_scalar(0.5, x), x)
    if approximate == "tanh":
        inner = E.multiply(_scalar(np.sqrt(2 / np.pi), x),
                           E.add(x, E.multiply(_scalar(0.044715, x), E.power(x, _scalar(3, x)))))
        return E.multiply(half, E.add(_scalar(1, x), E.tanh(inner)))
    return E.multiply(half, E.add(_scalar(1, x), E.erf(E.divide(x, _scalar(np.sqrt(2), x)))))


@TABLE.register("Where")
def where(cond, x, y):
    return T.where(cond, x, y)


_ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
                7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
                16: "bfloat16", 17: "float8_e4m3fn", 18: "float8_e4m3fnuz", 19: "float8_e5m2",
                20: "float8_e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4_e2m1fn",
                24: "float8_e8m0fnu", 25: "uint2", 26: "int2"}
FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")


def onnx_dtype(code: int) -> str:
    from ..common import ConversionError

    if int(code) not in _ONNX_DTYPES:
        raise ConversionError(f"ONNX element type {code} has no Relay equivalent")
    return _ONNX_DTYPES[int(code)]


def saturating_cast(x, to: str, saturate=1, round_mode="up"):
    """ONNX's Cast to ``to``. ``saturate`` (float8 targets): a float clips to the target's
    finite range first (infinities too, NaN stays NaN), as onnx's ``saturate_cast``;
    otherwise out-of-range values become inf/NaN. float8_e8m0fnu keeps only an exponent:
    ``round_mode`` picks it (``up``: 2**ceil(log2|x|))."""
    src = dtype(x)
    if to == "float8_e8m0fnu" and src != to and is_float(src):
        return _to_e8m0(x, saturate, round_mode)
    if saturate and to in FLOAT8 and is_float(src):
        lo, hi = dtype_range(to)
        x = T.clip(x, lo, hi)
    return T.cast(x, to)


def _to_e8m0(x, saturate, round_mode):
    """The power of two ``to_float8e8m0`` (onnx.numpy_helper) picks, computed in float64
    where log2 of a float32 is exact enough to tell a power of two from its neighbours;
    the sign is dropped and zero gives the smallest exponent, 2**-127."""
    from ..common import ConversionError

    if round_mode != "up":
        raise ConversionError(f"Cast to FLOAT8E8M0 with round_mode={round_mode!r} is not "
                              "supported (only 'up')")
    wide = T.cast(x, "float64")
    exp = E.ceil(E.log2(E.abs(wide)))  # a float32 subnormal rounds up to 2**-126
    exp = T.clip(exp, -126.0, 127.0 if saturate else 128.0)
    exp = T.where(E.equal(wide, const(np.array(0.0))), const(np.array(-127.0)), exp)
    power = E.power(const(np.array(2.0)), exp)
    special = E.logical_or(E.isnan(wide), E.isinf(wide))  # NaN and ±inf: e8m0's NaN
    return T.cast(T.where(special, const(np.array(np.nan)), power), "float8_e8m0fnu")


@TABLE.register("Cast")
def cast(x, to, saturate=1, round_mode="up"):
    return saturating_cast(x, onnx_dtype(to), saturate, round_mode)


@TABLE.register("BitCast", since=26)
def bit_cast(x, to):
    """Same-width integer (or bool → 8-bit) reinterpretation is a wrapping ``cast``;
    float ↔ integer bits would need a ``reinterpret`` op, which Relay lacks here."""
    from ..common import ConversionError

    src, dst = np.dtype(dtype(x)), np.dtype(onnx_dtype(to))
    if src.itemsize != dst.itemsize or src.kind not in "iub" or dst.kind not in "iu":
        raise ConversionError(f"BitCast from {src} to {dst} needs a bit reinterpretation "
                              "(only same-width integer casts are supported)")
    return T.cast(x, dst.name)


@TABLE.register("CastLike")
def cast_like(x, like, saturate=1, round_mode="up"):
    return x if dtype(x) == dtype(like) else saturating_cast(x, dtype(like), saturate, round_mode)


@TABLE.register("Mod")
def mod(a, b, fmod=0):
    """``fmod=1``: the sign of the dividend (C ``fmod``, Relay ``mod``); otherwise the sign
    of the divisor (Python ``%``, Relay ``floor_mod``)."""
    return E.mod(a, b) if fmod else E.floor_mod(a, b)


@TABLE.register("Clip")
def clip_v1(x, min=-3.4028234663852886e38, max=3.4028234663852886e38, **_):  # noqa: A002
    return T.clip(x, float(min), float(max))


@TABLE.register("Clip", since=11)
def clip(x, min=None, max=None):  # noqa: A002
    if min is not None:
        x = E.maximum(x, min)
    if max is not None:
        x = E.minimum(x, max)
    return x
