"""``nn.deformable_conv2d`` (Relay's op, ONNX ``DeformConv``'s maths without a mask).

Each kernel tap of each output pixel reads the data at its usual position plus a learnt
offset ``(dy, dx)``, bilinearly interpolated: a tap whose position is outside
``[0, H) x [0, W)`` reads 0, and so does each of the four neighbours outside the image
(TOPI's rule). ``offset`` is ``(N, deformable_groups * KH * KW * 2, OH, OW)`` (``NHWC``:
channels last), its channels ordered ``(group, kh, kw, [dy, dx])``; input channel ``c``
uses the offsets of deformable group ``c // (C / deformable_groups)``. The sampled
columns then meet the weight as a grouped convolution does.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import set_fields
from ..type_rel import dim_may_equal, fail, tensor
from ._common import _acc_dtype, _from_canonical, _positive, _to_canonical
from .conv import Conv2DAttrs, _conv_rel

LAYOUTS = {"NCHW": "OIHW", "NHWC": "HWIO"}


@dataclasses.dataclass(frozen=True)
class DeformableConv2DAttrs(Conv2DAttrs):
    deformable_groups: int = 1

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, deformable_groups=_positive(self.deformable_groups,
                                                     "deformable_groups"))
        if self.data_layout not in LAYOUTS:
            raise ValueError(f"data_layout must be NCHW or NHWC, found {self.data_layout!r}")

    def offset_channels(self, kernel) -> int:
        return self.deformable_groups * kernel[0] * kernel[1] * 2


def offset_shape(attrs, out: TensorType, kernel) -> tuple:
    """The offset's shape for the convolution's output type ``out``."""
    d = dict(zip(attrs.out_layout or attrs.data_layout, out.shape))
    channels = attrs.offset_channels(kernel)
    if attrs.data_layout == "NCHW":
        return (d["N"], channels, d["H"], d["W"])
    return (d["N"], d["H"], d["W"], channels)


def _rel(types, attrs):
    data, weight = tensor(types[0], "data"), tensor(types[2], "weight")
    out = _conv_rel([data, weight], attrs)
    c = dict(zip(attrs.data_layout, data.shape))["C"]
    if isinstance(c, int) and c % attrs.deformable_groups:
        fail(f"data has {c} channels, which deformable_groups={attrs.deformable_groups} "
             "does not divide")
    kernel = [dict(zip(attrs.kernel_layout, weight.shape))[a] for a in "HW"]
    offset = tensor(types[1], "offset")
    if not all(isinstance(k, int) for k in kernel):
        return out
    want = offset_shape(attrs, out, kernel)
    if offset.ndim != 4 or not all(map(dim_may_equal, offset.shape, want)):
        fail(f"offset must have shape {want} ({attrs.data_layout}: deformable_groups x "
             f"kernel taps x 2 channels) for data {data} and weight {weight}, found {offset}")
    if offset.dtype != data.dtype:
        fail(f"offset must have the data's dtype {data.dtype}, found {offset}")
    return out


def _sample(x: np.ndarray, y: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Bilinear reads of ``x`` (N, G, Cg, H, W) at rows ``y`` / columns ``xs`` (N, G, T),
    0 outside: (N, G, Cg, T). A NaN position reads NaN."""
    n, g, cg, h, w = x.shape
    flat = x.reshape(n, g, cg, h * w)
    inside = (y >= 0) & (y < h) & (xs >= 0) & (xs < w) | np.isnan(y) | np.isnan(xs)
    y0, x0 = np.floor(y), np.floor(xs)
    total = np.zeros((n, g, cg, y.shape[-1]), x.dtype)
    for yp, xp in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
        with np.errstate(invalid="ignore"):  # inf - inf at an infinite position: not read
            weight = (1 - np.abs(y - yp)) * (1 - np.abs(xs - xp))
        ok = (yp >= 0) & (yp < h) & (xp >= 0) & (xp < w)
        index = np.where(ok, yp * w + xp, 0).astype(np.int64)
        vals = np.take_along_axis(flat, np.broadcast_to(index[:, :, None], total.shape), 3)
        total += np.where(ok | np.isnan(weight), weight, 0)[:, :, None] * vals
    return np.where(inside[:, :, None], total, 0)


def _ref(data, offset, weight, attrs):
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    x = _to_canonical(data, attrs.data_layout, "NCHW").astype(acc)
    off = _to_canonical(offset, attrs.data_layout, "NCHW").astype(acc)
    w = _to_canonical(weight, attrs.kernel_layout, "OIHW").astype(acc)
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    dg, g = attrs.deformable_groups, attrs.groups
    (sh, sw), (dh, dw), (pt, pl) = attrs.strides, attrs.dilation, attrs.padding[:2]
    off = off.reshape(n, dg, kh, kw, 2, oh, ow)
    rows = (np.arange(oh) * sh - pt)[None, :] + (np.arange(kh) * dh)[:, None]  # (kh, oh)
    cols = (np.arange(ow) * sw - pl)[None, :] + (np.arange(kw) * dw)[:, None]  # (kw, ow)
    y = rows[:, None, :, None] + off[:, :, :, :, 0]  # (n, dg, kh, kw, oh, ow)
    xs = cols[None, :, None, :] + off[:, :, :, :, 1]
    taps = kh * kw * oh * ow
    sampled = _sample(x.reshape(n, dg, c // dg, *x.shape[2:]), y.reshape(n, dg, taps),
                      xs.reshape(n, dg, taps))
    sampled = sampled.reshape(n, g, cg, kh, kw, oh, ow)
    out = np.einsum("ngcklhw,gockl->ngohw", sampled, w.reshape(g, o // g, cg, kh, kw))
    out = out.reshape(n, o, oh, ow)
    return _from_canonical(out, "NCHW", attrs.out_layout or attrs.data_layout).astype(dtype)


register_op("nn.deformable_conv2d", rel=_rel, ref=_ref, pattern=OpPattern.OPAQUE, num_inputs=3,
            arg_names=("data", "offset", "weight"), attrs=DeformableConv2DAttrs,
            description="2-D convolution whose taps read at learnt offsets (bilinear)")


def deformable_conv2d(data, offset, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                      deformable_groups=1, groups=1, channels=None, kernel_size=None,
                      data_layout="NCHW", kernel_layout="", out_layout="", out_dtype=""):
    """Relay's ``nn.deformable_conv2d`` (see the module docstring)."""
    return call("nn.deformable_conv2d", [data, offset, weight], strides=strides,
                padding=padding, dilation=dilation, deformable_groups=deformable_groups,
                groups=groups, channels=channels, kernel_size=kernel_size,
                data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                out_dtype=out_dtype)
