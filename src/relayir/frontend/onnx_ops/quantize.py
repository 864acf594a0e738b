"""Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the
integer matmul/conv ops (MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv).

8-bit tensors with float32 scales (per tensor or per axis) import as the QNN dialect
(``relay.qnn.op``), which runs as integer arithmetic and equals ONNX Runtime bit for
bit: int32 accumulation, then a float32 requantisation (``(x_scale * w_scale) /
y_scale``), clamped, rounded half to even. Everything else (16/4/2-bit and float8
types, blocked scales, 1-D or N-d matmul operands) keeps the float emulation below.

Integer products accumulate in int32 as ONNX specifies; requantisation follows onnx's
reference, which multiplies the int32 result by the float scale ratio in float64
(numpy's int32 * float promotion), rounds half to even and saturates. Quantize/Dequantize
also take ONNX's low-precision types: (u)int4 and (u)int2 like (u)int8; float8 without a
zero point (``saturate`` clips to its range); float4_e2m1fn with one, unclipped.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import const
from ...ir.types import dtype_range
from ...op import nn as N
from ...op import qnn as Q
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, constant_value, dtype, ndim, shape
from .base import axis as norm_axis
from .elementwise import FLOAT8, _scalar, onnx_dtype, saturating_cast
from .nn import _geometry, conv, matmul

TABLE = OnnxTable()

_QUANT_INTS = ("uint8", "int8", "uint16", "int16", "uint4", "int4", "uint2", "int2")
_QUANT_DTYPES = _QUANT_INTS + FLOAT8 + ("float4_e2m1fn",)


def _per_axis(param, x, axis, block_size):
    """A scale / zero point laid out to broadcast against ``x``: a scalar or 1-element
    tensor as a scalar, a vector along ``axis``, or blocks repeated along ``axis``."""
    ps, xs = shape(param), shape(x)
    if len(ps) == 0:
        return param
    if int(np.prod(ps)) == 1:
        return T.reshape(param, ())
    a = norm_axis(axis, len(xs))
    if block_size:
        param = T.repeat(param, int(block_size), axis=a)
        if shape(param)[a] != xs[a]:
            param = T.strided_slice(param, [0], [xs[a]], axes=[a])
        return param
    if len(ps) != 1:
        raise ConversionError(f"a per-axis scale / zero point must be 1-D, found {ps}")
    lay = [1] * len(xs)
    lay[a] = ps[0]
    return T.reshape(param, lay)


def _quantized_dtype(zero_point, output_dtype) -> str:
    dt = dtype(zero_point) if zero_point is not None else (
        onnx_dtype(output_dtype) if output_dtype else "uint8")
    if dt not in _QUANT_DTYPES:
        raise ConversionError(f"quantizing to {dt} is not supported (expected one of "
                              f"{', '.join(_QUANT_DTYPES)})")
    return dt


def _saturate(y, out_dtype):
    lo, hi = dtype_range(out_dtype)
    return T.cast(T.clip(y, float(lo), float(hi)), out_dtype)


# ---------------------------------------------------------------- the QNN forms

_QNN_INTS = ("int8", "uint8")


def _zp(zero_point):
    """An ONNX zero point as QNN's int32 one (0 when absent; a constant stays one, so
    that passes read its value)."""
    if zero_point is None:
        return const(0)
    v = constant_value(zero_point)
    return const(v.astype("int32")) if v is not None else T.cast(zero_point, "int32")


def _param(p) -> bool:
    """A float32 scale that QNN takes: a scalar or a vector."""
    return dtype(p) == "float32" and ndim(p) <= 1


def _per_tensor(*ps) -> bool:
    return all(p is None or int(np.prod(shape(p))) == 1 for p in ps)


def _qnn_axis(axis, x, scale) -> int:
    """ONNX's axis, which only a per-axis scale reads (-1 for a per-tensor one)."""
    return norm_axis(axis, ndim(x)) if ndim(x) and not _per_tensor(scale) else -1


def _qmatmul(a, b, a_zero_point, b_zero_point, a_scale=None, b_scale=None):
    """``(a - a_zp) @ (b - b_zp)`` in int32 as ``qnn.dense`` (2-D ``b``, its parameters
    per column) or ``qnn.batch_matmul`` (3-D operands, per-tensor), else None."""
    if dtype(a) not in _QNN_INTS or dtype(b) not in _QNN_INTS or ndim(a) < 2:
        return None
    if not all(s is None or _param(s) for s in (a_scale, b_scale)):
        return None
    if not _per_tensor(a_zero_point, a_scale):  # a per-row zero point
        return None
    one = const(np.float32(1))
    a_scale = one if a_scale is None else a_scale
    b_scale = one if b_scale is None else b_scale
    azp, bzp = _zp(a_zero_point), _zp(b_zero_point)
    if ndim(b) == 2:
        k = shape(b)[0]
        rows = T.reshape(a, (-1, k)) if ndim(a) > 2 else a
        acc = Q.dense(rows, T.transpose(b, (1, 0)), azp, bzp, a_scale, b_scale)
        return T.reshape(acc, (*shape(a)[:-1], shape(b)[1])) if ndim(a) > 2 else acc
    if ndim(a) == ndim(b) == 3 and _per_tensor(b_zero_point, b_scale) and (
            shape(a)[0] == shape(b)[0] or 1 in (shape(a)[0], shape(b)[0])):
        return Q.batch_matmul(a, b, azp, bzp, a_scale, b_scale, transpose_b=False)
    return None


