"""Computes of ``op/qnn``. ``CanonicalizeQNN`` (in the pipeline at every opt level)
rewrites the Relay-level ``qnn.*`` ops into integer and float ops that have computes, so
those have none of their own (a program lowered without the pipeline still runs, through
the references). The products it lowers to, ``qnn.contrib_dense_packed`` /
``qnn.contrib_conv2d_packed`` / ``qnn.contrib_depthwise_conv2d`` (and their requantizing
forms), are the C routines ``rl_qgemm_u8s8`` / ``rl_qconv2d_u8s8[_rq]`` /
``rl_qdepthwise_u8s8[_rq]`` (``codegen/routines_int8.py``)."""

from __future__ import annotations

from ...op import qnn as _qnn
from ...op.qnn.packed import nchw_dims
from ..tensor import extern
from .common import COMPUTE, declare_reference_only, prod

for _name in _qnn.op.__all__:
    declare_reference_only(f"qnn.{_name}", "CanonicalizeQNN lowers it to integer ops first")


@COMPUTE.register("qnn.contrib_dense_packed")
def dense_packed(attrs, inputs, out):
    data, weight = inputs
    rows = prod(data.shape[:-1])
    return extern([(out.shape, out.dtype)], [data, weight], "rl_qgemm_u8s8",
                  (rows, attrs.units, data.shape[-1]), name="qgemm", tag="dense")[0]


def _conv(routine: str, name: str, with_channels: bool, requant: bool = False):
    def rule(attrs, inputs, out):
        data = inputs[0]
        n, c, h, w = nchw_dims(data.shape, attrs.layout)
        oh, ow = nchw_dims(out.shape, attrs.layout)[2:]
        geometry = (*attrs.kernel_size, *attrs.strides, *attrs.padding[:2], *attrs.dilation,
                    attrs.pad_value, int(attrs.layout == "NHWC"))
        if requant:  # the requantize its tiles get before they are stored
            geometry += (attrs.zero_point, attrs.clip_min, attrs.clip_max)
        shape = (n, c, h, w, *((attrs.channels,) if with_channels else ()), oh, ow)
        return extern([(out.shape, out.dtype)], list(inputs), routine, (*shape, *geometry),
                      name=name, tag="conv")[0]

    return rule


COMPUTE.register("qnn.contrib_conv2d_packed")(_conv("rl_qconv2d_u8s8", "qconv", True))
COMPUTE.register("qnn.contrib_depthwise_conv2d")(
    _conv("rl_qdepthwise_u8s8", "qdepthwise", False))
COMPUTE.register("qnn.contrib_conv2d_packed_requant")(
    _conv("rl_qconv2d_u8s8_rq", "qconv_rq", True, requant=True))
COMPUTE.register("qnn.contrib_depthwise_conv2d_requant")(
    _conv("rl_qdepthwise_u8s8_rq", "qdepthwise_rq", False, requant=True))
