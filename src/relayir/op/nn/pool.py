"""Pooling: max/avg windows, global and adaptive pools."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.types import TensorType, is_float
from ..attrs_util import set_fields
from ..registry import Attrs, OpPattern, call, register_op
from ..type_rel import (
    fail,
    tensor,
)
from ._common import (
    _acc_dtype,
    _from_canonical,
    _ints,
    _layout_shape,
    _layouts,
    _pad_hw,
    _padding,
    _positive,
    _rank,
    _to_canonical,
    _window_out,
    _windows,
)

# ---------------------------------------------------------------- pooling


@dataclasses.dataclass(frozen=True)
class MaxPool2DAttrs(Attrs):
    pool_size: tuple = (1, 1)
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False

    def __post_init__(self):
        set_fields(self, pool_size=_ints(self.pool_size, 2, "pool_size", 1),
                   strides=_ints(self.strides, 2, "strides", 1),
                   dilation=_ints(self.dilation, 2, "dilation", 1),
                   padding=_padding(self.padding, 2), ceil_mode=bool(self.ceil_mode))
        _layouts(self, "NCHW", "layout")


@dataclasses.dataclass(frozen=True)
class AvgPool2DAttrs(MaxPool2DAttrs):
    count_include_pad: bool = False

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, count_include_pad=bool(self.count_include_pad))


def pool_out_hw(h, w, attrs):
    p = attrs.padding
    return tuple(
        _window_out(d, attrs.pool_size[j], attrs.strides[j], attrs.dilation[j], p[j], p[j + 2],
                    attrs.ceil_mode)
        for j, d in enumerate((h, w))
    )


def _pool_rel(types, attrs):
    data = tensor(types[0])
    _rank(data, "data", (4,), attrs.layout)
    dims = dict(zip(attrs.layout, data.shape))
    oh, ow = pool_out_hw(dims["H"], dims["W"], attrs)
    if (isinstance(oh, int) and oh < 1) or (isinstance(ow, int) and ow < 1):
        fail(f"pool_size {attrs.pool_size} (dilation {attrs.dilation}) is larger than the "
             f"padded input: data is {data}")
    dims.update(H=oh, W=ow)
    return TensorType(_layout_shape(dims, attrs.out_layout or attrs.layout), data.dtype)


def pool_geometry(x, attrs):
    """Padding with the ceil-mode overhang added after, and the output size."""
    oh, ow = pool_out_hw(x.shape[2], x.shape[3], attrs)
    t, lf, b, r = attrs.padding
    need = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in
            zip((oh, ow), attrs.strides, attrs.pool_size, attrs.dilation)]
    b = max(b, need[0] - x.shape[2] - t)
    r = max(r, need[1] - x.shape[3] - lf)
    return (t, lf, b, r), (oh, ow)


def _max_pool2d_ref(data, attrs):
    x = _to_canonical(data, attrs.layout, "NCHW")
    low = -np.inf if is_float(x.dtype.name) else np.iinfo(x.dtype).min
    pads, out_hw = pool_geometry(x, attrs)
    win = _windows(_pad_hw(x, pads, low), out_hw, attrs.pool_size, attrs.strides, attrs.dilation)
    out = win.max(axis=(4, 5))
    return _from_canonical(out, "NCHW", attrs.out_layout or attrs.layout).astype(data.dtype)


def tap_counts(size, before, after, overhang, out, k, s, d, include_pad):
    """Per output position: how many window taps land on counted positions (1-D)."""
    mask = np.zeros(before + size + after + overhang)
    mask[(0 if include_pad else before):before + size + (after if include_pad else 0)] = 1
    idx = np.arange(out)[:, None] * s + np.arange(k)[None, :] * d
    return mask[idx].sum(axis=1)


def _avg_pool2d_ref(data, attrs):
    dtype = data.dtype.name
    x = _to_canonical(data, attrs.layout, "NCHW").astype(_acc_dtype(dtype))
    pads, (oh, ow) = pool_geometry(x, attrs)
    win = _windows(_pad_hw(x, pads), (oh, ow), attrs.pool_size, attrs.strides, attrs.dilation)
    total = win.sum(axis=(4, 5))
    b, r = attrs.padding[2:]
    counts = [
        tap_counts(x.shape[2 + j], pads[j], user_after, pads[j + 2] - user_after, o,
                    attrs.pool_size[j], attrs.strides[j], attrs.dilation[j],
                    attrs.count_include_pad)
        for j, (user_after, o) in enumerate(((b, oh), (r, ow)))
    ]
    count = np.maximum(np.outer(*counts), 1)
    out = total / count if is_float(dtype) else total // count.astype("int64")
    return _from_canonical(out, "NCHW", attrs.out_layout or attrs.layout).astype(dtype)


register_op("nn.max_pool2d", rel=_pool_rel, ref=_max_pool2d_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=MaxPool2DAttrs)
register_op("nn.avg_pool2d", rel=_pool_rel, ref=_avg_pool2d_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=AvgPool2DAttrs)


@dataclasses.dataclass(frozen=True)
class GlobalPool2DAttrs(Attrs):
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        _layouts(self, "NCHW", "layout")


@dataclasses.dataclass(frozen=True)
class AdaptivePool2DAttrs(Attrs):
    """``output_size``: ``None``/``()`` keeps the input size; a ``None`` entry keeps that axis."""

    output_size: tuple | None = None
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        size = self.output_size
        if size is not None:
            size = tuple(size) if isinstance(size, (list, tuple)) else (size, size)
            if len(size) == 1:
                size = size * 2
            if len(size) not in (0, 2):
                raise ValueError(f"output_size needs 1 or 2 values, found {self.output_size!r}")
            size = tuple(None if v is None else _positive(v, "output_size") for v in size)
            set_fields(self, output_size=size or None)
        _layouts(self, "NCHW", "layout")


def _adaptive_hw(h, w, attrs):
    size = attrs.output_size or (None, None)
    return tuple(d if s is None else s for d, s in zip((h, w), size))


def _adaptive_pool_rel(types, attrs):
    data = tensor(types[0])
    _rank(data, "data", (4,), attrs.layout)
    dims = dict(zip(attrs.layout, data.shape))
    if isinstance(attrs, GlobalPool2DAttrs):
        dims.update(H=1, W=1)
    else:
        dims["H"], dims["W"] = _adaptive_hw(dims["H"], dims["W"], attrs)
    return TensorType(_layout_shape(dims, attrs.out_layout or attrs.layout), data.dtype)


def _global_pool_ref(reduce):
    def ref(data, attrs):
        x = data.astype(_acc_dtype(data.dtype.name)) if reduce is np.mean else data
        axes = (attrs.layout.index("H"), attrs.layout.index("W"))
        out = reduce(x, axis=axes, keepdims=True)
        if attrs.out_layout:
            out = _from_canonical(out, attrs.layout, attrs.out_layout)
        return out.astype(data.dtype)

    return ref


def _adaptive_avg_pool2d_ref(data, attrs):
    """PyTorch's bins ``[floor(i*H/oh), ceil((i+1)*H/oh))``, summed with an integral image."""
    dtype = data.dtype.name
    x = _to_canonical(data, attrs.layout, "NCHW").astype(_acc_dtype(dtype))
    h, w = x.shape[2:]
    oh, ow = _adaptive_hw(h, w, attrs)
    integral = np.zeros((*x.shape[:2], h + 1, w + 1), x.dtype)
    integral[:, :, 1:, 1:] = x.cumsum(axis=2).cumsum(axis=3)
    i, j = np.arange(oh), np.arange(ow)
    hs, he = (i * h) // oh, -((-(i + 1) * h) // oh)
    ws, we = (j * w) // ow, -((-(j + 1) * w) // ow)
    total = (integral[:, :, he[:, None], we] - integral[:, :, hs[:, None], we]
             - integral[:, :, he[:, None], ws] + integral[:, :, hs[:, None], ws])
    count = np.outer(he - hs, we - ws)
    out = total / count if is_float(dtype) else total // count
    return _from_canonical(out, "NCHW", attrs.out_layout or attrs.layout).astype(dtype)


