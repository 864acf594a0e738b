"""Elementwise aten ops: arithmetic with torch's type promotion, comparisons, math."""

from __future__ import annotations

import math

import torch

from ...op import tensor as E
from ...op import transform as T
from ..common import ConverterTable
from .base import cast_to, dtype, ndim, out_dtype

TABLE = ConverterTable()


def _probe(v):
    """A stand-in with v's dtype and dimension category for ``torch.result_type``."""
    if isinstance(v, (bool, int, float)):
        return v
    n = ndim(v)
    return torch.empty((1,) * min(n, 1), dtype=getattr(torch, dtype(v)))


def common_dtype(a, b) -> str:
    return str(torch.result_type(_probe(a), _probe(b))).removeprefix("torch.")


def _binary(relay_fn):
    def convert(self, other, alpha=1):
        dt = out_dtype()
        if alpha != 1:
            other = E.multiply(cast_to(other, dt), cast_to(alpha, dt))
        return relay_fn(cast_to(self, dt), cast_to(other, dt))

    return convert


for _names, _fn in [
    (("add.Tensor", "add.Scalar", "add_.Tensor"), E.add),
    (("sub.Tensor", "sub.Scalar", "sub_.Tensor"), E.subtract),
    (("mul.Tensor", "mul.Scalar", "mul_.Tensor"), E.multiply),
    (("div.Tensor", "div.Scalar", "div_.Tensor"), E.divide),
    (("maximum.default",), E.maximum),
    (("minimum.default",), E.minimum),
    (("remainder.Tensor", "remainder.Scalar"), E.floor_mod),
    (("fmod.Tensor", "fmod.Scalar"), E.mod),
    (("pow.Tensor_Scalar", "pow.Tensor_Tensor"), E.power),
]:
    TABLE.register(*(f"aten.{n}" for n in _names))(_binary(_fn))


@TABLE.register("aten.rsub.Scalar", "aten.rsub.Tensor")
def rsub(self, other, alpha=1):
    return _binary(E.subtract)(other, self, alpha) if alpha == 1 else E.subtract(
        cast_to(other, out_dtype()), E.multiply(cast_to(self, out_dtype()),
                                                cast_to(alpha, out_dtype())))


@TABLE.register("aten.pow.Scalar")
def pow_scalar(self, exponent):
    dt = out_dtype()
    return E.power(cast_to(self, dt), cast_to(exponent, dt))


