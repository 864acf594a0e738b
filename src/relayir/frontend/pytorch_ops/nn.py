"""Layers: linear, convolution, normalisation, pooling, softmax, embedding, dropout."""

from __future__ import annotations

import numpy as np

from ...ir.expr import TupleGetItem, const
from ...op import nn as N
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import dtype, ndim, shape

TABLE = ConverterTable()


def _n(value, n: int) -> tuple:
    if isinstance(value, (list, tuple)):
        value = tuple(int(v) for v in value)
        return value * n if len(value) == 1 else value
    return (int(value),) * n


def _add_bias(y, bias, axis_=1):
    return y if bias is None else N.bias_add(y, bias, axis=axis_)


@TABLE.register("aten.linear.default")
def linear(input, weight, bias=None):  # noqa: A002  (the schema's names)
    y = N.dense(input, weight)
    return y if bias is None else E.add(y, bias)


def _same_padding(kernel, dilation):
    pads = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return tuple(p // 2 for p in pads) + tuple(p - p // 2 for p in pads)


_CONV = {1: N.conv1d, 2: N.conv2d, 3: N.conv3d}
_CONV_TRANSPOSE = {1: N.conv1d_transpose, 2: N.conv2d_transpose, 3: N.conv3d_transpose}


def _conv(input, weight, bias, stride, padding, dilation, groups, n):  # noqa: A002
    kernel = shape(weight)[2:]
    dilation = _n(dilation, n)
    if padding == "same":
        padding = _same_padding(kernel, dilation)
    elif padding == "valid":
        padding = (0,) * n
    else:
        padding = _n(padding, n)
    y = _CONV[n](input, weight, strides=_n(stride, n), padding=padding, dilation=dilation,
             groups=int(groups), channels=shape(weight)[0], kernel_size=kernel)
    return _add_bias(y, bias)


@TABLE.register("aten.conv2d.default", "aten.conv2d.padding")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


@TABLE.register("aten.conv1d.default", "aten.conv1d.padding")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@TABLE.register("aten.conv3d.default", "aten.conv3d.padding")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,  # noqa: A002
                    dilation, n):
    if n not in _CONV_TRANSPOSE:
        raise ConversionError(f"transposed {n}-D convolution has no Relay op")
    y = _CONV_TRANSPOSE[n](input, weight, strides=_n(stride, n), padding=_n(padding, n),
             output_padding=_n(output_padding, n), dilation=_n(dilation, n), groups=int(groups),
             channels=shape(weight)[1] * int(groups), kernel_size=shape(weight)[2:])
    return _add_bias(y, bias)


@TABLE.register("aten.conv_transpose1d.default", "aten.conv_transpose2d.input",
                "aten.conv_transpose3d.input")
def conv_transpose(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                   groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, ndim(weight) - 2)


@TABLE.register("aten.convolution.default", "aten._convolution.default")
def convolution(input, weight, bias, stride, padding, dilation, transposed,  # noqa: A002
                output_padding, groups, *_):
    n = ndim(weight) - 2
    if transposed:
        return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                               dilation, n)
    if n not in _CONV:
        raise ConversionError(f"{n}-D convolution has no Relay op")
    return _conv(input, weight, bias, stride, padding, dilation, groups, n)


def _affine_params(x, weight, bias, axis_=1):
    c = shape(x)[axis_]
    dt = dtype(x)
    gamma = weight if weight is not None else const(np.ones(c, dt))
    beta = bias if bias is not None else const(np.zeros(c, dt))
    return gamma, beta


@TABLE.register("aten.batch_norm.default")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum,  # noqa: A002
               eps, cudnn_enabled=True):
    if training or running_mean is None:
        raise ConversionError("batch_norm in training mode (use model.eval())")
    gamma, beta = _affine_params(input, weight, bias)
    return TupleGetItem(N.batch_norm(input, gamma, beta, running_mean, running_var,
                                     epsilon=float(eps)), 0)


@TABLE.register("aten._native_batch_norm_legit_no_training.default")
def native_batch_norm_no_training(input, weight, bias, running_mean, running_var,  # noqa: A002
                                  momentum, eps):
    y = batch_norm(input, weight, bias, running_mean, running_var, False, momentum, eps)
    return (y, None, None)


@TABLE.register("aten.native_batch_norm.default", "aten._native_batch_norm_legit.default")
def native_batch_norm(input, weight, bias, running_mean, running_var, training,  # noqa: A002
                      momentum, eps):
    y = batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    return (y, None, None)


@TABLE.register("aten.layer_norm.default")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,  # noqa: A002
               cudnn_enable=True):
    k = len(normalized_shape)
    xs = shape(input)
    gamma, beta = _affine_params(input, weight, bias, -1)
    if k == 1:
        return N.layer_norm(input, gamma, beta, axis=-1, epsilon=float(eps))
    size = int(np.prod(normalized_shape))
    lead = [0] * (len(xs) - k)
    flat = T.reshape(input, lead + [size])
    g = T.reshape(gamma, [size]) if weight is not None else const(np.ones(size, dtype(input)))
    b = T.reshape(beta, [size]) if bias is not None else const(np.zeros(size, dtype(input)))
    y = N.layer_norm(flat, g, b, axis=-1, epsilon=float(eps))
    return T.reshape(y, lead + [int(d) for d in normalized_shape])


@TABLE.register("aten.native_layer_norm.default")
def native_layer_norm(input, normalized_shape, weight, bias, eps):  # noqa: A002
    return (layer_norm(input, normalized_shape, weight, bias, eps), None, None)


