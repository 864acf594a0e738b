"""Layers: MatMul, Gemm, Conv, pooling, normalisation, softmax, Dropout."""

from __future__ import annotations

import numpy as np

from ...ir.expr import Constant, const
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype, ndim, shape

TABLE = OnnxTable()


@TABLE.register("MatMul")
def matmul(a, b):
    """numpy ``matmul``: 1-D operands get a unit dim (dropped after), batch dims broadcast."""
    na, nb = ndim(a), ndim(b)
    if na == 1:
        a = T.expand_dims(a, 0)
    if nb == 1:
        b = T.expand_dims(b, 1)
    sa, sb = shape(a), shape(b)
    if len(sa) == 2 and len(sb) == 2:
        y = N.matmul(a, b)
    elif len(sb) == 2:
        y = T.reshape(N.matmul(T.reshape(a, (-1, sa[-1])), b), (*sa[:-1], sb[-1]))
    else:
        lead = tuple(np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
        a3 = T.reshape(T.broadcast_to(a, (*lead, *sa[-2:])), (-1, *sa[-2:]))
        b3 = T.reshape(T.broadcast_to(b, (*lead, *sb[-2:])), (-1, *sb[-2:]))
        y = T.reshape(N.batch_matmul(a3, b3, transpose_b=False), (*lead, sa[-2], sb[-1]))
    if na == 1:
        y = T.squeeze(y, [ndim(y) - 2])
    if nb == 1:
        y = T.squeeze(y, [ndim(y) - 1])
    return y


@TABLE.register("Gemm")
def gemm(a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0, **_):  # noqa: N803
    y = N.matmul(a, b, transpose_a=bool(transA), transpose_b=bool(transB))
    if alpha != 1.0:
        y = E.multiply(y, const(np.asarray(alpha, dtype(a))))
    if c is not None:
        if beta != 1.0:
            c = E.multiply(c, const(np.asarray(beta, dtype(a))))
        y = E.add(y, c)
    return y


def _auto_pads(auto_pad, in_hw, kernel, strides, dilations):
    before, after = [], []
    for d, k, s, dl in zip(in_hw, kernel, strides, dilations):
        out = -(-d // s)
        total = max((out - 1) * s + (k - 1) * dl + 1 - d, 0)
        small, big = total // 2, total - total // 2
        lo, hi = (small, big) if auto_pad == "SAME_UPPER" else (big, small)
        before.append(lo)
        after.append(hi)
    return before + after


def _geometry(x, kernel, strides, pads, dilations, auto_pad):
    n = len(kernel)
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = _auto_pads(auto_pad, shape(x)[2:], kernel, strides, dilations)
    elif auto_pad == "VALID" or pads is None:
        pads = [0] * (2 * n)
    return strides, list(pads), dilations


def _check_2d(x, what):
    if ndim(x) != 4:
        raise ConversionError(f"{what} on a {ndim(x) - 2}-D input not supported yet "
                              "(2-D only)")


@TABLE.register("Conv")
def conv(x, w, b=None, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
         pads=None, strides=None):
    _check_2d(x, "Conv")
    kernel = list(kernel_shape or shape(w)[2:])
    strides, pads, dilations = _geometry(x, kernel, strides, pads, dilations, auto_pad)
    y = N.conv2d(x, w, strides=strides, padding=pads, dilation=dilations, groups=int(group),
                 channels=shape(w)[0], kernel_size=kernel)
    return y if b is None else N.bias_add(y, b, axis=1)


def _pool(make, x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, **extra):
    _check_2d(x, "pooling")
    strides, pads, dilations = _geometry(x, kernel_shape, strides, pads, dilations, auto_pad)
    return make(x, pool_size=tuple(kernel_shape), strides=strides, dilation=dilations,
                padding=pads, ceil_mode=bool(ceil_mode), **extra)


@TABLE.register("MaxPool")
def max_pool(x, kernel_shape, auto_pad="NOTSET", pads=None, strides=None, dilations=None,
             ceil_mode=0, storage_order=0):
    return _pool(N.max_pool2d, x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode)


@TABLE.register("AveragePool")
def avg_pool(x, kernel_shape, auto_pad="NOTSET", pads=None, strides=None, dilations=None,
             ceil_mode=0, count_include_pad=0):
    return _pool(N.avg_pool2d, x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode,
                 count_include_pad=bool(count_include_pad))


@TABLE.register("GlobalAveragePool")
def global_avg_pool(x):
    _check_2d(x, "GlobalAveragePool")
    return N.global_avg_pool2d(x)


@TABLE.register("GlobalMaxPool")
def global_max_pool(x):
    _check_2d(x, "GlobalMaxPool")
    return N.global_max_pool2d(x)


@TABLE.register("BatchNormalization")
def batch_norm(x, scale, bias, mean, var, epsilon=1e-5, momentum=0.9, training_mode=0,
               **_):
    if training_mode:
        raise ConversionError("BatchNormalization in training mode not supported")
    from ...ir.expr import TupleGetItem

    return TupleGetItem(N.batch_norm(x, scale, bias, mean, var, axis=1,
                                     epsilon=float(epsilon)), 0)


@TABLE.register("LayerNormalization")
def layer_norm(x, scale, bias=None, axis=-1, epsilon=1e-5, stash_type=1):  # noqa: A002
    n = ndim(x)
    a = axis % n if axis < 0 else axis
    if a != n - 1:
        mean = R.mean(x, axis=list(range(a, n)), keepdims=True)
        cen = E.subtract(x, mean)
        var = R.mean(E.multiply(cen, cen), axis=list(range(a, n)), keepdims=True)
        eps = const(np.asarray(epsilon, dtype(x)))
        y = E.multiply(E.divide(cen, E.sqrt(E.add(var, eps))), scale)
        return y if bias is None else E.add(y, bias)
    if bias is None:
        bias = const(np.zeros(shape(x)[-1], dtype(x)))
    return N.layer_norm(x, scale, bias, axis=-1, epsilon=float(epsilon))


@TABLE.register("RMSNormalization")
def rms_norm(x, scale, axis=-1, epsilon=1e-5, stash_type=1):  # noqa: A002
    n = ndim(x)
    axes = list(range(axis + n if axis < 0 else axis, n))
    ms = R.mean(E.multiply(x, x), axis=axes, keepdims=True)
    eps = const(np.asarray(epsilon, dtype(x)))
    return E.multiply(E.divide(x, E.sqrt(E.add(ms, eps))), scale)


@TABLE.register("InstanceNormalization")
def instance_norm(x, scale, bias, epsilon=1e-5):
    return N.instance_norm(x, scale, bias, axis=1, epsilon=float(epsilon))


def _softmax_v1(make):
    def convert(x, axis=1):  # noqa: A002
        n = ndim(x)
        a = axis + n if axis < 0 else axis
        s = shape(x)
        flat = T.reshape(x, (int(np.prod(s[:a], dtype=np.int64)), -1))
        return T.reshape(make(flat, axis=1), s)
    return convert


TABLE.register("Softmax")(_softmax_v1(N.softmax))
TABLE.register("LogSoftmax")(_softmax_v1(N.log_softmax))


@TABLE.register("Softmax", since=13)
def softmax(x, axis=-1):  # noqa: A002
    return N.softmax(x, axis=int(axis))


@TABLE.register("LogSoftmax", since=13)
def log_softmax(x, axis=-1):  # noqa: A002
    return N.log_softmax(x, axis=int(axis))


@TABLE.register("Dropout")
def dropout(x, ratio=None, training_mode=None, _outputs=1, **_):
    """Inference: the identity; the optional mask output is all ones."""
    if training_mode is not None and (not isinstance(training_mode, Constant)
                                      or bool(training_mode.data)):
        raise ConversionError("Dropout in training mode not supported")
    if _outputs == 1:
        return x
    return x, const(np.ones(shape(x), "bool"))

