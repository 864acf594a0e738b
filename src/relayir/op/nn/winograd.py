"""Winograd convolution F(m×m, r×r) for stride-1 convolutions, in two ops:

- ``nn.contrib_conv2d_winograd_weight_transform(weight, tile_size)``: ``OIHW`` weights
  (``r×r`` kernels) → ``U = G g Gᵀ`` of shape ``(α, α, O, I)``, ``α = m + r - 1``. On a
  constant weight ``FoldConstant`` evaluates it when the model is built.
- ``nn.contrib_conv2d_winograd_NCHWc(data, U, W)``: data ``NCHW[x]c``, ``U`` in
  ``HWOI[x]i[y]o`` (``H``/``W`` index the α×α transformed tile; shape
  ``(α, α, O/y, I/x, x, y)``), result ``NCHW[y]c``. Per ``m×m`` output tile:
  ``V = Bᵀ d B`` on the ``α×α`` input tile, ``M[ξ,ν] = Σ_c U[ξ,ν] V[ξ,ν]`` (α² matrix
  products over the channels), ``Y = Aᵀ M A``. ``W`` is the same weight untransformed,
  packed ``OIHW[x]i[y]o`` as the direct convolution takes it: an output that comes out
  NaN or ±Inf is the direct sum over its window instead, so that non-finite values give
  the direct convolution's answer (the transforms mix a whole tile: one Inf pixel makes
  NaN of outputs that never read it, found by the fuzzer).

The matrices come from the Cook–Toom construction (``winograd_matrices``) with the
points ``0, ±1, ±2, ±1/2, ...`` and ∞; for F(4, 3) they are Lavin & Gray's. The
products save multiplications (F(4×4, 3×3): 36 per 16 outputs instead of 144) at the
price of rounding: the transforms mix values of different magnitudes. Measured with the
generated kernels against a float64 direct convolution (float32 values uniform in
[-1, 1], 16–512 input channels), the largest error of an output relative to the sum of
the absolute products of its window, ``|y - y64| / Σ|x·w|``, was 2e-7 for the direct
convolution, 1e-7 for F(2×2), 1.7e-6 for F(4×4) and 2.4e-6 for F(6×6); relative to the
largest output, 2.4e-6 (direct), 7e-7, 1.5e-5 and 1.2e-5. ``WINOGRAD_ERROR`` holds the
bounds the tests assert (``tests/op/test_nn_nchwc.py``), with a margin over those.
"""

from __future__ import annotations

import dataclasses
import functools
from fractions import Fraction

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import set_fields
from ..layout import transform_array
from ..type_rel import dim_may_equal, fail, tensor, tensors
from ._common import (
    _acc_dtype,
    _dtype_attr,
    _ints,
    _out_dtype,
    _pad_spatial,
    _padding,
    _positive,
    _static,
)
from .conv_nchwc import data_block

# Interpolation points, taken in order (∞ is always the last point).
_POINTS = (Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(-2), Fraction(1, 2),
           Fraction(-1, 2), Fraction(3), Fraction(-3))

# Bound on |error| / Σ|x·w| per tile size m (3×3 kernels, float32; measured values in
# the module docstring), asserted by tests/op/test_nn_nchwc.py.
WINOGRAD_ERROR = {2: 5e-7, 4: 5e-6, 6: 1e-5}


def _inverse(rows: list[list[Fraction]]) -> list[list[Fraction]]:
    """Exact inverse by Gauss–Jordan elimination."""
    n = len(rows)
    a = [list(r) + [Fraction(int(i == j)) for j in range(n)] for i, r in enumerate(rows)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if a[r][col] != 0)
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        a[col] = [v / p for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col]
                a[r] = [v - f * u for v, u in zip(a[r], a[col])]
    return [r[n:] for r in a]