@TABLE.register("aten.group_norm.default")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5,  # noqa: A002
               cudnn_enabled=True):
    gamma, beta = _affine_params(input, weight, bias)
    return N.group_norm(input, gamma, beta, num_groups=int(num_groups), epsilon=float(eps))


@TABLE.register("aten.instance_norm.default")
def instance_norm(input, weight, bias, running_mean, running_var,  # noqa: A002
                  use_input_stats, momentum, eps, cudnn_enabled=True):
    if not use_input_stats:
        raise ConversionError("instance_norm with running statistics")
    gamma, beta = _affine_params(input, weight, bias)
    return N.instance_norm(input, gamma, beta, epsilon=float(eps))


@TABLE.register("aten.softmax.int", "aten._softmax.default")
def softmax(self, dim, dtype_or_half=None):
    return N.softmax(self, axis=int(dim))


@TABLE.register("aten.log_softmax.int", "aten._log_softmax.default")
def log_softmax(self, dim, dtype_or_half=None):
    return N.log_softmax(self, axis=int(dim))


@TABLE.register("aten.embedding.default")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return T.take(weight, indices, axis=0)


@TABLE.register("aten.dropout.default", "aten.dropout_.default", "aten.feature_dropout.default",
                "aten.alpha_dropout.default", "aten.feature_alpha_dropout.default")
def dropout(input, p=0.5, train=False):  # noqa: A002
    if train:
        raise ConversionError("dropout in training mode (use model.eval())")
    return input


@TABLE.register("aten.native_dropout.default")
def native_dropout(input, p, train):  # noqa: A002
    return (dropout(input, p, train), None)


# ---------------------------------------------------------------- pooling


def _pool_args(kernel_size, stride, padding, dilation=1, n=2):
    kernel = _n(kernel_size, n)
    strides = _n(stride, n) if stride not in (None, [], ()) else kernel
    return kernel, strides, _n(padding, n), _n(dilation, n)


@TABLE.register("aten.max_pool2d.default")
def max_pool2d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation)
    return N.max_pool2d(self, pool_size=k, strides=s, padding=p, dilation=d,
                        ceil_mode=bool(ceil_mode))


@TABLE.register("aten.max_pool2d_with_indices.default")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return (max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode), None)


@TABLE.register("aten.max_pool1d.default")
def max_pool1d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, 1)
    return N.max_pool1d(self, pool_size=k, strides=s, padding=p, dilation=d,
                        ceil_mode=bool(ceil_mode))


@TABLE.register("aten.max_pool3d.default")
def max_pool3d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, 3)
    return N.max_pool3d(self, pool_size=k, strides=s, padding=p, dilation=d,
                        ceil_mode=bool(ceil_mode))


@TABLE.register("aten.max_pool3d_with_indices.default")
def max_pool3d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return (max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode), None)


@TABLE.register("aten.avg_pool2d.default")
def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise ConversionError("avg_pool2d divisor_override")
    k, s, p, _ = _pool_args(kernel_size, stride, padding)
    return N.avg_pool2d(self, pool_size=k, strides=s, padding=p, ceil_mode=bool(ceil_mode),
                        count_include_pad=bool(count_include_pad))


@TABLE.register("aten.avg_pool1d.default")
def avg_pool1d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1, 1)
    return N.avg_pool1d(self, pool_size=k, strides=s, padding=p, ceil_mode=bool(ceil_mode),
                        count_include_pad=bool(count_include_pad))


@TABLE.register("aten.avg_pool3d.default")
def avg_pool3d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise ConversionError("avg_pool3d divisor_override")
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1, 3)
    return N.avg_pool3d(self, pool_size=k, strides=s, padding=p, ceil_mode=bool(ceil_mode),
                        count_include_pad=bool(count_include_pad))


@TABLE.register("aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default")
def adaptive_avg_pool2d(self, output_size):
    out = _n(output_size, 2)
    if out == (1, 1):
        return N.global_avg_pool2d(self)
    return N.adaptive_avg_pool2d(self, output_size=out)


@TABLE.register("aten.adaptive_avg_pool1d.default")
def adaptive_avg_pool1d(self, output_size):
    y = N.adaptive_avg_pool2d(T.expand_dims(self, -1), output_size=(_n(output_size, 1)[0], 1))
    return T.squeeze(y, [-1])


@TABLE.register("aten.adaptive_max_pool2d.default")
def adaptive_max_pool2d(self, output_size):
    if _n(output_size, 2) != (1, 1):
        raise ConversionError("adaptive_max_pool2d to a size other than 1x1")
    return (N.global_max_pool2d(self), None)


@TABLE.register("aten.pixel_shuffle.default")
def pixel_shuffle(self, upscale_factor):
    if ndim(self) != 4:
        raise ConversionError("pixel_shuffle of a tensor that is not 4-D")
    return N.depth_to_space(self, int(upscale_factor), mode="CRD")


@TABLE.register("aten.pixel_unshuffle.default")
def pixel_unshuffle(self, downscale_factor):
    if ndim(self) != 4:
        raise ConversionError("pixel_unshuffle of a tensor that is not 4-D")
    return N.space_to_depth(self, int(downscale_factor), mode="CRD")


@TABLE.register("aten.channel_shuffle.default", "aten.native_channel_shuffle.default")
def channel_shuffle(self, groups):
    g = int(groups)
    xs = shape(self)
    y = T.reshape(self, [xs[0], g, xs[1] // g, *xs[2:]])
    y = T.transpose(y, [0, 2, 1, *range(3, len(xs) + 1)])
    return T.reshape(y, list(xs))


