"""Value transforms: ``cast``, ``clip``, ``where``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType, is_float
from ..attrs_util import attr_dtype, set_fields
from ..type_rel import (
    broadcast_dim,
    fail,
    show_type,
    tensor,
    tensors,
)

# ---------------------------------------------------------------- cast, clip, where


@dataclasses.dataclass(frozen=True)
class CastAttrs(Attrs):
    dtype: str = "float32"

    def __post_init__(self):
        set_fields(self, dtype=attr_dtype(self.dtype))


def _cast_rel(types, attrs):
    return TensorType(tensor(types[0]).shape, attrs.dtype)


def _float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Truncation toward zero; NaN gives 0 and out-of-range values saturate. numpy
    leaves these undefined (x86 gives INT_MIN, or wraps through a wider type, and its
    scalar and vector paths differ), so the rule is pinned here and in the C printer."""
    info = np.iinfo(dtype)
    signed = info.min < 0
    hi = float(2 ** (info.bits - 1 if signed else info.bits))  # powers of two: exact
    lo = -hi if signed else -1.0
    wide = x.astype("float64")
    over, under = wide >= hi, wide <= lo
    with np.errstate(invalid="ignore"):
        out = np.where(np.isnan(wide) | over | under, 0, wide).astype(dtype)
    out[over] = info.max
    out[under] = info.min
    return out


def cast_values(x, dtype) -> np.ndarray:
    """``x`` converted to ``dtype`` as every reference converts values (``cast``, a fill
    value, ...): floats to integers by ``_float_to_int``, the rest as numpy's astype."""
    x, dtype = np.asarray(x), np.dtype(dtype)
    if is_float(x.dtype.name) and dtype.kind in "iu":
        return _float_to_int(x, dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(dtype)


def _cast_ref(x, attrs):
    return cast_values(x, attrs.dtype)


register_op("cast", rel=_cast_rel, ref=_cast_ref, pattern=OpPattern.ELEMWISE, num_inputs=1,
            attrs=CastAttrs)


@dataclasses.dataclass(frozen=True)
class ClipAttrs(Attrs):
    a_min: float = float("-inf")
    a_max: float = float("inf")

    def __post_init__(self):
        for name in ("a_min", "a_max"):
            v = getattr(self, name)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
                raise TypeError(f"{name} must be a number, found {v!r}")
            object.__setattr__(self, name, float(v))


def _clip_rel(types, attrs):
    t = tensor(types[0])
    if t.dtype == "bool":
        fail(f"data must be a numeric tensor, found {show_type(t)}")
    return t


def _bound(value: float, dtype: np.dtype):
    """A clip bound cast to the data's dtype as TVM does (ints truncate, saturating)."""
    if is_float(dtype.name):
        return dtype.type(value)
    info = np.iinfo(dtype)
    return dtype.type(min(max(np.trunc(value), info.min), info.max))


def _clip_ref(x, attrs):
    # TVM's order, max(min(x, a_max), a_min): a_min wins when a_min > a_max.
    return np.maximum(np.minimum(x, _bound(attrs.a_max, x.dtype)), _bound(attrs.a_min, x.dtype))


register_op("clip", rel=_clip_rel, ref=_clip_ref, pattern=OpPattern.ELEMWISE, num_inputs=1,
            attrs=ClipAttrs)


def _where_rel(types, attrs):
    cond, x, y = tensors(types, ("condition", "x", "y"))
    if cond.dtype != "bool":
        fail(f"condition must be a bool tensor, found {show_type(cond)}")
    if x.dtype != y.dtype:
        fail(f"dtype mismatch: x is {show_type(x)} but y is {show_type(y)}")
    n = max(cond.ndim, x.ndim, y.ndim)
    padded = [(1,) * (n - t.ndim) + t.shape for t in (cond, x, y)]
    shape = []
    for k, dims in enumerate(zip(*padded)):
        d = dims[0]
        for other in dims[1:]:
            d = None if d is None else broadcast_dim(d, other)
        if d is None:
            fail(f"shapes do not broadcast: condition is {show_type(cond)}, x is "
                 f"{show_type(x)}, y is {show_type(y)} (dimension {k - n})")
        shape.append(d)
    return TensorType(tuple(shape), x.dtype)


register_op("where", rel=_where_rel, ref=lambda c, x, y, attrs=None: np.where(c, x, y),
            pattern=OpPattern.BROADCAST, num_inputs=3, arg_names=("condition", "x", "y"))


def cast(data, dtype):
    """Convert to ``dtype``."""
    return call("cast", [data], dtype=dtype)


def clip(a, a_min, a_max):
    """Clamp to ``[a_min, a_max]``."""
    return call("clip", [a], a_min=a_min, a_max=a_max)


def where(condition, x, y):
    """Pick from ``x`` where ``condition`` holds, else from ``y`` (all broadcast)."""
    return call("where", [condition, x, y])
