"""How ``CanonicalizeQNN`` lowers an 8-bit ``qnn.dense`` / ``qnn.conv2d`` with a constant
weight and constant zero points: one ``qnn.contrib_dense_packed`` (uint8 x int8 → int32,
the ``vpdpbusd`` routine) on the raw 8-bit values, the weight packed here at build time,
and the zero points folded into a constant per-column correction:

``sum_k (x - zx)(w - zw) = x.w - zx * colsum(w) - zw * rowsum(x) + K * zx * zw``

int8 data becomes uint8 by adding 128 (its zero point too); uint8 weights become int8 by
subtracting 128 (their zero point too). A convolution (NCHW, one group) is an im2col in
NHWC — the input padded with its zero point, so the padded taps contribute nothing — and
the same product. Anything else keeps the generic int32 lowering.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, Expr, Tuple, const
from ..ir.op import call
from ..op.qnn.packed import pack_weight
from .fold_constant import fold_constant


def constant(e: Expr) -> np.ndarray | None:
    """``e``'s value if it is a constant or folds to one (a transposed constant)."""
    if isinstance(e, Constant):
        return e.data
    try:
        folded = fold_constant(e)
    except Exception:  # noqa: BLE001  (not foldable: the generic lowering takes it)
        return None
    return folded.data if isinstance(folded, Constant) else None


def _as_u8(x: Expr, zx: int) -> tuple[Expr, int]:
    if x.checked_type.dtype == "uint8":
        return x, zx
    shifted = call("add", [call("cast", [x], dtype="int16"), const(np.int16(128))])
    return call("cast", [shifted], dtype="uint8"), zx + 128


def _as_s8(w: np.ndarray, zw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if w.dtype == np.int8:
        return w, zw.astype(np.int64)
    return (w.astype(np.int16) - 128).astype(np.int8), zw.astype(np.int64) - 128


def _scalar_zp(zp: Expr) -> int | None:
    v = constant(zp)
    return int(v.reshape(-1)[0]) if v is not None and v.size == 1 else None


def _product(xu: Expr, w: np.ndarray, zx: int, zw: np.ndarray) -> Expr:
    """``(xu - zx) . (w - zw)^T`` over the last axis: ``xu`` uint8 (..., K), ``w`` int8
    (N, K), ``zw`` per column or scalar."""
    n, k = w.shape
    zw = np.broadcast_to(zw.reshape(-1), (n,)) if zw.size in (1, n) else zw
    colsum = w.astype(np.int64).sum(axis=1)
    corr = (-zx * colsum + k * zx * zw).astype(np.int32)
    acc = call("qnn.contrib_dense_packed", [xu, const(pack_weight(w))], units=n)
    if zw.any():
        rows = call("sum", [call("cast", [xu], dtype="int32")], axis=[-1], keepdims=True)
        acc = call("subtract", [acc, call("multiply", [rows, const(zw.astype(np.int32))])])
    return call("add", [acc, const(corr)]) if corr.any() else acc


def lower_dense(node) -> Expr | None:
    data, kernel, izp, kzp, _, _ = node.args
    w, zx, zw = constant(kernel), _scalar_zp(izp), constant(kzp)
    if w is None or zx is None or zw is None or not isinstance(data.checked_type.shape[-1], int):
        return None
    xu, zx = _as_u8(data, zx)
    w, zw = _as_s8(w, zw)
    return _product(xu, w, zx, zw)


def lower_conv2d(node) -> Expr | None:
    data, kernel, izp, kzp, _, _ = node.args
    a = node.attrs
    if (a.data_layout, a.kernel_layout, a.out_layout, a.groups) != ("NCHW", "OIHW", "", 1):
        return None
    shape = data.checked_type.shape
    w, zx, zw = constant(kernel), _scalar_zp(izp), constant(kzp)
    if w is None or zx is None or zw is None or not all(isinstance(d, int) for d in shape):
        return None
    w, zw = _as_s8(w, zw)
    if zw.any():
        return None  # a weight zero point would need window sums of the input
    xu, zx = _as_u8(data, zx)
    n, c, h, wd = shape
    o, _, kh, kw = w.shape
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = a.strides, a.dilation, a.padding
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + pl + pr - (kw - 1) * dw - 1) // sw + 1
    x = call("transpose", [xu], axes=(0, 2, 3, 1))
    if pt or pl or pb or pr:
        x = call("nn.pad", [x, const(np.uint8(zx))],
                 pad_width=((0, 0), (pt, pb), (pl, pr), (0, 0)))
    taps = []
    for i in range(kh):
        for j in range(kw):
            if (kh, kw, sh, sw, oh, ow) == (1, 1, 1, 1, h, wd) and not (pt or pl):
                taps.append(x)
                continue
            begin = (0, i * dh, j * dw, 0)
            end = (n, i * dh + (oh - 1) * sh + 1, j * dw + (ow - 1) * sw + 1, c)
            taps.append(call("strided_slice", [x], begin=begin, end=end,
                             strides=(1, sh, sw, 1)))
    cols = taps[0] if len(taps) == 1 else call("concatenate", [Tuple(taps)], axis=3)
    cols = call("reshape", [cols], newshape=(n * oh * ow, kh * kw * c))
    acc = _product(cols, w.transpose(0, 2, 3, 1).reshape(o, kh * kw * c), zx, zw)
    acc = call("reshape", [acc], newshape=(n, oh, ow, o))
    return call("transpose", [acc], axes=(0, 3, 1, 2))
