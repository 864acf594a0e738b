"""Transposed convolutions: ``nn.conv1d_transpose``, ``nn.conv2d_transpose``,
``nn.conv3d_transpose``.

The weight is ``IO`` + spatial by default (PyTorch's and ONNX's ``(C_in, C_out / groups,
k...)``, Relay's ``IOHW``). Along each spatial axis the output extent is
``(d - 1) * stride - before - after + dilation * (k - 1) + output_padding + 1``: input
position ``i`` and tap ``r`` write output position ``i * stride + r * dilation - before``.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import Any, TensorType
from ..attrs_util import set_fields
from ..type_rel import dim_may_equal, fail, tensors
from ._common import (
    _acc_dtype,
    _dtype_attr,
    _from_canonical,
    _ints,
    _layout,
    _layout_shape,
    _out_dtype,
    _padding,
    _positive,
    _static,
    _to_canonical,
)


@dataclasses.dataclass(frozen=True)
class Conv2DTransposeAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    output_padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int | None = None
    kernel_size: tuple | None = None
    data_layout: str = "NCHW"
    kernel_layout: str = "IOHW"
    out_layout: str = ""
    out_dtype: str = ""

    _spatial = "HW"

    def __post_init__(self):
        n, sp = len(self._spatial), self._spatial
        set_fields(self, strides=_ints(self.strides, n, "strides", 1),
                   padding=_padding(self.padding, n),
                   output_padding=_ints(self.output_padding, n, "output_padding"),
                   dilation=_ints(self.dilation, n, "dilation", 1),
                   groups=_positive(self.groups, "groups"),
                   out_dtype=_dtype_attr(self.out_dtype))
        for j, p in enumerate(self.output_padding):
            if p >= max(self.strides[j], self.dilation[j]):
                raise ValueError(f"output_padding {self.output_padding} must be smaller than "
                                 f"the stride {self.strides} or the dilation {self.dilation}")
        if self.channels is not None:
            set_fields(self, channels=_positive(self.channels, "channels"))
        if self.kernel_size is not None:
            set_fields(self, kernel_size=_ints(self.kernel_size, n, "kernel_size", 1))
        _layout(self.data_layout, "NC" + sp, "data_layout")
        _layout(self.kernel_layout, "IO" + sp, "kernel_layout")
        if self.out_layout:
            _layout(self.out_layout, "NC" + sp, "out_layout")
            if self.out_layout == self.data_layout:
                set_fields(self, out_layout="")


@dataclasses.dataclass(frozen=True)
class Conv1DTransposeAttrs(Conv2DTransposeAttrs):
    strides: tuple = (1,)
    padding: tuple = (0, 0)
    output_padding: tuple = (0,)
    dilation: tuple = (1,)
    data_layout: str = "NCW"
    kernel_layout: str = "IOW"

    _spatial = "W"


@dataclasses.dataclass(frozen=True)
class Conv3DTransposeAttrs(Conv2DTransposeAttrs):
    strides: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    output_padding: tuple = (0, 0, 0)
    dilation: tuple = (1, 1, 1)
    data_layout: str = "NCDHW"
    kernel_layout: str = "IODHW"

    _spatial = "DHW"


def transposed_extent(d, k, stride, dilation, before, after, output_padding):
    """Output extent of a transposed window along one axis (``Any()`` if not static)."""
    if not _static(d, k):
        return Any()
    return (d - 1) * stride - before - after + dilation * (k - 1) + output_padding + 1


def _conv_transpose_rel(types, attrs):
    sp, n = attrs._spatial, len(attrs._spatial)
    data, weight = tensors(types, ("data", "weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    dl, kl = attrs.data_layout, attrs.kernel_layout

    def bad(problem: str):
        fail(f"{problem}: data is {data} but weight is {weight}")

    if data.ndim != len(dl) or weight.ndim != len(kl):
        bad(f"data must have rank {len(dl)} ({dl}) and weight rank {len(kl)} ({kl})")
    dd, wd = dict(zip(dl, data.shape)), dict(zip(kl, weight.shape))
    c, i, og, g = dd["C"], wd["I"], wd["O"], attrs.groups
    if not dim_may_equal(c, i):
        bad(f"input channels mismatch: data has {c} channels but weight expects {i}")
    if _static(c) and c % g:
        bad(f"data has {c} channels, which groups={g} does not divide")
    o = og * g if _static(og) else attrs.channels
    if attrs.channels is not None and _static(og) and og * g != attrs.channels:
        bad(f"channels={attrs.channels} but weight gives {og} x groups {g} output channels")
    ks = [wd[s] for s in sp]
    if attrs.kernel_size is not None and not all(map(dim_may_equal, ks, attrs.kernel_size)):
        bad(f"kernel_size={attrs.kernel_size} but the weight's kernel is {tuple(ks)}")
    out = {"N": dd["N"], "C": o}
    for j, s in enumerate(sp):
        e = transposed_extent(dd[s], ks[j], attrs.strides[j], attrs.dilation[j],
                              attrs.padding[j], attrs.padding[j + n], attrs.output_padding[j])
        if isinstance(e, int) and e < 0:  # 0: an empty output, as the reference gives
            bad(f"the padding {attrs.padding} crops the whole output along {s}")
        out[s] = e
    if o is None:
        out["C"] = Any()
    return TensorType(_layout_shape(out, attrs.out_layout or dl), dtype)


def conv_transpose_nc(x, w, strides, pads, output_padding, dilation, groups):
    """Grouped N-d transposed conv (``NC...`` data, ``IO...`` weight): one GEMM per
    kernel tap, scattered into the uncropped output, then cropped by the padding."""
    n, c, *size = x.shape
    _, og, *ks = w.shape
    nd, g, cg = len(size), groups, c // groups
    full = [(d - 1) * s + dl * (k - 1) + 1 + p
            for d, k, s, dl, p in zip(size, ks, strides, dilation, output_padding)]
    out = np.zeros((n, g, og, *full), np.result_type(x, w))
    xg = x.reshape(n, g, cg, *size)
    wg = w.reshape(g, cg, og, *ks)
    for tap in itertools.product(*(range(k) for k in ks)):
        part = np.einsum("ngc...,gco->ngo...", xg, wg[(..., *tap)])
        dst = tuple(slice(r * dl, r * dl + (d - 1) * s + 1, s)
                    for r, dl, d, s in zip(tap, dilation, size, strides))
        out[(slice(None),) * 3 + dst] += part
    crop = tuple(slice(pads[j], full[j] - pads[j + nd]) for j in range(nd))
    return out.reshape(n, g * og, *full)[(slice(None),) * 2 + crop]


def _conv_transpose_ref(data, weight, attrs):
    # the relation on the concrete shapes: with Any dims the interpreter reaches here
    # unchecked, and a padding that crops an axis below 0 must fail as the VM fails
    _conv_transpose_rel([TensorType(data.shape, data.dtype.name),
                         TensorType(weight.shape, weight.dtype.name)], attrs)
    sp = attrs._spatial
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    x = _to_canonical(data, attrs.data_layout, "NC" + sp).astype(acc)
    w = _to_canonical(weight, attrs.kernel_layout, "IO" + sp).astype(acc)
    out = conv_transpose_nc(x, w, attrs.strides, attrs.padding, attrs.output_padding,
                            attrs.dilation, attrs.groups)
    return _from_canonical(out, "NC" + sp, attrs.out_layout or attrs.data_layout).astype(dtype)


for _name, _attrs in (("nn.conv1d_transpose", Conv1DTransposeAttrs),
                      ("nn.conv2d_transpose", Conv2DTransposeAttrs),
                      ("nn.conv3d_transpose", Conv3DTransposeAttrs)):
    register_op(_name, rel=_conv_transpose_rel, ref=_conv_transpose_ref,
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=2,
                arg_names=("data", "weight"), attrs=_attrs)


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                     channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="IOHW",
                     out_layout="", output_padding=(0, 0), out_dtype=""):
    """Relay's ``nn.conv2d_transpose`` (the gradient of ``conv2d`` with respect to data)."""
    return call("nn.conv2d_transpose", [data, weight], strides=strides, padding=padding,
                output_padding=output_padding, dilation=dilation, groups=groups,
                channels=channels, kernel_size=kernel_size, data_layout=data_layout,
                kernel_layout=kernel_layout, out_layout=out_layout, out_dtype=out_dtype)


def conv1d_transpose(data, weight, strides=1, padding=0, dilation=1, groups=1, channels=None,
                     kernel_size=None, data_layout="NCW", kernel_layout="IOW", out_layout="",
                     output_padding=0, out_dtype=""):
    """Relay's ``nn.conv1d_transpose``."""
    return call("nn.conv1d_transpose", [data, weight], strides=strides, padding=padding,
                output_padding=output_padding, dilation=dilation, groups=groups,
                channels=channels, kernel_size=kernel_size, data_layout=data_layout,
                kernel_layout=kernel_layout, out_layout=out_layout, out_dtype=out_dtype)


def conv3d_transpose(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1),
                     groups=1, channels=None, kernel_size=None, data_layout="NCDHW",
                     kernel_layout="IODHW", out_layout="", output_padding=(0, 0, 0),
                     out_dtype=""):
    """Relay's ``nn.conv3d_transpose``."""
    return call("nn.conv3d_transpose", [data, weight], strides=strides, padding=padding,
                output_padding=output_padding, dilation=dilation, groups=groups,
                channels=channels, kernel_size=kernel_size, data_layout=data_layout,
                kernel_layout=kernel_layout, out_layout=out_layout, out_dtype=out_dtype)
