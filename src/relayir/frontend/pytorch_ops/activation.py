"""Activation functions."""

from __future__ import annotations

import math

from ...op import nn as N
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import cast_to, dtype, ndim, shape

TABLE = ConverterTable()


def _c(value, x):
    return cast_to(value, dtype(x))


@TABLE.register("aten.relu.default", "aten.relu_.default")
def relu(self):
    return N.relu(self)


@TABLE.register("aten.relu6.default", "aten.relu6_.default")
def relu6(self):
    return T.clip(self, 0.0, 6.0)


@TABLE.register("aten.hardtanh.default", "aten.hardtanh_.default")
def hardtanh(self, min_val=-1.0, max_val=1.0):
    return T.clip(self, float(min_val), float(max_val))


@TABLE.register("aten.leaky_relu.default", "aten.leaky_relu_.default")
def leaky_relu(self, negative_slope=0.01):
    return N.leaky_relu(self, float(negative_slope))


@TABLE.register("aten.prelu.default", "aten._prelu_kernel.default")
def prelu(self, weight):
    return T.where(E.greater(self, _c(0, self)), self, E.multiply(self, _channel(weight, self)))


def _channel(w, x):
    """A per-channel (axis 1) weight broadcast against ``x``."""
    if ndim(w) == 1 and ndim(x) > 2 and shape(w)[0] != 1:
        return T.reshape(w, [-1] + [1] * (ndim(x) - 2))
    return w


@TABLE.register("aten.gelu.default", "aten.gelu_.default")
def gelu(self, approximate="none"):
    x = self
    half = E.multiply(x, _c(0.5, x))
    if approximate == "tanh":
        inner = E.add(x, E.multiply(_c(0.044715, x), E.multiply(x, E.multiply(x, x))))
        t = E.tanh(E.multiply(_c(math.sqrt(2 / math.pi), x), inner))
        return E.multiply(half, E.add(_c(1.0, x), t))
    if approximate != "none":
        raise ConversionError(f"gelu approximate={approximate!r}")
    return E.multiply(half, E.add(_c(1.0, x), E.erf(E.multiply(x, _c(1 / math.sqrt(2), x)))))


@TABLE.register("aten.silu.default", "aten.silu_.default")
def silu(self):
    return E.multiply(self, E.sigmoid(self))


@TABLE.register("aten.hardsigmoid.default", "aten.hardsigmoid_.default")
def hardsigmoid(self):
    return T.clip(E.add(E.divide(self, _c(6.0, self)), _c(0.5, self)), 0.0, 1.0)


@TABLE.register("aten.hardswish.default", "aten.hardswish_.default")
def hardswish(self):
    return E.multiply(self, hardsigmoid(self))


def _softplus(x, beta=1.0, threshold=20.0):
    bx = E.multiply(x, _c(beta, x)) if beta != 1 else x
    soft = E.log(E.add(_c(1.0, x), E.exp(E.minimum(bx, _c(threshold, x)))))
    if beta != 1:
        soft = E.divide(soft, _c(beta, x))
    return T.where(E.greater(bx, _c(threshold, x)), x, soft)


@TABLE.register("aten.softplus.default")
def softplus(self, beta=1.0, threshold=20.0):
    return _softplus(self, float(beta), float(threshold))


@TABLE.register("aten.mish.default", "aten.mish_.default")
def mish(self):
    return E.multiply(self, E.tanh(_softplus(self)))


@TABLE.register("aten.elu.default", "aten.elu_.default")
def elu(self, alpha=1.0, scale=1.0, input_scale=1.0):
    x = self
    neg = E.multiply(_c(alpha, x), E.subtract(E.exp(E.multiply(x, _c(input_scale, x))),
                                              _c(1.0, x)))
    return E.multiply(_c(scale, x), T.where(E.greater(x, _c(0.0, x)), x, neg))


@TABLE.register("aten.selu.default", "aten.selu_.default")
def selu(self):
    return elu(self, 1.6732632423543772, 1.0507009873554805)


@TABLE.register("aten.celu.default", "aten.celu_.default")
def celu(self, alpha=1.0):
    return elu(self, alpha, 1.0, 1.0 / alpha)


@TABLE.register("aten.log_sigmoid.default")
def log_sigmoid(self):
    x = self  # log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|))
    return E.subtract(E.minimum(x, _c(0.0, x)),
                      E.log(E.add(_c(1.0, x), E.exp(E.negative(E.abs(x))))))


@TABLE.register("aten.softsign.default")
def softsign(self):
    return E.divide(self, E.add(_c(1.0, self), E.abs(self)))


@TABLE.register("aten.tanhshrink.default")
def tanhshrink(self):
    return E.subtract(self, E.tanh(self))


@TABLE.register("aten.threshold.default", "aten.threshold_.default")
def threshold(self, threshold, value):
    return T.where(E.greater(self, _c(threshold, self)), self, _c(value, self))
