"""Convolutions in the blocked layout ``NCHW[x]c`` (TVM's ``contrib`` ops for x86):

- ``nn.contrib_conv2d_NCHWc``: data ``NCHW[x]c``, weight ``OIHW[x]i[y]o``, result
  ``NCHW[y]c``. The innermost ``[y]o`` axis of the weight is the one the output block
  runs along, so a kernel reads ``y`` consecutive weights per input channel: the
  register-tiled matmul form with the weight already packed (``layout_transform`` of a
  constant weight, folded when the model is built). Groups are allowed when each
  group's input and output channels are whole blocks.
- ``nn.contrib_depthwise_conv2d_NCHWc``: ``groups == channels``, one filter per channel;
  data and result ``NCHW[x]c``, weight ``OIHW1i[x]o`` (shape ``(C/x, 1, kh, kw, 1, x)``),
  so a kernel runs along the channel block with both operands contiguous.

``transform.AlterOpLayout`` introduces them; the numpy references go through ``NCHW``.
"""

from __future__ import annotations

import dataclasses
import re

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import set_fields
from ..layout import transform_array
from ..type_rel import dim_may_equal, fail, tensors
from ._common import (
    _acc_dtype,
    _dtype_attr,
    _ints,
    _out_dtype,
    _padding,
    _positive,
    _static,
    _window_out,
)
from .conv import conv_nc

_DATA = re.compile(r"NCHW(\d+)c")
_KERNEL = re.compile(r"OIHW(\d+)i(\d+)o")


def data_block(layout: str, name: str = "data_layout") -> int:
    """The channel block of an ``NCHW[x]c`` layout."""
    m = _DATA.fullmatch(layout) if isinstance(layout, str) else None
    if m is None or int(m.group(1)) < 1:
        raise ValueError(f"{name} must be NCHW[x]c such as 'NCHW16c', found {layout!r}")
    return int(m.group(1))


def kernel_blocks(layout: str) -> tuple[int, int]:
    """``(x, y)`` of an ``OIHW[x]i[y]o`` kernel layout."""
    m = _KERNEL.fullmatch(layout) if isinstance(layout, str) else None
    if m is None or min(int(m.group(1)), int(m.group(2))) < 1:
        raise ValueError(f"kernel_layout must be OIHW[x]i[y]o such as 'OIHW16i16o', found "
                         f"{layout!r}")
    return int(m.group(1)), int(m.group(2))


@dataclasses.dataclass(frozen=True)
class Conv2DNCHWcAttrs(Attrs):
    """``nn.conv2d``'s attributes with blocked layouts; all three layouts are explicit."""

    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCHW16c"
    kernel_layout: str = "OIHW16i16o"
    out_layout: str = "NCHW16c"
    out_dtype: str = ""

    _spatial = "HW"

    def __post_init__(self):
        set_fields(self, strides=_ints(self.strides, 2, "strides", 1),
                   padding=_padding(self.padding, 2),
                   dilation=_ints(self.dilation, 2, "dilation", 1),
                   groups=_positive(self.groups, "groups"),
                   out_dtype=_dtype_attr(self.out_dtype))
        if self.channels is not None:
            set_fields(self, channels=_positive(self.channels, "channels"))
        if self.kernel_size is not None:
            set_fields(self, kernel_size=_ints(self.kernel_size, 2, "kernel_size", 1))
        data_block(self.data_layout)
        data_block(self.out_layout, "out_layout")
        kernel_blocks(self.kernel_layout)


def _spatial_out(attrs, h, w, kh, kw, where: str) -> tuple:
    out = []
    for j, (d, k) in enumerate(((h, kh), (w, kw))):
        o = _window_out(d, k, attrs.strides[j], attrs.dilation[j], attrs.padding[j],
                        attrs.padding[j + 2])
        if isinstance(o, int) and o < 1:
            fail(f"the kernel (dilation {attrs.dilation}) is larger than the padded input: "
                 f"{where}")
        out.append(o)
    return tuple(out)


def _check_common(attrs, data, weight, o, where):
    if attrs.channels is not None and not dim_may_equal(o, attrs.channels):
        fail(f"channels={attrs.channels} but weight has {o} output channels: {where}")
    ks = tuple(weight.shape[2:4])
    if attrs.kernel_size is not None and not all(map(dim_may_equal, ks, attrs.kernel_size)):
        fail(f"kernel_size={attrs.kernel_size} but the weight's kernel is {ks}: {where}")


