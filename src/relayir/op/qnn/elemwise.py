"""``qnn.add``, ``qnn.mul``, ``qnn.concatenate``, ``qnn.avg_pool2d``: ops on quantized
tensors whose result has its own scale and zero point (per tensor). Each computes in
float32 from the centred integers and rounds once, as ONNX Runtime's QLinearAdd /
QLinearMul / QLinearConcat / QLinearAveragePool do."""

from __future__ import annotations

import numpy as np

from ...ir.op import OpPattern, call, get_op, register_op
from ...ir.types import TensorType
from ..nn.pool import AvgPool2DAttrs
from ..transform._common import _check_tensor_list
from ..transform.join import ConcatenateAttrs, _tensor_list
from ..type_rel import broadcast_shapes, fail, same_dtype, tensor, tensors, tuple_of_tensors
from ._common import as_param, centered, check_quant, check_scale_zp, ratio, saturate_round

_BINARY_ARGS = ("lhs", "rhs", "lhs_scale", "lhs_zero_point", "rhs_scale", "rhs_zero_point",
                "output_scale", "output_zero_point")


def _binary_rel(types, attrs):
    lhs, rhs, *params = tensors(types, _BINARY_ARGS)
    check_quant(lhs, "lhs")
    check_quant(rhs, "rhs")
    dtype = same_dtype(lhs, rhs)
    for k, prefix in enumerate(("lhs", "rhs", "output")):
        check_scale_zp(params[2 * k], params[2 * k + 1], prefix)
    return TensorType(broadcast_shapes(lhs, rhs), dtype)


def _add_ref(a, b, sa, za, sb, zb, sc, zc, attrs):
    v = (centered(a, za).astype(np.float32) * ratio(sa, sc)
         + centered(b, zb).astype(np.float32) * ratio(sb, sc))
    return saturate_round(v, zc, a.dtype.name)


def _mul_ref(a, b, sa, za, sb, zb, sc, zc, attrs):
    prod = (centered(a, za) * centered(b, zb)).astype(np.float32)
    return saturate_round(prod * ratio(np.float32(sa) * np.float32(sb), sc), zc, a.dtype.name)


for _name, _ref, _what in (("qnn.add", _add_ref, "+"), ("qnn.mul", _mul_ref, "*")):
    register_op(_name, rel=_binary_rel, ref=_ref, pattern=OpPattern.BROADCAST, num_inputs=8,
                arg_names=_BINARY_ARGS,
                description=f"quantized lhs {_what} rhs, broadcasting, in the output's scale")


def _concatenate_rel(types, attrs):
    data = _check_tensor_list(types[0])
    scales = tuple_of_tensors(types[1], "input_scales")
    zps = tuple_of_tensors(types[2], "input_zero_points")
    if not len(data) == len(scales) == len(zps):
        fail(f"{len(data)} tensors but {len(scales)} input_scales and {len(zps)} "
             f"input_zero_points")
    for i, (t, s, z) in enumerate(zip(data, scales, zps)):
        check_quant(t, f"data.{i}")
        check_scale_zp(s, z, f"input.{i}")
    check_scale_zp(tensor(types[3], "output_scale"), tensor(types[4], "output_zero_point"),
                   "output")
    return get_op("concatenate").type_rel([types[0]], ConcatenateAttrs(attrs.axis))


def _concatenate_ref(xs, scales, zps, sc, zc, attrs):
    outs = [saturate_round(centered(x, z).astype(np.float32) * ratio(s, sc), zc, x.dtype.name)
            for x, s, z in zip(xs, scales, zps)]
    return np.concatenate(outs, axis=attrs.axis)


register_op("qnn.concatenate", rel=_concatenate_rel, ref=_concatenate_ref,
            pattern=OpPattern.INJECTIVE, num_inputs=5,
            arg_names=("data", "input_scales", "input_zero_points", "output_scale",
                       "output_zero_point"), attrs=ConcatenateAttrs,
            description="each input requantized to the output's scale, then joined")


_POOL_ARGS = ("data", "input_scale", "input_zero_point", "output_scale", "output_zero_point")


def _avg_pool2d_rel(types, attrs):
    data, in_s, in_zp, out_s, out_zp = tensors(types, _POOL_ARGS)
    check_quant(data, "data")
    check_scale_zp(in_s, in_zp, "input")
    check_scale_zp(out_s, out_zp, "output")
    out = get_op("nn.avg_pool2d").type_rel([TensorType(data.shape, "float32")], attrs)
    return TensorType(out.shape, data.dtype)


def _avg_pool2d_ref(data, in_s, in_zp, out_s, out_zp, attrs):
    mean = get_op("nn.avg_pool2d").reference(centered(data, in_zp).astype(np.float32), attrs)
    return saturate_round(mean * ratio(in_s, out_s), out_zp, data.dtype.name)


register_op("qnn.avg_pool2d", rel=_avg_pool2d_rel, ref=_avg_pool2d_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=5, arg_names=_POOL_ARGS,
            attrs=AvgPool2DAttrs,
            description="the float32 mean of the centred inputs, requantized")


def _binary_params(lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
                   output_zero_point) -> list:
    return [as_param(lhs_scale, "float32"), as_param(lhs_zero_point, "int32"),
            as_param(rhs_scale, "float32"), as_param(rhs_zero_point, "int32"),
            as_param(output_scale, "float32"), as_param(output_zero_point, "int32")]


def add(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
        output_zero_point):
    """Relay's ``qnn.op.add``."""
    return call("qnn.add", [lhs, rhs, *_binary_params(
        lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
        output_zero_point)])


def mul(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
        output_zero_point):
    """Relay's ``qnn.op.mul``."""
    return call("qnn.mul", [lhs, rhs, *_binary_params(
        lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
        output_zero_point)])


def concatenate(data, input_scales, input_zero_points, output_scale, output_zero_point, axis):
    """Relay's ``qnn.op.concatenate``: lists of tensors, scales and zero points."""
    return call("qnn.concatenate", [
        _tensor_list(data),
        _tensor_list([as_param(s, "float32") for s in input_scales]),
        _tensor_list([as_param(z, "int32") for z in input_zero_points]),
        as_param(output_scale, "float32"), as_param(output_zero_point, "int32")], axis=axis)


def avg_pool2d(data, input_scale, input_zero_point, output_scale, output_zero_point,
               pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout="NCHW", out_layout="", ceil_mode=False, count_include_pad=False):
    """Relay's ``qnn.op.avg_pool2d``."""
    return call("qnn.avg_pool2d", [data, as_param(input_scale, "float32"),
                                   as_param(input_zero_point, "int32"),
                                   as_param(output_scale, "float32"),
                                   as_param(output_zero_point, "int32")],
                pool_size=pool_size, strides=strides, dilation=dilation, padding=padding,
                layout=layout, out_layout=out_layout, ceil_mode=ceil_mode,
                count_include_pad=count_include_pad)
