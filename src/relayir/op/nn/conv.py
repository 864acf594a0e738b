"""Convolutions: ``nn.conv1d``, ``nn.conv2d``, ``nn.conv3d`` (any layout permutation,
groups, dilation)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import set_fields
from ..type_rel import (
    dim_may_equal,
    fail,
    tensors,
)
from ._common import (
    _acc_dtype,
    _dtype_attr,
    _from_canonical,
    _implied_kernel_layout,
    _ints,
    _layout_shape,
    _layouts,
    _out_dtype,
    _pad_spatial,
    _padding,
    _positive,
    _static,
    _to_canonical,
    _window_out,
    _windows,
)

# ---------------------------------------------------------------- convolution


@dataclasses.dataclass(frozen=True)
class Conv2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCHW"
    kernel_layout: str = ""  # resolved from data_layout: NHWC → HWIO, otherwise OIHW
    out_layout: str = ""
    out_dtype: str = ""

    _spatial = "HW"

    def __post_init__(self):
        n = len(self._spatial)
        set_fields(self, strides=_ints(self.strides, n, "strides", 1),
                   padding=_padding(self.padding, n),
                   dilation=_ints(self.dilation, n, "dilation", 1),
                   groups=_positive(self.groups, "groups"))
        if self.channels is not None:
            set_fields(self, channels=_positive(self.channels, "channels"))
        if self.kernel_size is not None:
            set_fields(self, kernel_size=_ints(self.kernel_size, n, "kernel_size", 1))
        set_fields(self, out_dtype=_dtype_attr(self.out_dtype))
        _layouts(self, "NC" + self._spatial, "data_layout", "OI" + self._spatial)

    def non_default_items(self) -> list[tuple[str, object]]:
        """Leave out a kernel layout that the data layout implies, as the text omits it."""
        implied = _implied_kernel_layout(self.data_layout, self._spatial)
        return [(k, v) for k, v in super().non_default_items()
                if not (k == "kernel_layout" and v == implied)]


@dataclasses.dataclass(frozen=True)
class Conv1DAttrs(Conv2DAttrs):
    strides: tuple = (1,)
    padding: tuple = (0, 0)
    dilation: tuple = (1,)
    data_layout: str = "NCW"

    _spatial = "W"


@dataclasses.dataclass(frozen=True)
class Conv3DAttrs(Conv2DAttrs):
    strides: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    dilation: tuple = (1, 1, 1)
    data_layout: str = "NCDHW"

    _spatial = "DHW"


def _conv_rel(types, attrs):
    sp = attrs._spatial
    data, weight = tensors(types, ("data", "weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    dl, kl = attrs.data_layout, attrs.kernel_layout

    def bad(problem: str):
        fail(f"{problem}: data is {data} but weight is {weight}")

    if data.ndim != len(dl) or weight.ndim != len(kl):
        bad(f"data must have rank {len(dl)} ({dl}) and weight rank {len(kl)} ({kl})")
    dd = dict(zip(dl, data.shape))
    wd = dict(zip(kl, weight.shape))
    c, o, i, g = dd["C"], wd["O"], wd["I"], attrs.groups
    if _static(c, i) and c != i * g:
        bad(f"input channels mismatch: data has {c} channels but weight expects "
            f"{i} x groups {g} = {i * g}")
    if _static(c) and c % g:
        bad(f"data has {c} channels, which groups={g} does not divide")
    if _static(o) and o % g:
        bad(f"weight has {o} output channels, which groups={g} does not divide")
    if attrs.channels is not None and not dim_may_equal(o, attrs.channels):
        bad(f"channels={attrs.channels} but weight has {o} output channels")
    ks = [wd[s] for s in sp]
    if attrs.kernel_size is not None and not all(map(dim_may_equal, ks, attrs.kernel_size)):
        bad(f"kernel_size={attrs.kernel_size} but the weight's kernel is {tuple(ks)}")
    out = {"N": dd["N"], "C": o if _static(o) or attrs.channels is None else attrs.channels}
    n = len(sp)
    for j, s in enumerate(sp):
        d = _window_out(dd[s], ks[j], attrs.strides[j], attrs.dilation[j], attrs.padding[j],
                        attrs.padding[j + n])
        if isinstance(d, int) and d < 1:
            bad(f"the kernel (dilation {attrs.dilation}) is larger than the padded input "
                f"along {s}")
        out[s] = d
    return TensorType(_layout_shape(out, attrs.out_layout or dl), dtype)


def conv_nc(x, w, strides, pads, dilation, groups):
    """Grouped N-d conv (``NC...`` data, ``OI...`` weight) by im2col: one batched GEMM,
    no Python loop over pixels."""
    n, c, *size = x.shape
    o, cg, *ks = w.shape
    nd, g, og = len(size), groups, o // groups
    out = [(d + pads[j] + pads[j + nd] - (k - 1) * dilation[j] - 1) // strides[j] + 1
           for j, (d, k) in enumerate(zip(size, ks))]
    win = _windows(_pad_spatial(x, pads), out, ks, strides, dilation)
    sp_out, sp_k = range(3, 3 + nd), range(3 + nd, 3 + 2 * nd)
    cols = win.reshape(n, g, cg, *out, *ks).transpose(1, 0, *sp_out, 2, *sp_k)
    cols = cols.reshape(g, n * int(np.prod(out)), cg * int(np.prod(ks)))
    wm = w.reshape(g, og, -1).transpose(0, 2, 1)
    y = np.matmul(cols, wm)  # (g, n*prod(out), og)
    y = y.reshape(g, n, *out, og).transpose(1, 0, 2 + nd, *range(2, 2 + nd))
    return y.reshape(n, o, *out)


def _conv_ref(data, weight, attrs):
    sp = attrs._spatial
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    x = _to_canonical(data, attrs.data_layout, "NC" + sp).astype(acc)
    w = _to_canonical(weight, attrs.kernel_layout, "OI" + sp).astype(acc)
    out = conv_nc(x, w, attrs.strides, attrs.padding, attrs.dilation, attrs.groups)
    return _from_canonical(out, "NC" + sp, attrs.out_layout or attrs.data_layout).astype(dtype)


register_op("nn.conv2d", rel=_conv_rel, ref=_conv_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            num_inputs=2, arg_names=("data", "weight"), attrs=Conv2DAttrs)
register_op("nn.conv1d", rel=_conv_rel, ref=_conv_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            num_inputs=2, arg_names=("data", "weight"), attrs=Conv1DAttrs)
register_op("nn.conv3d", rel=_conv_rel, ref=_conv_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            num_inputs=2, arg_names=("data", "weight"), attrs=Conv3DAttrs)


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="",
           out_layout="", out_dtype=""):
    """2-D convolution. ``kernel_layout=""`` picks ``HWIO`` for NHWC data, else ``OIHW``."""
    return call("nn.conv2d", [data, weight], strides=strides, padding=padding,
                dilation=dilation, groups=groups, channels=channels, kernel_size=kernel_size,
                data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                out_dtype=out_dtype)


def conv1d(data, weight, strides=1, padding=0, dilation=1, groups=1, channels=None,
           kernel_size=None, data_layout="NCW", kernel_layout="", out_layout="", out_dtype=""):
    """1-D convolution. ``kernel_layout=""`` picks ``WIO`` for NWC data, else ``OIW``."""
    return call("nn.conv1d", [data, weight], strides=strides, padding=padding,
                dilation=dilation, groups=groups, channels=channels, kernel_size=kernel_size,
                data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                out_dtype=out_dtype)


def conv3d(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1,
           channels=None, kernel_size=None, data_layout="NCDHW", kernel_layout="",
           out_layout="", out_dtype=""):
    """3-D convolution. ``kernel_layout=""`` picks ``DHWIO`` for NDHWC data, else ``OIDHW``."""
    return call("nn.conv3d", [data, weight], strides=strides, padding=padding,
                dilation=dilation, groups=groups, channels=channels, kernel_size=kernel_size,
                data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                out_dtype=out_dtype)
