"""``qnn.conv2d``, ``qnn.dense``, ``qnn.batch_matmul``: products of (u)int8 tensors with
zero points, accumulated exactly in int32 (``out_dtype``). The scales are carried, not
applied: a ``qnn.requantize`` by ``input_scale * kernel_scale`` brings the result back
to 8 bits, as in Relay."""

from __future__ import annotations

import dataclasses

from ...ir.op import OpPattern, call, get_op, register_op
from ..nn.conv import Conv2DAttrs
from ..nn.linear import BatchMatmulAttrs, DenseAttrs
from ..type_rel import fail, tensors
from ._common import ACC_DTYPES, along, as_param, centered, check_quant, check_scale_zp

_ZP_ARGS = ("input_zero_point", "kernel_zero_point", "input_scale", "kernel_scale")


@dataclasses.dataclass(frozen=True)
class QnnConv2DAttrs(Conv2DAttrs):
    out_dtype: str = "int32"


@dataclasses.dataclass(frozen=True)
class QnnDenseAttrs(DenseAttrs):
    out_dtype: str = "int32"


@dataclasses.dataclass(frozen=True)
class QnnBatchMatmulAttrs(BatchMatmulAttrs):
    out_dtype: str = "int32"


def _quant_rel(float_op: str, kernel_axis):
    """The relation of ``float_op`` on the two data inputs, after checking their dtypes
    and the per-tensor input / per-output-channel kernel parameters."""
    base = get_op(float_op).type_rel

    def rel(types, attrs):
        data, kernel, izp, kzp, iscale, kscale = tensors(types, ("data", "kernel", *_ZP_ARGS))
        check_quant(data, "data")
        check_quant(kernel, "kernel")
        if attrs.out_dtype not in ACC_DTYPES:
            fail(f"out_dtype must be int32 (the accumulator), found {attrs.out_dtype}")
        check_scale_zp(iscale, izp, "input")
        ax = kernel_axis(attrs)
        ch = kernel.shape[ax] if ax is not None and kernel.ndim > ax else None
        check_scale_zp(kscale, kzp, "kernel", ch, f"kernel axis {ax}")
        return base([data, kernel], attrs)

    return rel


def _conv_kernel_axis(attrs):
    return attrs.kernel_layout.index("O")


def _quant_ref(float_op: str, kernel_axis):
    base = get_op(float_op).reference

    def ref(data, kernel, izp, kzp, iscale, kscale, attrs):
        ax = kernel_axis(attrs)
        k = centered(kernel, kzp if ax is None else along(kzp, kernel.ndim, ax))
        return base(centered(data, izp), k, attrs)

    return ref


_OPS = {
    "qnn.conv2d": ("nn.conv2d", QnnConv2DAttrs, _conv_kernel_axis),
    "qnn.dense": ("nn.dense", QnnDenseAttrs, lambda attrs: 0),
    "qnn.batch_matmul": ("nn.batch_matmul", QnnBatchMatmulAttrs, lambda attrs: None),
}
for _name, (_float, _attrs, _axis) in _OPS.items():
    register_op(_name, rel=_quant_rel(_float, _axis), ref=_quant_ref(_float, _axis),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=6,
                arg_names=("data", "kernel", *_ZP_ARGS), attrs=_attrs,
                description=f"{_float} of (data - input_zero_point) and (kernel - "
                            f"kernel_zero_point), accumulated in int32")


def _params(input_zero_point, kernel_zero_point, input_scale, kernel_scale) -> list:
    return [as_param(input_zero_point, "int32"), as_param(kernel_zero_point, "int32"),
            as_param(input_scale, "float32"), as_param(kernel_scale, "float32")]


def conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale,
           strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
           kernel_size=None, data_layout="NCHW", kernel_layout="", out_layout="",
           out_dtype="int32"):
    """Relay's ``qnn.op.conv2d``: the kernel's zero point and scale may be per output
    channel."""
    return call("qnn.conv2d", [data, kernel, *_params(input_zero_point, kernel_zero_point,
                                                      input_scale, kernel_scale)],
                strides=strides, padding=padding, dilation=dilation, groups=groups,
                channels=channels, kernel_size=kernel_size, data_layout=data_layout,
                kernel_layout=kernel_layout, out_layout=out_layout, out_dtype=out_dtype)


def dense(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale,
          units=None, out_dtype="int32"):
    """Relay's ``qnn.op.dense``: ``weight`` is ``(units, in)``; its zero point and scale
    may be per unit."""
    return call("qnn.dense", [data, weight, *_params(input_zero_point, kernel_zero_point,
                                                     input_scale, kernel_scale)],
                units=units, out_dtype=out_dtype)


def batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale, out_dtype="int32",
                 transpose_a=False, transpose_b=True):
    """Relay's ``qnn.op.batch_matmul`` (per-tensor parameters)."""
    return call("qnn.batch_matmul", [x, y, *_params(x_zero_point, y_zero_point, x_scale,
                                                    y_scale)],
                out_dtype=out_dtype, transpose_a=transpose_a, transpose_b=transpose_b)
