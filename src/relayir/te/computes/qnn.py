"""Computes of ``op/qnn``. ``CanonicalizeQNN`` (in the pipeline at every opt level)
rewrites the Relay-level ``qnn.*`` ops into integer and float ops that have computes, so
those have none of their own (a program lowered without the pipeline still runs, through
the references). The products it lowers to, ``qnn.contrib_dense_packed`` /
``qnn.contrib_conv2d_packed``, are the C routines ``rl_qgemm_u8s8`` /
``rl_qconv2d_u8s8`` (``codegen/routines_int8.py``)."""

from __future__ import annotations

from ...op import qnn as _qnn
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


def _conv(routine: str, name: str, with_channels: bool):
    def rule(attrs, inputs, out):
        data, weight = inputs
        n, c, h, w = data.shape
        oh, ow = out.shape[2:]
        geometry = (*attrs.kernel_size, *attrs.strides, *attrs.padding[:2], *attrs.dilation,
                    attrs.pad_value)
        shape = (n, c, h, w, *((attrs.channels,) if with_channels else ()), oh, ow)
        return extern([(out.shape, out.dtype)], [data, weight], routine, (*shape, *geometry),
                      name=name, tag="conv")[0]

    return rule


COMPUTE.register("qnn.contrib_conv2d_packed")(_conv("rl_qconv2d_u8s8", "qconv", True))
COMPUTE.register("qnn.contrib_depthwise_conv2d")(
    _conv("rl_qdepthwise_u8s8", "qdepthwise", False))
