"""How ``CanonicalizeQNN`` lowers an 8-bit ``qnn.dense`` / ``qnn.conv2d`` with a constant
weight and weight zero point (the data's may be computed at run time in a dense layer, as
DynamicQuantizeLinear's; a convolution pads with it, so there it is a constant): one
``qnn.contrib_dense_packed`` (uint8 x int8 → int32, the ``vpdpbusd`` routine) on the raw
8-bit values, the weight packed here at build time, and the zero points folded into a
per-column correction:

``sum_k (x - zx)(w - zw) = x.w - zx * colsum(w) - zw * rowsum(x) + K * zx * zw``

int8 data becomes uint8 by adding 128 (its zero point too); uint8 weights become int8 by
subtracting 128 (their zero point too). A convolution (NCHW, one group) is
``qnn.contrib_conv2d_packed``, the same product over each output pixel's taps, the input
padded with its zero point so that padded taps contribute nothing; a depthwise one (a
group per channel) is ``qnn.contrib_depthwise_conv2d``, padded alike. Anything else keeps
the generic int32 lowering.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, Expr, const
from ..ir.op import call
from ..op.qnn.packed import conv_kernel_columns, pack_weight
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


def _as_u8(x: Expr, zx):
    """uint8 data and its zero point (an int, or an int32 expression)."""
    if x.checked_type.dtype == "uint8":
        return x, zx
    shifted = call("add", [call("cast", [x], dtype="int16"), const(np.int16(128))])
    zx = zx + 128 if isinstance(zx, int) else call("add", [zx, const(128)])
    return call("cast", [shifted], dtype="uint8"), zx


def _as_s8(w: np.ndarray, zw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if w.dtype == np.int8:
        return w, zw.astype(np.int64)
    return (w.astype(np.int16) - 128).astype(np.int8), zw.astype(np.int64) - 128


def _scalar_zp(zp: Expr) -> int | None:
    v = constant(zp)
    return int(v.reshape(-1)[0]) if v is not None and v.size == 1 else None


def _product(xu: Expr, w: np.ndarray, zx, zw: np.ndarray) -> Expr:
    """``(xu - zx) . (w - zw)^T`` over the last axis: ``xu`` uint8 (..., K), ``w`` int8
    (N, K), ``zw`` per column or scalar, ``zx`` an int or a scalar int32 expression (a
    zero point computed at run time, as DynamicQuantizeLinear's)."""
    n, k = w.shape
    zw = np.broadcast_to(zw.reshape(-1), (n,)).astype(np.int64)
    colsum = w.astype(np.int64).sum(axis=1)
    acc = call("qnn.contrib_dense_packed", [xu, const(pack_weight(w))], units=n)
    if zw.any():
        rows = call("sum", [call("cast", [xu], dtype="int32")], axis=[-1], keepdims=True)
        acc = call("subtract", [acc, call("multiply", [rows, const(zw.astype(np.int32))])])
    if isinstance(zx, int):
        corr = (-zx * colsum + k * zx * zw).astype(np.int32)
        return call("add", [acc, const(corr)]) if corr.any() else acc
    per_zx = const((k * zw - colsum).astype(np.int32))  # times zx
    return call("add", [acc, call("multiply", [zx, per_zx])])


def lower_dense(node) -> Expr | None:
    data, kernel, izp, kzp, _, _ = node.args
    w, zx, zw = constant(kernel), _scalar_zp(izp), constant(kzp)
    if w is None or zw is None or not isinstance(data.checked_type.shape[-1], int):
        return None
    if zx is None:  # a run-time zero point (a scalar: the relation checked it)
        zx = izp if izp.checked_type.ndim == 0 else call("reshape", [izp], newshape=())
    xu, zx = _as_u8(data, zx)
    w, zw = _as_s8(w, zw)
    return _product(xu, w, zx, zw)


def lower_conv2d(node) -> Expr | None:
    data, kernel, izp, kzp, _, _ = node.args
    a = node.attrs
    if (a.data_layout, a.kernel_layout, a.out_layout) != ("NCHW", "OIHW", ""):
        return None
    channels = data.checked_type.shape[1]
    depthwise = a.groups > 1 and a.groups == channels and kernel.checked_type.shape[0] == channels
    if a.groups != 1 and not depthwise:
        return None
    w, zx, zw = constant(kernel), _scalar_zp(izp), constant(kzp)
    if w is None or zx is None or zw is None or not all(
            isinstance(d, int) for d in data.checked_type.shape):
        return None
    w, zw = _as_s8(w, zw)
    if zw.any():
        return None  # a weight zero point would need window sums of the input
    xu, zx = _as_u8(data, zx)
    o, _, kh, kw = w.shape
    geometry = dict(channels=o, kernel_size=(kh, kw), strides=a.strides, padding=a.padding,
                    dilation=a.dilation, pad_value=zx)
    if depthwise:
        acc = call("qnn.contrib_depthwise_conv2d", [xu, const(w)], **geometry)
    else:
        acc = call("qnn.contrib_conv2d_packed",
                   [xu, const(pack_weight(conv_kernel_columns(w)))], **geometry)
    corr = (-zx * w.astype(np.int64).reshape(o, -1).sum(axis=1)).astype(np.int32)
    return call("add", [acc, const(corr.reshape(1, o, 1, 1))]) if corr.any() else acc