@functools.cache
def winograd_matrices(m: int, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Aᵀ, G, Bᵀ)`` of F(m, r) as float64 arrays of shapes ``(m, α)``, ``(α, r)``,
    ``(α, α)``: ``y = Aᵀ[(G g) ⊙ (Bᵀ d)]`` is the correlation ``y[i] = Σ_k g[k] d[i + k]``.

    Cook–Toom: finite points ``p_j`` and ∞; ``Aᵀ[i, j] = p_jⁱ``,
    ``G[j, k] = p_jᵏ / Π_{l≠j}(p_j - p_l)``, and ``Bᵀ`` is the inverse of the matrix that
    ``Aᵀ`` and ``G`` multiply out to (row ``s`` of it collects the terms of degree ``s``).
    """
    alpha = m + r - 1
    if m < 1 or r < 1 or alpha - 1 > len(_POINTS):
        raise ValueError(f"no Winograd matrices for F({m}, {r})")
    pts = _POINTS[:alpha - 1]
    f = [np.prod([p - q for q in pts if q != p], dtype=object) for p in pts]
    at = [[p ** i for p in pts] + [Fraction(int(i == m - 1))] for i in range(m)]
    g = [[p ** k / fj for k in range(r)] for p, fj in zip(pts, f)]
    g.append([Fraction(int(k == r - 1)) for k in range(r)])
    v = [[p ** s / fj for p, fj in zip(pts, f)] + [Fraction(int(s == alpha - 1))]
         for s in range(alpha)]
    bt = _inverse(v)

    def arr(rows):
        out = np.array([[float(x) for x in row] for row in rows])
        out.flags.writeable = False  # shared by every caller (cached)
        return out

    return arr(at), arr(g), arr(bt)


# ---------------------------------------------------------------- weight transform


@dataclasses.dataclass(frozen=True)
class WinogradWeightTransformAttrs(Attrs):
    tile_size: int = 4

    def __post_init__(self):
        set_fields(self, tile_size=_positive(self.tile_size, "tile_size"))


def _weight_transform_rel(types, attrs):
    w = tensor(types[0], "weight")
    if w.ndim != 4:
        fail(f"weight must have rank 4 (OIHW), found {w}")
    o, i, kh, kw = w.shape
    if not (_static(kh, kw) and kh == kw):
        fail(f"the Winograd transform needs a static square kernel, found {w}")
    alpha = attrs.tile_size + kh - 1
    return TensorType((alpha, alpha, o, i), w.dtype)


def weight_transform(weight: np.ndarray, tile_size: int) -> np.ndarray:
    """``U[ξ, ν, o, i] = (G g[o, i] Gᵀ)[ξ, ν]`` in float64."""
    _, g, _ = winograd_matrices(tile_size, weight.shape[2])
    o, i, kh, kw = weight.shape
    # one product with kron(G, G) (α² × kh·kw) lands in the (ξ, ν, O, I) layout directly:
    # build time matters (resnet18 transforms 10 weights whenever it is built)
    u = np.kron(g, g) @ weight.astype("float64").reshape(o * i, kh * kw).T
    return u.reshape(g.shape[0], g.shape[0], o, i)


def _weight_transform_ref(weight, attrs):
    return weight_transform(weight, attrs.tile_size).astype(weight.dtype)


register_op("nn.contrib_conv2d_winograd_weight_transform", rel=_weight_transform_rel,
            ref=_weight_transform_ref, pattern=OpPattern.OPAQUE, num_inputs=1,
            arg_names=("weight",), attrs=WinogradWeightTransformAttrs,
            description="OIHW weights to the Winograd domain (alpha, alpha, O, I)")


# ---------------------------------------------------------------- the convolution


@dataclasses.dataclass(frozen=True)
class Conv2DWinogradNCHWcAttrs(Attrs):
    """Stride 1, dilation 1, no groups: the shapes Winograd's identity covers."""

    tile_size: int = 4
    padding: tuple = (0, 0, 0, 0)
    channels: int | None = None
    kernel_size: tuple = (3, 3)
    data_layout: str = "NCHW16c"
    kernel_layout: str = "HWOI16i16o"
    out_layout: str = "NCHW16c"
    out_dtype: str = ""

    def __post_init__(self):
        set_fields(self, tile_size=_positive(self.tile_size, "tile_size"),
                   padding=_padding(self.padding, 2),
                   kernel_size=_ints(self.kernel_size, 2, "kernel_size", 1),
                   out_dtype=_dtype_attr(self.out_dtype))
        if self.channels is not None:
            set_fields(self, channels=_positive(self.channels, "channels"))
        if self.kernel_size[0] != self.kernel_size[1]:
            raise ValueError(f"kernel_size must be square, found {self.kernel_size}")
        data_block(self.data_layout)
        data_block(self.out_layout, "out_layout")
        winograd_kernel_blocks(self.kernel_layout)


