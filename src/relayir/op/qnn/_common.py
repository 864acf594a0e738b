"""What the QNN ops share: scale / zero-point checks for the type relations, and the
integer arithmetic of the numpy references, written once so every op rounds alike.

The arithmetic is ONNX Runtime's (MLAS): a scale ratio is computed in float32, an int32
accumulator is converted to float32 and multiplied by it, the product is clamped to the
output range shifted by the zero point, rounded half to even (``nearbyintf``) and the
zero point added. ``CanonicalizeQNN`` emits the same steps as plain ops, so references,
lowered programs and ONNX Runtime agree bit for bit.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import Constant, Expr, const
from ...ir.types import Dim, TensorType, dtype_range
from ..type_rel import dim_may_equal, fail

QUANT_DTYPES = ("int8", "uint8")
ACC_DTYPES = ("int32",)


def check_quant(t: TensorType, what: str, dtypes=QUANT_DTYPES) -> None:
    if t.dtype not in dtypes:
        fail(f"{what} must be {' or '.join(dtypes)}, found {t}")


def check_param(t: TensorType, what: str, dtype: str, channels: Dim | None = None,
                axis_note: str = "") -> None:
    """A scale (float32) or zero point (int32): a scalar, or a vector of one value per
    channel (``channels``; None: the op takes only per-tensor values)."""
    if t.dtype != dtype:
        fail(f"{what} must be {dtype}, found {t}")
    if t.ndim == 0:
        return
    if t.ndim != 1:
        fail(f"{what} must be a scalar or a vector, found {t}")
    if t.shape[0] == 1:
        return
    if channels is None:
        fail(f"{what} must be a scalar (per-tensor), found {t}")
    if not dim_may_equal(t.shape[0], channels):
        fail(f"{what} has {t.shape[0]} values but {axis_note} has {channels} channels")


def check_scale_zp(scale: TensorType, zp: TensorType, prefix: str, channels: Dim | None = None,
                   axis_note: str = "") -> None:
    check_param(scale, f"{prefix}_scale", "float32", channels, axis_note)
    check_param(zp, f"{prefix}_zero_point", "int32", channels, axis_note)


def norm_axis(axis: int, ndim: int, what: str = "axis") -> int:
    a = axis + ndim if axis < 0 else axis
    if not 0 <= a < max(ndim, 1):
        fail(f"{what}={axis} is out of range for rank {ndim}")
    return a


# ---------------------------------------------------------------- reference arithmetic


def along(param: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """A scalar or per-channel vector laid out to broadcast along ``axis`` of a rank-``ndim``
    tensor."""
    p = np.asarray(param)
    if p.ndim == 0 or p.size == 1:
        return p.reshape(())
    shape = [1] * ndim
    shape[axis + ndim if axis < 0 else axis] = p.size
    return p.reshape(shape)


def ratio(num, den) -> np.ndarray:
    """``num / den`` in float32, as MLAS computes requantisation scales."""
    return (np.asarray(num, np.float32) / np.asarray(den, np.float32)).astype(np.float32)


def centered(x: np.ndarray, zp) -> np.ndarray:
    """``int64(x) - zp`` (exact for every 8-bit and int32 input)."""
    return x.astype(np.int64) - np.asarray(zp).astype(np.int64)


def saturate_round(v: np.ndarray, zp, out_dtype: str) -> np.ndarray:
    """``clamp(v, lo - zp, hi - zp)``, rounded half to even, ``+ zp``, in ``out_dtype``:
    MLAS's order (clamp in float, ``nearbyintf``, add the zero point)."""
    lo, hi = dtype_range(out_dtype)
    zpf = np.asarray(zp).astype(np.float32)
    v = np.clip(v.astype(np.float32), np.float32(lo) - zpf, np.float32(hi) - zpf)
    return (np.rint(v).astype(np.int64) + np.asarray(zp).astype(np.int64)).astype(out_dtype)


def requantize_values(acc: np.ndarray, scale: np.ndarray, out_zp, out_dtype: str) -> np.ndarray:
    """``round(float32(acc) * scale) + out_zp``, saturated: an int32 accumulator scaled by
    a float32 ratio (``scale`` already laid out to broadcast)."""
    return saturate_round(acc.astype(np.float32) * scale, out_zp, out_dtype)


def as_param(value, dtype: str) -> Expr:
    """A scale / zero point argument: an expression as is, a number or array as a
    constant of ``dtype`` (float32 scales, int32 zero points)."""
    if isinstance(value, Expr):
        return value
    return const(np.asarray(value, dtype=dtype))


def constant_value(expr) -> np.ndarray | None:
    return expr.data if isinstance(expr, Constant) else None
