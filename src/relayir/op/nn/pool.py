"""Pooling: max/avg windows over 1, 2 or 3 spatial axes, global and adaptive pools."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType, is_float
from ..attrs_util import set_fields
from ..layout import parse_layout, transform_array
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
    _pad_spatial,
    _padding,
    _positive,
    _rank,
    _window_out,
    _windows,
)

# ---------------------------------------------------------------- pooling


def _pool_layouts(obj, letters: str) -> None:
    """``layout`` permutes ``letters`` (``NCHW``, ``NHWC``, ...) or is the blocked
    ``NCHW[x]c`` (channels in blocks of x innermost, as ``AlterOpLayout`` leaves a
    convolution network), which the result keeps."""
    if re.fullmatch(letters + r"[1-9]\d*c", obj.layout or "") is None:
        _layouts(obj, letters, "layout")
    elif obj.out_layout not in ("", obj.layout):
        raise ValueError(f"a pool in the blocked layout {obj.layout} keeps it, found "
                         f"out_layout={obj.out_layout!r}")
    else:
        set_fields(obj, out_layout="")


def _letters(layout: str) -> str:
    """One letter per axis (``NCHW16c`` → ``NCHWc``)."""
    return parse_layout(layout).letters



@dataclasses.dataclass(frozen=True)
class MaxPool2DAttrs(Attrs):
    pool_size: tuple = (1, 1)
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False

    _spatial = "HW"

    def __post_init__(self):
        n = len(self._spatial)
        set_fields(self, pool_size=_ints(self.pool_size, n, "pool_size", 1),
                   strides=_ints(self.strides, n, "strides", 1),
                   dilation=_ints(self.dilation, n, "dilation", 1),
                   padding=_padding(self.padding, n), ceil_mode=bool(self.ceil_mode))
        if hasattr(self, "count_include_pad"):
            set_fields(self, count_include_pad=bool(self.count_include_pad))
        _pool_layouts(self, "NC" + self._spatial)


@dataclasses.dataclass(frozen=True)
class AvgPool2DAttrs(MaxPool2DAttrs):
    count_include_pad: bool = False


@dataclasses.dataclass(frozen=True)
class MaxPool1DAttrs(MaxPool2DAttrs):
    pool_size: tuple = (1,)
    strides: tuple = (1,)
    dilation: tuple = (1,)
    padding: tuple = (0, 0)
    layout: str = "NCW"

    _spatial = "W"


@dataclasses.dataclass(frozen=True)
class AvgPool1DAttrs(MaxPool1DAttrs):
    count_include_pad: bool = False


@dataclasses.dataclass(frozen=True)
class MaxPool3DAttrs(MaxPool2DAttrs):
    pool_size: tuple = (1, 1, 1)
    strides: tuple = (1, 1, 1)
    dilation: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    layout: str = "NCDHW"

    _spatial = "DHW"


@dataclasses.dataclass(frozen=True)
class AvgPool3DAttrs(MaxPool3DAttrs):
    count_include_pad: bool = False


def pool_out_shape(sizes, attrs) -> tuple:
    """Output extent per spatial axis (``Any()`` where the input's is not static)."""
    p, n = attrs.padding, len(sizes)
    return tuple(
        _window_out(d, attrs.pool_size[j], attrs.strides[j], attrs.dilation[j], p[j],
                    p[j + n], attrs.ceil_mode)
        for j, d in enumerate(sizes)
    )


def _pool_rel(types, attrs):
    data = tensor(types[0])
    letters = _letters(attrs.layout)
    _rank(data, "data", (len(letters),), attrs.layout)
    dims = dict(zip(letters, data.shape))
    out = pool_out_shape([dims[a] for a in attrs._spatial], attrs)
    if any(isinstance(d, int) and d < 1 for d in out):
        fail(f"pool_size {attrs.pool_size} (dilation {attrs.dilation}) is larger than the "
             f"padded input: data is {data}")
    dims.update(zip(attrs._spatial, out))
    return TensorType(_layout_shape(dims, _letters(attrs.out_layout or attrs.layout)),
                      data.dtype)


def pool_geometry(x, attrs):
    """Padding (``NC...`` input ``x``) with the ceil-mode overhang added after, and the
    output size per spatial axis."""
    size = x.shape[2:]
    n = len(size)
    out = pool_out_shape(size, attrs)
    before, after = list(attrs.padding[:n]), list(attrs.padding[n:])
    for j, (o, s, k, d) in enumerate(zip(out, attrs.strides, attrs.pool_size, attrs.dilation)):
        after[j] = max(after[j], (o - 1) * s + (k - 1) * d + 1 - size[j] - before[j])
    return (*before, *after), out


def _canonical(data, attrs):
    return transform_array(data, attrs.layout, "NC" + attrs._spatial)


def _back(out, attrs):
    return transform_array(out, "NC" + attrs._spatial, attrs.out_layout or attrs.layout)


def _max_pool_ref(data, attrs):
    x = _canonical(data, attrs)
    low = -np.inf if is_float(x.dtype.name) else np.iinfo(x.dtype).min
    pads, out_sp = pool_geometry(x, attrs)
    win = _windows(_pad_spatial(x, pads, low), out_sp, attrs.pool_size, attrs.strides,
                   attrs.dilation)
    out = win.max(axis=tuple(range(2 + len(out_sp), win.ndim)))
    return _back(out, attrs).astype(data.dtype)


def tap_counts(size, before, after, overhang, out, k, s, d, include_pad):
    """Per output position: how many window taps land on counted positions (1-D)."""
    mask = np.zeros(before + size + after + overhang)
    mask[(0 if include_pad else before):before + size + (after if include_pad else 0)] = 1
    idx = np.arange(out)[:, None] * s + np.arange(k)[None, :] * d
    return mask[idx].sum(axis=1)


def avg_pool_counts(size, attrs) -> np.ndarray:
    """The divisor of every output position of an average pool over spatial ``size``."""
    n = len(size)
    pads, out_sp = pool_geometry(np.empty((1, 1, *size)), attrs)
    per_axis = [
        tap_counts(size[j], pads[j], attrs.padding[j + n], pads[j + n] - attrs.padding[j + n],
                   out_sp[j], attrs.pool_size[j], attrs.strides[j], attrs.dilation[j],
                   attrs.count_include_pad)
        for j in range(n)
    ]
    return np.maximum(functools.reduce(np.multiply.outer, per_axis), 1)


def _avg_pool_ref(data, attrs):
    dtype = data.dtype.name
    x = _canonical(data, attrs).astype(_acc_dtype(dtype))
    pads, out_sp = pool_geometry(x, attrs)
    win = _windows(_pad_spatial(x, pads), out_sp, attrs.pool_size, attrs.strides,
                   attrs.dilation)
    total = win.sum(axis=tuple(range(2 + len(out_sp), win.ndim)))
    count = avg_pool_counts(x.shape[2:], attrs)
    out = total / count if is_float(dtype) else total // count.astype("int64")
    return _back(out, attrs).astype(dtype)


for _n, _max_attrs, _avg_attrs in ((1, MaxPool1DAttrs, AvgPool1DAttrs),
                                   (2, MaxPool2DAttrs, AvgPool2DAttrs),
                                   (3, MaxPool3DAttrs, AvgPool3DAttrs)):
    register_op(f"nn.max_pool{_n}d", rel=_pool_rel, ref=_max_pool_ref,
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=_max_attrs)
    register_op(f"nn.avg_pool{_n}d", rel=_pool_rel, ref=_avg_pool_ref,
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=1, attrs=_avg_attrs)


@dataclasses.dataclass(frozen=True)
class GlobalPool2DAttrs(Attrs):
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        _pool_layouts(self, "NCHW")


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
        _pool_layouts(self, "NCHW")


def _adaptive_hw(h, w, attrs):
    size = attrs.output_size or (None, None)
    return tuple(d if s is None else s for d, s in zip((h, w), size))


def _adaptive_pool_rel(types, attrs):
    data = tensor(types[0])
    letters = _letters(attrs.layout)
    _rank(data, "data", (len(letters),), attrs.layout)
    dims = dict(zip(letters, data.shape))
    if isinstance(attrs, GlobalPool2DAttrs):
        dims.update(H=1, W=1)
    else:
        dims["H"], dims["W"] = _adaptive_hw(dims["H"], dims["W"], attrs)
    return TensorType(_layout_shape(dims, _letters(attrs.out_layout or attrs.layout)),
                      data.dtype)


def _global_pool_ref(reduce):
    def ref(data, attrs):
        x = data.astype(_acc_dtype(data.dtype.name)) if reduce is np.mean else data
        axes = (_letters(attrs.layout).index("H"), _letters(attrs.layout).index("W"))
        out = reduce(x, axis=axes, keepdims=True)
        if attrs.out_layout:
            out = _from_canonical(out, attrs.layout, attrs.out_layout)
        return out.astype(data.dtype)

    return ref


def _adaptive_avg_pool2d_ref(data, attrs):
    """PyTorch's bins ``[floor(i*H/oh), ceil((i+1)*H/oh))``, each summed on its own (an
    integral image would let an Inf or NaN leak into every later bin, and cancel)."""
    dtype = data.dtype.name
    x = transform_array(data, attrs.layout, "NCHW").astype(_acc_dtype(dtype))
    h, w = x.shape[2:]
    oh, ow = _adaptive_hw(h, w, attrs)
    i, j = np.arange(oh), np.arange(ow)
    hs, he = (i * h) // oh, -((-(i + 1) * h) // oh)
    ws, we = (j * w) // ow, -((-(j + 1) * w) // ow)
    total = np.zeros((*x.shape[:2], oh, ow), x.dtype)
    for a, b in itertools.product(range(oh), range(ow)):
        total[:, :, a, b] = x[:, :, hs[a]:he[a], ws[b]:we[b]].sum(axis=(2, 3))
    count = np.outer(he - hs, we - ws)
    out = total / count if is_float(dtype) else total // count
    return transform_array(out, "NCHW", attrs.out_layout or attrs.layout).astype(dtype)


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


def max_pool1d(data, pool_size=1, strides=1, dilation=1, padding=0, layout="NCW",
               out_layout="", ceil_mode=False):
    return call("nn.max_pool1d", [data], pool_size=pool_size, strides=strides,
                dilation=dilation, padding=padding, layout=layout, out_layout=out_layout,
                ceil_mode=ceil_mode)


def avg_pool1d(data, pool_size=1, strides=1, dilation=1, padding=0, layout="NCW",
               out_layout="", ceil_mode=False, count_include_pad=False):
    return call("nn.avg_pool1d", [data], pool_size=pool_size, strides=strides,
                dilation=dilation, padding=padding, layout=layout, out_layout=out_layout,
                ceil_mode=ceil_mode, count_include_pad=count_include_pad)


def max_pool3d(data, pool_size=(1, 1, 1), strides=(1, 1, 1), dilation=(1, 1, 1),
               padding=(0, 0, 0), layout="NCDHW", out_layout="", ceil_mode=False):
    return call("nn.max_pool3d", [data], pool_size=pool_size, strides=strides,
                dilation=dilation, padding=padding, layout=layout, out_layout=out_layout,
                ceil_mode=ceil_mode)


def avg_pool3d(data, pool_size=(1, 1, 1), strides=(1, 1, 1), dilation=(1, 1, 1),
               padding=(0, 0, 0), layout="NCDHW", out_layout="", ceil_mode=False,
               count_include_pad=False):
    return call("nn.avg_pool3d", [data], pool_size=pool_size, strides=strides,
                dilation=dilation, padding=padding, layout=layout, out_layout=out_layout,
                ceil_mode=ceil_mode, count_include_pad=count_include_pad)


def global_avg_pool2d(data, layout="NCHW", out_layout=""):
    return call("nn.global_avg_pool2d", [data], layout=layout, out_layout=out_layout)


def global_max_pool2d(data, layout="NCHW", out_layout=""):
    return call("nn.global_max_pool2d", [data], layout=layout, out_layout=out_layout)


def adaptive_avg_pool2d(data, output_size=None, layout="NCHW", out_layout=""):
    return call("nn.adaptive_avg_pool2d", [data], output_size=output_size, layout=layout,
                out_layout=out_layout)
