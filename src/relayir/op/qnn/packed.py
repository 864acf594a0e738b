"""``qnn.contrib_dense_packed``: ``data (..., K) uint8 x weight (N, K) int8 → int32``, and
``qnn.contrib_conv2d_packed``: the NCHW convolution of uint8 data padded with
``pad_value`` by an int8 kernel whose taps ``(kh, kw, c)`` (channels padded to a multiple
of 4) are the packed ``K``,
the weight packed at build time as ``vpdpbusd`` reads it (``pack_weight``): blocks of 16
output columns, in a block groups of 4 consecutive ``k`` per column, zero padded,
``(ceil(N/16), ceil(K/4), 16, 4)``. ``CanonicalizeQNN`` lowers 8-bit dense layers and
convolutions (by im2col) to it; the cpu target runs it as the C routine
``rl_qgemm_u8s8`` (``codegen/routines_int8.py``), exact like this reference.

The convolutions take their data and write their output in ``layout``: ``NCHW`` (as
``CanonicalizeQNN`` writes them) or ``NHWC``, which opt level 3 picks on the cpu target
(``ConvertLayout``): there a pixel's channels are the contiguous ``K`` the routine reads
and the ``N`` it writes, so int8 activations pass from layer to layer with no
transposing copy; the packed weight is the same in both."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import attr_int, attr_ints, set_fields
from ..nn.conv import conv_nc
from ..type_rel import dim_may_equal, fail, tensors

BLOCK_N, GROUP_K = 16, 4


def packed_shape(n: int, k: int) -> tuple:
    return (-(-n // BLOCK_N), -(-k // GROUP_K), BLOCK_N, GROUP_K)


def pack_weight(w: np.ndarray) -> np.ndarray:
    """``(N, K)`` int8 → ``(ceil(N/16), ceil(K/4), 16, 4)``, zero padded."""
    n, k = w.shape
    nb, k4, _, _ = packed_shape(n, k)
    padded = np.zeros((nb * BLOCK_N, k4 * GROUP_K), np.int8)
    padded[:n, :k] = w
    return np.ascontiguousarray(
        padded.reshape(nb, BLOCK_N, k4, GROUP_K).transpose(0, 2, 1, 3))


def unpack_weight(p: np.ndarray, n: int, k: int) -> np.ndarray:
    nb, k4, bn, gk = p.shape
    return p.transpose(0, 2, 1, 3).reshape(nb * bn, k4 * gk)[:n, :k]


@dataclasses.dataclass(frozen=True)
class DensePackedAttrs(Attrs):
    units: int = 1

    def __post_init__(self):
        set_fields(self, units=attr_int(self.units, "units"))
        if self.units < 1:
            raise ValueError(f"units must be >= 1, found {self.units}")


def _rel(types, attrs):
    data, weight = tensors(types, ("data", "weight"))
    if data.dtype != "uint8" or weight.dtype != "int8":
        fail(f"data must be uint8 and weight int8, found {data} and {weight}")
    if data.ndim < 1 or weight.ndim != 4:
        fail(f"data must have rank >= 1 and the packed weight rank 4, found {data} and "
             f"{weight}")
    k = data.shape[-1]
    if not isinstance(k, int):
        fail(f"the reduction extent of data must be static, found {data}")
    want = packed_shape(attrs.units, k)
    if not all(dim_may_equal(a, b) for a, b in zip(weight.shape, want)):
        fail(f"the weight packed for units={attrs.units} and {k} inputs has shape {want}, "
             f"found {weight}")
    return TensorType((*data.shape[:-1], attrs.units), "int32")


def _ref(data, weight, attrs):
    w = unpack_weight(weight, attrs.units, data.shape[-1]).astype(np.int64)
    return np.matmul(data.astype(np.int64), w.T).astype(np.int32)


register_op("qnn.contrib_dense_packed", rel=_rel, ref=_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2, arg_names=("data", "weight"),
            attrs=DensePackedAttrs,
            description="uint8 data x int8 weight packed for vpdpbusd → int32, exact")


def contrib_dense_packed(data, weight, units):
    """``data @ unpack(weight).T`` in int32; ``weight`` from ``pack_weight``."""
    return call("qnn.contrib_dense_packed", [data, weight], units=units)


PACKED_LAYOUTS = ("NCHW", "NHWC")  # of the data and the output


@dataclasses.dataclass(frozen=True)
class Conv2DPackedAttrs(Attrs):
    channels: int = 1
    kernel_size: tuple = (1, 1)
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    pad_value: int = 0
    layout: str = "NCHW"

    def __post_init__(self):
        if self.layout not in PACKED_LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(PACKED_LAYOUTS)}, found "
                             f"{self.layout!r}")
        set_fields(self, channels=attr_int(self.channels, "channels"),
                   kernel_size=attr_ints(self.kernel_size, "kernel_size"),
                   strides=attr_ints(self.strides, "strides"),
                   padding=attr_ints(self.padding, "padding"),
                   dilation=attr_ints(self.dilation, "dilation"),
                   pad_value=attr_int(self.pad_value, "pad_value"))
        if not 0 <= self.pad_value <= 255:
            raise ValueError(f"pad_value must be a uint8 value, found {self.pad_value}")


def conv_kernel_columns(w: np.ndarray) -> np.ndarray:
    """An OIHW kernel as the ``(O, KH * KW * C4)`` matrix the packed convolution reads:
    taps outer, channels (zero padded to a multiple of 4) inner."""
    o, c, kh, kw = w.shape
    c4 = -(-c // GROUP_K) * GROUP_K
    padded = np.zeros((o, kh, kw, c4), w.dtype)
    padded[..., :c] = w.transpose(0, 2, 3, 1)
    return padded.reshape(o, kh * kw * c4)


def _out_hw(h, w, attrs):
    (kh, kw), (sh, sw), (dh, dw) = attrs.kernel_size, attrs.strides, attrs.dilation
    pt, pl, pb, pr = attrs.padding
    return ((h + pt + pb - (kh - 1) * dh - 1) // sh + 1,
            (w + pl + pr - (kw - 1) * dw - 1) // sw + 1)


def _uint8_data(types, attrs):
    """The packed convolutions' operands: static uint8 data in ``attrs.layout``, an int8
    weight; and the data's ``(n, c, h, w)``."""
    data, weight = tensors(types, ("data", "weight"))
    if data.dtype != "uint8" or weight.dtype != "int8":
        fail(f"data must be uint8 and weight int8, found {data} and {weight}")
    if data.ndim != 4 or not all(isinstance(d, int) for d in data.shape):
        fail(f"data must be a static {attrs.layout} tensor, found {data}")
    return data, weight, nchw_dims(data.shape, attrs.layout)