register_op("nn.global_avg_pool2d", rel=_adaptive_pool_rel, ref=_global_pool_ref(np.mean),
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=GlobalPool2DAttrs)
register_op("nn.global_max_pool2d", rel=_adaptive_pool_rel, ref=_global_pool_ref(np.max),
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=GlobalPool2DAttrs)
register_op("nn.adaptive_avg_pool2d", rel=_adaptive_pool_rel, ref=_adaptive_avg_pool2d_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=AdaptivePool2DAttrs)


def max_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout="NCHW", out_layout="", ceil_mode=False):
    return call("nn.max_pool2d", [data], pool_size=pool_size, strides=strides,
                dilation=dilation, padding=padding, layout=layout, out_layout=out_layout,
                ceil_mode=ceil_mode)


def avg_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout="NCHW", out_layout="", ceil_mode=False, count_include_pad=False):
    return call("nn.avg_pool2d", [data], pool_size=pool_size, strides=strides,
                dilation=dilation, padding=padding, layout=layout, out_layout=out_layout,
                ceil_mode=ceil_mode, count_include_pad=count_include_pad)


def global_avg_pool2d(data, layout="NCHW", out_layout=""):
    return call("nn.global_avg_pool2d", [data], layout=layout, out_layout=out_layout)


def global_max_pool2d(data, layout="NCHW", out_layout=""):
    return call("nn.global_max_pool2d", [data], layout=layout, out_layout=out_layout)


def adaptive_avg_pool2d(data, output_size=None, layout="NCHW", out_layout=""):
    return call("nn.adaptive_avg_pool2d", [data], output_size=output_size, layout=layout,
                out_layout=out_layout)