def winograd_kernel_blocks(layout: str) -> tuple[int, int]:
    """``(x, y)`` of an ``HWOI[x]i[y]o`` layout."""
    head, _, rest = layout.partition("HWOI") if isinstance(layout, str) else ("?", "", "")
    if head or not rest.endswith("o") or "i" not in rest:
        raise ValueError(f"kernel_layout must be HWOI[x]i[y]o such as 'HWOI16i16o', found "
                         f"{layout!r}")
    x, _, y = rest[:-1].partition("i")
    if not (x.isdigit() and y.isdigit()) or min(int(x), int(y)) < 1:
        raise ValueError(f"kernel_layout must be HWOI[x]i[y]o, found {layout!r}")
    return int(x), int(y)


def winograd_out_size(size: int, attrs, axis: int) -> int:
    p = attrs.padding
    return size + p[axis] + p[axis + 2] - attrs.kernel_size[axis] + 1


def _winograd_rel(types, attrs):
    data, weight, direct = tensors(types, ("data", "weight", "direct_weight"))
    dtype = _out_dtype(attrs, data, weight, ("data", "weight"))
    x, (ki, ko), y = (data_block(attrs.data_layout), winograd_kernel_blocks(attrs.kernel_layout),
                      data_block(attrs.out_layout))
    where = f"data is {data}, weight is {weight} and direct_weight is {direct}"
    if data.ndim != 5 or weight.ndim != 6:
        fail(f"data must have rank 5 ({attrs.data_layout}) and weight rank 6 "
             f"({attrs.kernel_layout}): {where}")
    if ki != x or ko != y:
        fail(f"kernel_layout {attrs.kernel_layout} must block its inputs like data_layout "
             f"{attrs.data_layout} and its outputs like out_layout {attrs.out_layout}: "
             f"{where}")
    alpha = attrs.tile_size + attrs.kernel_size[0] - 1
    n, cb, h, w, _ = data.shape
    want = (alpha, alpha, weight.shape[2], cb, x, y)
    if not all(map(dim_may_equal, weight.shape, want)) or not dim_may_equal(data.shape[4], x):
        fail(f"weight must have shape (alpha={alpha}, {alpha}, O/{y}, {cb}, {x}, {y}) for "
             f"tile_size {attrs.tile_size}: {where}")
    ob = weight.shape[2]
    r = attrs.kernel_size[0]
    if direct.ndim != 6 or not all(map(dim_may_equal, direct.shape, (ob, cb, r, r, x, y))):
        fail(f"direct_weight must have shape ({ob}, {cb}, {r}, {r}, {x}, {y}) "
             f"(OIHW{x}i{y}o): {where}")
    if direct.dtype != weight.dtype:
        fail(f"direct_weight must have the weight's dtype: {where}")
    o = ob * y if _static(ob) else ob
    if attrs.channels is not None and not dim_may_equal(o, attrs.channels):
        fail(f"channels={attrs.channels} but weight has {o} output channels: {where}")
    out = []
    for axis, d in enumerate((h, w)):
        d = winograd_out_size(d, attrs, axis) if _static(d) else d
        if _static(d) and d < 1:
            fail(f"the {attrs.kernel_size} kernel is larger than the padded input: {where}")
        out.append(d)
    return TensorType((n, ob, out[0], out[1], y), dtype)