def _qconv(x, w, x_zero_point, w_zero_point, x_scale=None, w_scale=None, auto_pad="NOTSET",
           dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    """A 2-D ``qnn.conv2d`` (int32), or None where QNN does not take the operands."""
    if ndim(x) != 4 or dtype(x) not in _QNN_INTS or dtype(w) not in _QNN_INTS:
        return None
    if not all(s is None or _param(s) for s in (x_scale, w_scale)):
        return None
    if not _per_tensor(x_zero_point, x_scale):
        return None
    one = const(np.float32(1))
    kernel = list(kernel_shape or shape(w)[2:])
    strides, pads, dilations = _geometry(x, kernel, strides, pads, dilations, auto_pad)
    return Q.conv2d(x, w, _zp(x_zero_point), _zp(w_zero_point),
                    one if x_scale is None else x_scale, one if w_scale is None else w_scale,
                    strides=strides, padding=pads, dilation=dilations, groups=int(group),
                    channels=shape(w)[0], kernel_size=kernel)


def _qnn_requantize(acc, in_scale, y_scale, y_zero_point, out, axis):
    return Q.requantize(acc, in_scale, const(0), y_scale, _zp(y_zero_point), axis=axis,
                        out_dtype=out)


# ---------------------------------------------------------------- the converters


@TABLE.register("QuantizeLinear", since=10)
def quantize_linear(x, y_scale, y_zero_point=None, axis=1, saturate=1, block_size=0,  # noqa: A002
                    output_dtype=0, precision=0):
    out = _quantized_dtype(y_zero_point, output_dtype)
    if (out in _QNN_INTS and dtype(x) == "float32" and _param(y_scale) and not block_size
            and precision in (0, 1)):  # 1: FLOAT
        return Q.quantize(x, y_scale, _zp(y_zero_point), axis=_qnn_axis(axis, x, y_scale),
                          out_dtype=out)
    scale = _per_axis(y_scale, x, axis, block_size)
    work = onnx_dtype(precision) if precision else dtype(x)
    if dtype(scale) != work:
        scale = T.cast(scale, work)
    if dtype(x) != work:
        x = T.cast(x, work)
    if out in FLOAT8:  # onnx's reference ignores a float8 zero point (it must be 0)
        return saturating_cast(E.divide(x, scale), out, saturate)
    if out == "float4_e2m1fn":
        y = E.divide(x, scale)
        if y_zero_point is not None:
            y = E.add(y, T.cast(_per_axis(y_zero_point, x, axis, block_size), dtype(y)))
        return T.cast(y, out)
    # round in the input precision, then add the zero point and saturate in float32,
    # which holds every (u)int16 value exactly
    y = T.cast(E.round(E.divide(x, scale)), "float32")
    if y_zero_point is not None:
        y = E.add(y, T.cast(_per_axis(y_zero_point, x, axis, block_size), "float32"))
    return _saturate(y, out)


@TABLE.register("DequantizeLinear", since=10)
def dequantize_linear(x, x_scale, x_zero_point=None, axis=1, block_size=0,  # noqa: A002
                      output_dtype=0):
    if dtype(x) not in _QUANT_DTYPES + ("int32",):
        raise ConversionError(f"dequantizing {dtype(x)} is not supported (expected one of "
                              f"{', '.join(_QUANT_DTYPES)}, int32)")
    if (dtype(x) in _QNN_INTS + ("int32",) and _param(x_scale) and not block_size
            and output_dtype in (0, 1)):
        return Q.dequantize(x, x_scale, _zp(x_zero_point), axis=_qnn_axis(axis, x, x_scale))
    y = T.cast(x, "float32")
    if x_zero_point is not None:
        y = E.subtract(y, T.cast(_per_axis(x_zero_point, x, axis, block_size), "float32"))
    y = E.multiply(y, T.cast(_per_axis(x_scale, x, axis, block_size), "float32"))
    out = onnx_dtype(output_dtype) if output_dtype else dtype(x_scale)
    return y if out == "float32" else T.cast(y, out)


@TABLE.register("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(x):
    """uint8 quantisation with the range ``[min(x, 0), max(x, 0)]``; returns
    ``(y, y_scale, y_zero_point)``."""
    zero = _scalar(0, x)
    hi = E.maximum(R.max(x), zero)
    lo = E.minimum(R.min(x), zero)
    span = T.where(E.equal(hi, lo), _scalar(1, x), E.subtract(hi, lo))
    scale = E.divide(span, _scalar(255, x))
    zp = E.round(T.clip(E.subtract(zero, E.divide(lo, scale)), 0.0, 255.0))
    if dtype(x) == "float32":
        return Q.quantize(x, scale, T.cast(zp, "int32"), out_dtype="uint8"), scale, T.cast(
            zp, "uint8")
    y = E.add(E.round(E.divide(x, scale)), zp)
    return _saturate(y, "uint8"), scale, T.cast(zp, "uint8")


def _centered(x, zero_point, lay=None):
    """``int32(x) - int32(zero_point)``, the zero point reshaped to ``lay`` if given."""
    x = T.cast(x, "int32")
    if zero_point is None:
        return x
    zp = T.cast(zero_point, "int32")
    if lay is not None and ndim(zp) == 1 and shape(zp)[0] > 1:
        zp = T.reshape(zp, lay)
    return E.subtract(x, zp)


@TABLE.register("MatMulInteger", since=10)
def matmul_integer(a, b, a_zero_point=None, b_zero_point=None):
    acc = _qmatmul(a, b, a_zero_point, b_zero_point)
    if acc is not None:
        return acc
    return matmul(_centered(a, a_zero_point), _centered(b, b_zero_point))


def _requantize(acc, ratio, y_zero_point, out_dtype, clip_first=False):
    """``round(acc * ratio + zero_point)`` saturated to ``out_dtype``, in float64."""
    y = E.multiply(T.cast(acc, "float64"), T.cast(ratio, "float64"))
    if y_zero_point is not None:
        y = E.add(y, T.cast(y_zero_point, "float64"))
    if clip_first:  # QLinearConv's reference clips, then rounds
        lo, hi = dtype_range(out_dtype)
        return T.cast(E.round(T.clip(y, float(lo), float(hi))), out_dtype)
    return _saturate(E.round(y), out_dtype)


@TABLE.register("QLinearMatMul", since=10)
def qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
                   y_zero_point=None):
    out = dtype(y_zero_point) if y_zero_point is not None else dtype(a)
    acc = _qmatmul(a, b, a_zero_point, b_zero_point, a_scale, b_scale)
    if acc is not None and out in _QNN_INTS and _per_tensor(y_scale, y_zero_point) and _param(
            y_scale):
        return _qnn_requantize(acc, E.multiply(a_scale, b_scale), y_scale, y_zero_point, out, -1)
    acc = matmul(_centered(a, a_zero_point), _centered(b, b_zero_point))
    ratio = E.divide(E.multiply(a_scale, b_scale), y_scale)
    out = dtype(y_zero_point) if y_zero_point is not None else dtype(a)
    return _requantize(acc, ratio, y_zero_point, out)


def _weight_zero_point_layout(w):
    return (shape(w)[0],) + (1,) * (ndim(w) - 1)


@TABLE.register("ConvInteger", since=10)
def conv_integer(x, w, x_zero_point=None, w_zero_point=None, **attrs):
    acc = _qconv(x, w, x_zero_point, w_zero_point, **attrs)
    if acc is not None:
        return acc
    return conv(_centered(x, x_zero_point),
                _centered(w, w_zero_point, _weight_zero_point_layout(w)), **attrs)


@TABLE.register("QLinearConv", since=10)
def qlinear_conv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
                 y_zero_point=None, b=None, **attrs):
    out = dtype(y_zero_point) if y_zero_point is not None else dtype(x)
    acc = _qconv(x, w, x_zero_point, w_zero_point, x_scale, w_scale, **attrs)
    if acc is not None and out in _QNN_INTS and _per_tensor(y_scale, y_zero_point) and _param(
            y_scale):
        if b is not None:
            acc = N.bias_add(acc, b, axis=1)
        return _qnn_requantize(acc, E.multiply(x_scale, w_scale), y_scale, y_zero_point, out, 1)
    acc = conv(_centered(x, x_zero_point),
               _centered(w, w_zero_point, _weight_zero_point_layout(w)), b, **attrs)
    if ndim(w_scale) == 1 and shape(w_scale)[0] > 1:
        w_scale = T.reshape(w_scale, (1, -1) + (1,) * (ndim(x) - 2))
    ratio = E.divide(E.multiply(x_scale, w_scale), y_scale)
    out = dtype(y_zero_point) if y_zero_point is not None else dtype(x)
    return _requantize(acc, ratio, y_zero_point, out, clip_first=True)