def nchw_dims(shape, layout: str) -> tuple:
    """``(n, c, h, w)`` of a 4-d shape in ``layout`` (NCHW or NHWC)."""
    return tuple(shape) if layout == "NCHW" else (shape[0], shape[3], shape[1], shape[2])


def _in_layout(n, c, h, w, layout: str) -> tuple:
    return (n, c, h, w) if layout == "NCHW" else (n, h, w, c)


def _as_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    return x if layout == "NCHW" else x.transpose(0, 3, 1, 2)


def _from_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    return x if layout == "NCHW" else np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def _conv_rel(types, attrs):
    data, weight, (n, c, h, w) = _uint8_data(types, attrs)
    kh, kw = attrs.kernel_size
    want = packed_shape(attrs.channels, kh * kw * (-(-c // GROUP_K) * GROUP_K))
    if tuple(weight.shape) != want:
        fail(f"the kernel packed for {attrs.channels} channels, {c} inputs and a {kh}x{kw} "
             f"window has shape {want}, found {weight}")
    oh, ow = _out_hw(h, w, attrs)
    if oh < 1 or ow < 1:
        fail(f"the window is larger than the padded input: data is {data}")
    return TensorType(_in_layout(n, attrs.channels, oh, ow, attrs.layout), "int32")


def _conv_ref(data, weight, attrs):
    data = _as_nchw(data, attrs.layout)
    n, c, h, w = data.shape
    (kh, kw), o = attrs.kernel_size, attrs.channels
    c4 = -(-c // GROUP_K) * GROUP_K
    cols = unpack_weight(weight, o, kh * kw * c4).reshape(o, kh, kw, c4)[..., :c]
    kernel = cols.transpose(0, 3, 1, 2).astype(np.int64)
    pt, pl, pb, pr = attrs.padding
    x = np.pad(data.astype(np.int64), ((0, 0), (0, 0), (pt, pb), (pl, pr)),
               constant_values=attrs.pad_value)
    out = conv_nc(x, kernel, attrs.strides, (0, 0, 0, 0), attrs.dilation, 1)
    return _from_nchw(out.astype(np.int32), attrs.layout)


register_op("qnn.contrib_conv2d_packed", rel=_conv_rel, ref=_conv_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2, arg_names=("data", "weight"),
            attrs=Conv2DPackedAttrs,
            description="NCHW / NHWC uint8 data (padded with pad_value) x packed int8 "
                        "kernel → int32")


def contrib_conv2d_packed(data, weight, channels, kernel_size, strides=(1, 1),
                          padding=(0, 0, 0, 0), dilation=(1, 1), pad_value=0, layout="NCHW"):
    """The convolution by a kernel from ``pack_weight(conv_kernel_columns(w))``."""
    return call("qnn.contrib_conv2d_packed", [data, weight], channels=channels,
                kernel_size=kernel_size, strides=strides, padding=padding, dilation=dilation,
                pad_value=pad_value, layout=layout)


def _depthwise_rel(types, attrs):
    data, weight, (n, c, h, w) = _uint8_data(types, attrs)
    want = (c, 1, *attrs.kernel_size)
    if tuple(weight.shape) != want or attrs.channels != c:
        fail(f"a depthwise kernel for {c} channels must be {want} with channels={c}, "
             f"found {weight} and channels={attrs.channels}")
    oh, ow = _out_hw(h, w, attrs)
    if oh < 1 or ow < 1:
        fail(f"the window is larger than the padded input: data is {data}")
    return TensorType(_in_layout(n, c, oh, ow, attrs.layout), "int32")


def _depthwise_ref(data, weight, attrs):
    data = _as_nchw(data, attrs.layout)
    pt, pl, pb, pr = attrs.padding
    x = np.pad(data.astype(np.int64), ((0, 0), (0, 0), (pt, pb), (pl, pr)),
               constant_values=attrs.pad_value)
    out = conv_nc(x, weight.astype(np.int64), attrs.strides, (0, 0, 0, 0), attrs.dilation,
                  data.shape[1])
    return _from_nchw(out.astype(np.int32), attrs.layout)


register_op("qnn.contrib_depthwise_conv2d", rel=_depthwise_rel, ref=_depthwise_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2, arg_names=("data", "weight"),
            attrs=Conv2DPackedAttrs,
            description="NCHW / NHWC uint8 data (padded with pad_value), one int8 filter "
                        "per channel → int32")


def contrib_depthwise_conv2d(data, weight, channels, kernel_size, strides=(1, 1),
                             padding=(0, 0, 0, 0), dilation=(1, 1), pad_value=0, layout="NCHW"):
    """The depthwise convolution of uint8 ``data`` by the int8 ``(C, 1, KH, KW)`` kernel."""
    return call("qnn.contrib_depthwise_conv2d", [data, weight], channels=channels,
                kernel_size=kernel_size, strides=strides, padding=padding, dilation=dilation,
                pad_value=pad_value, layout=layout)
