"""Bias and activations: ``nn.bias_add``, ``nn.relu``, ``nn.leaky_relu``, ``nn.prelu``,
``nn.softmax``, ``nn.log_softmax``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ..attrs_util import set_fields
from ..type_rel import (
    float_identity_rel,
    identity_rel,
    require_float,
    tensors,
)
from ._common import (
    _along,
    _axis,
    _param,
)

# ---------------------------------------------------------------- activations


@dataclasses.dataclass(frozen=True)
class BiasAddAttrs(Attrs):
    axis: int = 1

    def __post_init__(self):
        set_fields(self, axis=int(self.axis))


def _bias_add_rel(types, attrs):
    data, bias = tensors(types, ("data", "bias"))
    axis = _axis(attrs.axis, data)
    _param(data, bias, "bias", axis)
    return data



def _bias_add_ref(data, bias, attrs):
    axis = attrs.axis % data.ndim
    return (data + _along(bias, axis, data.ndim)).astype(data.dtype)


register_op("nn.bias_add", rel=_bias_add_rel, ref=_bias_add_ref, pattern=OpPattern.BROADCAST,
            num_inputs=2, arg_names=("data", "bias"), attrs=BiasAddAttrs)


def _relu_ref(data, attrs):
    return np.maximum(data, np.zeros((), data.dtype))


register_op("nn.relu", rel=identity_rel, ref=_relu_ref, pattern=OpPattern.ELEMWISE,
            num_inputs=1)


@dataclasses.dataclass(frozen=True)
class LeakyReluAttrs(Attrs):
    alpha: float = 0.01

    def __post_init__(self):
        set_fields(self, alpha=float(self.alpha))


def _leaky_relu_ref(data, attrs):
    x = data.astype("float64")
    return np.where(x > 0, x, attrs.alpha * x).astype(data.dtype)


register_op("nn.leaky_relu", rel=float_identity_rel, ref=_leaky_relu_ref,
            pattern=OpPattern.ELEMWISE, num_inputs=1, attrs=LeakyReluAttrs)


@dataclasses.dataclass(frozen=True)
class PReluAttrs(Attrs):
    axis: int = 1

    def __post_init__(self):
        set_fields(self, axis=int(self.axis))


def _prelu_rel(types, attrs):
    data, alpha = tensors(types, ("data", "alpha"))
    require_float(data)
    axis = _axis(attrs.axis, data)
    _param(data, alpha, "alpha", axis)
    return data


def _prelu_ref(data, alpha, attrs):
    x = data.astype("float64")
    a = _along(alpha.astype("float64"), attrs.axis % data.ndim, data.ndim)
    return np.where(x > 0, x, a * x).astype(data.dtype)


register_op("nn.prelu", rel=_prelu_rel, ref=_prelu_ref, pattern=OpPattern.BROADCAST,
            num_inputs=2, arg_names=("data", "alpha"), attrs=PReluAttrs)


@dataclasses.dataclass(frozen=True)
class SoftmaxAttrs(Attrs):
    axis: int = -1

    def __post_init__(self):
        set_fields(self, axis=int(self.axis))


def _softmax_rel(types, attrs):
    t = float_identity_rel(types, attrs)
    _axis(attrs.axis, t)
    return t


def _shifted(data, axis):
    x = data.astype("float64")
    return x - np.max(x, axis=axis, keepdims=True)


def _softmax_ref(data, attrs):
    e = np.exp(_shifted(data, attrs.axis))
    return (e / e.sum(axis=attrs.axis, keepdims=True)).astype(data.dtype)


def _log_softmax_ref(data, attrs):
    s = _shifted(data, attrs.axis)
    return (s - np.log(np.exp(s).sum(axis=attrs.axis, keepdims=True))).astype(data.dtype)


register_op("nn.softmax", rel=_softmax_rel, ref=_softmax_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, attrs=SoftmaxAttrs)
register_op("nn.log_softmax", rel=_softmax_rel, ref=_log_softmax_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, attrs=SoftmaxAttrs)


def bias_add(data, bias, axis=1):
    return call("nn.bias_add", [data, bias], axis=axis)


def relu(data):
    return call("nn.relu", [data])


def leaky_relu(data, alpha=0.01):
    return call("nn.leaky_relu", [data], alpha=alpha)


def prelu(data, alpha, axis=1):
    return call("nn.prelu", [data, alpha], axis=axis)


def softmax(data, axis=-1):
    return call("nn.softmax", [data], axis=axis)


def log_softmax(data, axis=-1):
    return call("nn.log_softmax", [data], axis=axis)
