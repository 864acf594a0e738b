"""Normalisation: batch (inference), layer, group and instance norm."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TupleType
from ..attrs_util import set_fields
from ..type_rel import (
    fail,
    require_float,
    tensor,
    tensors,
)
from ._common import (
    _along,
    _axis,
    _param,
    _positive,
    _static,
)

# ---------------------------------------------------------------- normalisation


@dataclasses.dataclass(frozen=True)
class NormAttrs(Attrs):
    """Attrs of batch_norm and instance_norm (``axis`` is the channel axis)."""

    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    def __post_init__(self):
        set_fields(self, axis=int(self.axis), epsilon=float(self.epsilon), center=bool(self.center),
                   scale=bool(self.scale))


@dataclasses.dataclass(frozen=True)
class LayerNormAttrs(NormAttrs):
    axis: int = -1


@dataclasses.dataclass(frozen=True)
class GroupNormAttrs(NormAttrs):
    num_groups: int = 1

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, num_groups=_positive(self.num_groups, "num_groups"))


_NORM_PARAMS = ("gamma", "beta", "moving_mean", "moving_var")


def _norm_rel(types, attrs):
    """data plus per-channel params (gamma, beta[, moving_mean, moving_var])."""
    data = tensor(types[0])
    require_float(data)
    params = tensors(types[1:], _NORM_PARAMS)
    axis = _axis(attrs.axis, data)
    for p, name in zip(params, _NORM_PARAMS):
        _param(data, p, name, axis)
    return axis, data, params


def _batch_norm_rel(types, attrs):
    _, data, params = _norm_rel(types, attrs)
    return TupleType((data, params[2], params[3]))


def _stat_norm_rel(types, attrs):
    """instance_norm / group_norm: statistics per sample, so a batch axis is needed."""
    axis, data, _ = _norm_rel(types, attrs)
    if data.ndim < 2 or axis == 0:
        fail(f"axis {attrs.axis} must be a channel axis other than the batch axis 0 "
             f"of data: data is {data}")
    if isinstance(attrs, GroupNormAttrs):
        c = data.shape[axis]
        if _static(c) and c % attrs.num_groups:
            fail(f"num_groups={attrs.num_groups} does not divide the {c} channels of data: "
                 f"data is {data}")
    return data


def _layer_norm_rel(types, attrs):
    return _norm_rel(types, attrs)[1]


def _affine(y, gamma, beta, attrs, axis):
    if attrs.scale:
        y = y * _along(gamma.astype("float64"), axis, y.ndim)
    if attrs.center:
        y = y + _along(beta.astype("float64"), axis, y.ndim)
    return y


def _normalise(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _batch_norm_ref(data, gamma, beta, mean, var, attrs):
    axis = attrs.axis % data.ndim
    x = data.astype("float64")
    m, v = (_along(a.astype("float64"), axis, data.ndim) for a in (mean, var))
    y = _affine((x - m) / np.sqrt(v + attrs.epsilon), gamma, beta, attrs, axis)
    return y.astype(data.dtype), mean.copy(), var.copy()


def _layer_norm_ref(data, gamma, beta, attrs):
    axis = attrs.axis % data.ndim
    y = _normalise(data.astype("float64"), axis, attrs.epsilon)
    return _affine(y, gamma, beta, attrs, axis).astype(data.dtype)


def _instance_norm_ref(data, gamma, beta, attrs):
    axis = attrs.axis % data.ndim
    axes = tuple(i for i in range(data.ndim) if i not in (0, axis))
    y = _normalise(data.astype("float64"), axes, attrs.epsilon)
    return _affine(y, gamma, beta, attrs, axis).astype(data.dtype)


def _group_norm_ref(data, gamma, beta, attrs):
    axis = attrs.axis % data.ndim
    g, shape = attrs.num_groups, data.shape
    x = data.astype("float64").reshape(*shape[:axis], g, shape[axis] // g, *shape[axis + 1:])
    axes = tuple(i for i in range(x.ndim) if i not in (0, axis))
    y = _normalise(x, axes, attrs.epsilon).reshape(shape)
    return _affine(y, gamma, beta, attrs, axis).astype(data.dtype)


register_op("nn.batch_norm", rel=_batch_norm_rel, ref=_batch_norm_ref, pattern=OpPattern.OPAQUE,
            num_inputs=5, arg_names=("data", *_NORM_PARAMS), attrs=NormAttrs,
            description="inference mode: normalises with the moving statistics")
register_op("nn.layer_norm", rel=_layer_norm_rel, ref=_layer_norm_ref, pattern=OpPattern.OPAQUE,
            num_inputs=3, arg_names=("data", "gamma", "beta"), attrs=LayerNormAttrs)
register_op("nn.group_norm", rel=_stat_norm_rel, ref=_group_norm_ref, pattern=OpPattern.OPAQUE,
            num_inputs=3, arg_names=("data", "gamma", "beta"), attrs=GroupNormAttrs)
register_op("nn.instance_norm", rel=_stat_norm_rel, ref=_instance_norm_ref,
            pattern=OpPattern.OPAQUE, num_inputs=3, arg_names=("data", "gamma", "beta"),
            attrs=NormAttrs)


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True,
               scale=True):
    """Returns the call, a 3-tuple ``(out, moving_mean, moving_var)``: use ``[0]``."""
    return call("nn.batch_norm", [data, gamma, beta, moving_mean, moving_var], axis=axis,
                epsilon=epsilon, center=center, scale=scale)


def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    return call("nn.layer_norm", [data, gamma, beta], axis=axis, epsilon=epsilon,
                center=center, scale=scale)


def group_norm(data, gamma, beta, num_groups, axis=1, epsilon=1e-5, center=True, scale=True):
    return call("nn.group_norm", [data, gamma, beta], num_groups=num_groups, axis=axis,
                epsilon=epsilon, center=center, scale=scale)


def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True):
    return call("nn.instance_norm", [data, gamma, beta], axis=axis, epsilon=epsilon,
                center=center, scale=scale)