def winograd_conv_nchw(x: np.ndarray, u: np.ndarray, m: int, r: int, pads) -> np.ndarray:
    """The Winograd algorithm on ``NCHW`` data and ``U`` of shape ``(α, α, O, I)``, in the
    dtype of the inputs (the reference uses float64)."""
    at, _, bt = winograd_matrices(m, r)
    alpha = m + r - 1
    n, c, h, w = x.shape
    oh, ow = h + pads[0] + pads[2] - r + 1, w + pads[1] + pads[3] - r + 1
    th, tw = -(-oh // m), -(-ow // m)
    extra = (th * m + r - 1 - (h + pads[0]), tw * m + r - 1 - (w + pads[1]))
    xp = _pad_spatial(x, (pads[0], pads[1], extra[0], extra[1]))
    idx_h = (np.arange(th)[:, None] * m + np.arange(alpha)[None, :])  # (th, alpha)
    idx_w = (np.arange(tw)[:, None] * m + np.arange(alpha)[None, :])
    tiles = xp[:, :, idx_h[:, :, None, None], idx_w[None, None, :, :]]  # n c th a tw b
    v = np.einsum("ea,ncpaqb,fb->efncpq", bt, tiles, bt)
    mm = np.einsum("efoc,efncpq->efnopq", u, v)
    y = np.einsum("ie,efnopq,jf->nopiqj", at, mm, at).reshape(n, u.shape[2], th * m, tw * m)
    return y[:, :, :oh, :ow]


def direct_conv_nchw(x: np.ndarray, w: np.ndarray, pads) -> np.ndarray:
    """The stride-1 correlation of ``NCHW`` data with ``OIHW`` weights, summed in the
    inputs' dtype: what the Winograd kernels give where the transforms are not finite."""
    _, _, kh, kw = w.shape
    xp = _pad_spatial(x, pads)
    oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out


def _winograd_ref(data, weight, direct_weight, attrs):
    dtype = attrs.out_dtype or data.dtype.name
    acc = _acc_dtype(dtype, data.dtype.name)
    x = transform_array(data, attrs.data_layout, "NCHW").astype(acc)
    u = transform_array(weight, attrs.kernel_layout, "HWOI").astype(acc)
    with np.errstate(all="ignore"):
        out = winograd_conv_nchw(x, u, attrs.tile_size, attrs.kernel_size[0], attrs.padding)
        bad = ~np.isfinite(out)
        if bad.any():
            x_, y_ = winograd_kernel_blocks(attrs.kernel_layout)
            w = transform_array(direct_weight, f"OIHW{x_}i{y_}o", "OIHW").astype(acc)
            out[bad] = direct_conv_nchw(x, w, attrs.padding)[bad]
    return transform_array(np.ascontiguousarray(out), "NCHW", attrs.out_layout).astype(dtype)


register_op("nn.contrib_conv2d_winograd_NCHWc", rel=_winograd_rel, ref=_winograd_ref,
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=3,
            arg_names=("data", "weight", "direct_weight"), attrs=Conv2DWinogradNCHWcAttrs,
            description="stride-1 2-D convolution by Winograd F(m, r), data NCHW[x]c, "
                        "transformed weight HWOI[x]i[y]o")


def contrib_conv2d_winograd_weight_transform(weight, tile_size: int = 4):
    """``OIHW`` weights → the Winograd domain ``(α, α, O, I)`` for F(tile_size, kernel)."""
    return call("nn.contrib_conv2d_winograd_weight_transform", [weight], tile_size=tile_size)


def contrib_conv2d_winograd_NCHWc(  # noqa: N802  (named as the op)
        data, weight, direct_weight, tile_size=4, padding=(0, 0), channels=None,
        kernel_size=(3, 3), data_layout="NCHW16c", kernel_layout="HWOI16i16o",
        out_layout="NCHW16c", out_dtype=""):
    """``nn.contrib_conv2d_winograd_NCHWc``: a stride-1 convolution by Winograd F(m, r)
    with the weight already transformed (``contrib_conv2d_winograd_weight_transform``)
    and, for outputs the transforms leave non-finite, packed ``OIHW[x]i[y]o``."""
    return call("nn.contrib_conv2d_winograd_NCHWc", [data, weight, direct_weight],
                tile_size=tile_size,
                padding=padding, channels=channels, kernel_size=kernel_size,
                data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                out_dtype=out_dtype)