@TABLE.register("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def div_mode(self, other, rounding_mode=None):
    dt = out_dtype()
    a, b = cast_to(self, dt), cast_to(other, dt)
    if rounding_mode is None:
        return E.divide(a, b)
    if rounding_mode == "floor":
        return E.floor_divide(a, b)
    q = E.divide(a, b)  # "trunc": Relay's integer divide truncates already
    return E.trunc(q) if dt.startswith("float") else q


@TABLE.register("aten.floor_divide.default", "aten.floor_divide.Scalar")
def floor_divide(self, other):
    dt = out_dtype()
    return E.floor_divide(cast_to(self, dt), cast_to(other, dt))


def _compare(relay_fn):
    def convert(self, other):
        dt = common_dtype(self, other)
        return relay_fn(cast_to(self, dt), cast_to(other, dt))

    return convert


for _name, _fn in [("eq", E.equal), ("ne", E.not_equal), ("lt", E.less), ("le", E.less_equal),
                   ("gt", E.greater), ("ge", E.greater_equal)]:
    TABLE.register(f"aten.{_name}.Tensor", f"aten.{_name}.Scalar")(_compare(_fn))


def _logical(relay_fn):
    def convert(self, other):
        return relay_fn(cast_to(self, "bool"), cast_to(other, "bool"))

    return convert


# bitwise_* and __and__/__or__/__xor__ (bool or integer): pytorch_ops/algorithm.py
for _name, _fn in [("logical_and", E.logical_and), ("logical_or", E.logical_or),
                   ("logical_xor", E.logical_xor)]:
    TABLE.register(f"aten.{_name}.default", f"aten.{_name}.Tensor")(_logical(_fn))


@TABLE.register("aten.logical_not.default")
def logical_not(self):
    if dtype(self) != "bool":
        return E.equal(self, cast_to(0, dtype(self)))
    return E.logical_not(self)


def _unary(relay_fn, float_input=False):
    def convert(self):
        return relay_fn(cast_to(self, out_dtype()) if float_input else self)

    return convert


for _name, _fn, _float in [
    ("abs", E.abs, False), ("neg", E.negative, False), ("exp", E.exp, True),
    ("log", E.log, True), ("log2", E.log2, True), ("log10", E.log10, True),
    ("sqrt", E.sqrt, True), ("rsqrt", E.rsqrt, True), ("sin", E.sin, True),
    ("cos", E.cos, True), ("tan", E.tan, True), ("tanh", E.tanh, True),
    ("sigmoid", E.sigmoid, True), ("erf", E.erf, True), ("floor", E.floor, False),
    ("ceil", E.ceil, False), ("round", E.round, False), ("trunc", E.trunc, False),
    ("sign", E.sign, False),
]:
    TABLE.register(f"aten.{_name}.default", f"aten.{_name}_.default")(_unary(_fn, _float))

for _name, _fn in [("isnan", E.isnan), ("isinf", E.isinf), ("isfinite", E.isfinite)]:
    TABLE.register(f"aten.{_name}.default")(_unary(_fn))


def _one(x):
    return cast_to(1, dtype(x))


@TABLE.register("aten.reciprocal.default")
def reciprocal(self):
    x = cast_to(self, out_dtype())
    return E.divide(_one(x), x)


@TABLE.register("aten.square.default")
def square(self):
    return E.multiply(self, self)


@TABLE.register("aten.expm1.default")
def expm1(self):
    x = cast_to(self, out_dtype())
    return E.subtract(E.exp(x), _one(x))


@TABLE.register("aten.log1p.default")
def log1p(self):
    x = cast_to(self, out_dtype())
    return E.log(E.add(x, _one(x)))


@TABLE.register("aten.erfc.default")
def erfc(self):
    x = cast_to(self, out_dtype())
    return E.subtract(_one(x), E.erf(x))


@TABLE.register("aten.sinh.default")
def sinh(self):
    x = cast_to(self, out_dtype())
    return E.multiply(E.subtract(E.exp(x), E.exp(E.negative(x))), cast_to(0.5, dtype(x)))


@TABLE.register("aten.cosh.default")
def cosh(self):
    x = cast_to(self, out_dtype())
    return E.multiply(E.add(E.exp(x), E.exp(E.negative(x))), cast_to(0.5, dtype(x)))


@TABLE.register("aten.clamp.default", "aten.clamp_.default", "aten.clip.default")
def clamp(self, min=None, max=None):  # noqa: A002  (the schema's names)
    lo = -math.inf if min is None else float(min)
    hi = math.inf if max is None else float(max)
    return T.clip(self, lo, hi)


@TABLE.register("aten.clamp.Tensor")
def clamp_tensor(self, min=None, max=None):  # noqa: A002
    dt = out_dtype()
    x = cast_to(self, dt)
    if min is not None:
        x = E.maximum(x, cast_to(min, dt))
    if max is not None:
        x = E.minimum(x, cast_to(max, dt))
    return x


@TABLE.register("aten.clamp_min.default")
def clamp_min(self, min):  # noqa: A002
    return clamp(self, min=min)


@TABLE.register("aten.clamp_max.default")
def clamp_max(self, max):  # noqa: A002
    return clamp(self, max=max)


@TABLE.register("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther",
                "aten.where.Scalar")
def where(condition, self, other):
    dt = out_dtype()
    return T.where(cast_to(condition, "bool"), cast_to(self, dt), cast_to(other, dt))


@TABLE.register("aten.masked_fill.Scalar", "aten.masked_fill.Tensor",
                "aten.masked_fill_.Scalar")
def masked_fill(self, mask, value):
    return T.where(cast_to(mask, "bool"), cast_to(value, dtype(self)), self)


@TABLE.register("aten.lerp.Scalar", "aten.lerp.Tensor")
def lerp(self, end, weight):
    dt = out_dtype()
    a = cast_to(self, dt)
    return E.add(a, E.multiply(cast_to(weight, dt), E.subtract(cast_to(end, dt), a)))


@TABLE.register("aten.addcmul.default")
def addcmul(self, tensor1, tensor2, value=1):
    dt = out_dtype()
    prod = E.multiply(cast_to(tensor1, dt), cast_to(tensor2, dt))
    return E.add(cast_to(self, dt), E.multiply(prod, cast_to(value, dt)))


@TABLE.register("aten.addcdiv.default")
def addcdiv(self, tensor1, tensor2, value=1):
    dt = out_dtype()
    q = E.divide(cast_to(tensor1, dt), cast_to(tensor2, dt))
    return E.add(cast_to(self, dt), E.multiply(q, cast_to(value, dt)))