def _conv_nchwc_rel(types, attrs):
    data, weight = tensors(types, ("data", "weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    x, (ki, ko), y = data_block(attrs.data_layout), kernel_blocks(attrs.kernel_layout), \
        data_block(attrs.out_layout)
    where = f"data is {data} but weight is {weight}"
    if data.ndim != 5 or weight.ndim != 6:
        fail(f"data must have rank 5 ({attrs.data_layout}) and weight rank 6 "
             f"({attrs.kernel_layout}): {where}")
    if ki != x or ko != y:
        fail(f"kernel_layout {attrs.kernel_layout} must block its inputs like data_layout "
             f"{attrs.data_layout} and its outputs like out_layout {attrs.out_layout}: "
             f"{where}")
    if not dim_may_equal(data.shape[4], x) or not all(
            map(dim_may_equal, weight.shape[4:], (x, y))):
        fail(f"the inner blocks must be {x} (data) and ({x}, {y}) (weight): {where}")
    n, cb, h, w, _ = data.shape
    ob, ib, kh, kw = weight.shape[:4]
    g = attrs.groups
    c = cb * x if _static(cb) else cb
    i = ib * x if _static(ib) else ib
    o = ob * y if _static(ob) else ob
    if _static(c, i) and c != i * g:
        fail(f"input channels mismatch: data has {c} channels but weight expects {i} x "
             f"groups {g} = {i * g}: {where}")
    if _static(o) and (o % g or (o // g) % y):
        fail(f"each of the {g} groups must have whole blocks of {y} output channels, but "
             f"weight has {o}: {where}")
    _check_common(attrs, data, weight, o, where)
    oh, ow = _spatial_out(attrs, h, w, kh, kw, where)
    return TensorType((n, ob, oh, ow, y), dtype)


def _depthwise_rel(types, attrs):
    data, weight = tensors(types, ("data", "weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    x = data_block(attrs.data_layout)
    where = f"data is {data} but weight is {weight}"
    if data_block(attrs.out_layout) != x or kernel_blocks(attrs.kernel_layout) != (1, x):
        fail(f"a depthwise NCHWc convolution keeps the block: out_layout NCHW{x}c and "
             f"kernel_layout OIHW1i{x}o, found {attrs.out_layout} and {attrs.kernel_layout}: "
             f"{where}")
    if data.ndim != 5 or weight.ndim != 6:
        fail(f"data must have rank 5 ({attrs.data_layout}) and weight rank 6 "
             f"({attrs.kernel_layout}): {where}")
    n, cb, h, w, _ = data.shape
    if not all(map(dim_may_equal, (data.shape[4], *weight.shape[4:]), (x, 1, x))) or not (
            dim_may_equal(weight.shape[0], cb) and dim_may_equal(weight.shape[1], 1)):
        fail(f"weight must have shape ({cb}, 1, kh, kw, 1, {x}): {where}")
    c = cb * x if _static(cb) else cb
    if _static(c) and attrs.groups != c:
        fail(f"groups must equal the {c} channels of a depthwise convolution, found "
             f"groups={attrs.groups}: {where}")
    _check_common(attrs, data, weight, c, where)
    oh, ow = _spatial_out(attrs, h, w, weight.shape[2], weight.shape[3], where)
    return TensorType((n, cb, oh, ow, x), dtype)


def _conv_nchwc_ref(data, weight, attrs):
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    kernel = "OIHW" + attrs.kernel_layout[4:]
    x = transform_array(data, attrs.data_layout, "NCHW").astype(acc)
    w = transform_array(weight, kernel, "OIHW").astype(acc)
    out = conv_nc(x, w, attrs.strides, attrs.padding, attrs.dilation, attrs.groups)
    return transform_array(out, "NCHW", attrs.out_layout).astype(dtype)


register_op("nn.contrib_conv2d_NCHWc", rel=_conv_nchwc_rel, ref=_conv_nchwc_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2,
            arg_names=("data", "weight"), attrs=Conv2DNCHWcAttrs,
            description="2-D convolution, data NCHW[x]c, weight OIHW[x]i[y]o")
register_op("nn.contrib_depthwise_conv2d_NCHWc", rel=_depthwise_rel, ref=_conv_nchwc_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2,
            arg_names=("data", "weight"), attrs=Conv2DNCHWcAttrs,
            description="depthwise 2-D convolution, data NCHW[x]c, weight OIHW1i[x]o")


def contrib_conv2d_NCHWc(  # noqa: N802  (named as the op, like every nn constructor)
        data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
        channels=None, kernel_size=None, data_layout="NCHW16c", kernel_layout="OIHW16i16o",
        out_layout="NCHW16c", out_dtype=""):
    """``nn.contrib_conv2d_NCHWc``: a 2-D convolution in blocked layouts."""
    return call("nn.contrib_conv2d_NCHWc", [data, weight], strides=strides, padding=padding,
                dilation=dilation, groups=groups, channels=channels, kernel_size=kernel_size,
                data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                out_dtype=out_dtype)


def contrib_depthwise_conv2d_NCHWc(  # noqa: N802
        data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
        channels=None, kernel_size=None, data_layout="NCHW16c", kernel_layout="OIHW1i16o",
        out_layout="NCHW16c", out_dtype=""):
    """``nn.contrib_depthwise_conv2d_NCHWc``: one filter per channel, blocked layouts
    (``groups`` is the number of channels)."""
    return call("nn.contrib_depthwise_conv2d_NCHWc", [data, weight], strides=strides,
                padding=padding, dilation=dilation, groups=groups, channels=channels,
                kernel_size=kernel_size, data_layout=data_layout, kernel_layout=kernel_layout,
                out_layout=out_layout, out_dtype=out_dtype)
