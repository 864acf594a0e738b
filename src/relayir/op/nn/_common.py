"""Helpers shared by the ``nn.*`` families: attribute normalisation, relation checks,
window geometry for the numpy references."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...ir.dim_expr import dim_add, dim_max, dim_mul, floordiv
from ...ir.types import Any, TensorType, is_float
from ..attrs_util import attr_dtype, set_fields
from ..type_rel import (
    check_axis,
    dim_may_equal,
    fail,
    same_dtype,
)

# ---------------------------------------------------------------- attribute helpers


def _ints(value, n: int, name: str, minimum: int = 0) -> tuple:
    """``2`` → ``(2, 2)``; a sequence must have ``n`` entries, each ``>= minimum``."""
    vals = tuple(value) if isinstance(value, (list, tuple, np.ndarray)) else (value,) * n
    if len(vals) != n:
        raise ValueError(f"{name} needs {n} values, found {value!r}")
    out = tuple(int(v) for v in vals)
    if any(v < minimum for v in out):
        raise ValueError(f"{name} values must be >= {minimum}, found {value!r}")
    return out


def _padding(value, n: int) -> tuple:
    """1, n or 2n ints → ``(before_0, ..., before_{n-1}, after_0, ..., after_{n-1})``."""
    vals = tuple(value) if isinstance(value, (list, tuple, np.ndarray)) else (value,)
    if len(vals) == 1:
        vals = vals * (2 * n)
    elif len(vals) == n:
        vals = vals * 2
    if len(vals) != 2 * n:
        raise ValueError(f"padding needs 1, {n} or {2 * n} values, found {value!r}")
    return _ints(vals, 2 * n, "padding")


def _dtype_attr(value) -> str:
    """An ``out_dtype``: ``""`` (the inputs' dtype) or a dtype name."""
    return "" if value in ("", None) else attr_dtype(value, "out_dtype")


def _layout(value: str, letters: str, name: str) -> str:
    if sorted(value) != sorted(letters):
        raise ValueError(f"{name} must be a permutation of {letters!r}, found {value!r}")
    return value


def _implied_kernel_layout(data_layout: str, spatial: str) -> str:
    """Relay's partner layouts: ``NHWC`` → ``HWIO``, anything else → ``OIHW``."""
    return spatial + "IO" if data_layout == "N" + spatial + "C" else "OI" + spatial


def _layouts(obj, letters: str, data_field: str, kernel: str | None = None) -> None:
    """Check the data layout, resolve ``kernel_layout=""`` and canonicalise ``out_layout``."""
    data = _layout(getattr(obj, data_field), letters, data_field)
    if kernel is not None:
        kl = obj.kernel_layout or _implied_kernel_layout(data, letters[2:])
        set_fields(obj, kernel_layout=_layout(kl, kernel, "kernel_layout"))
    if obj.out_layout:
        _layout(obj.out_layout, letters, "out_layout")
        if obj.out_layout == data:
            set_fields(obj, out_layout="")


def _positive(value, name: str) -> int:
    if int(value) < 1:
        raise ValueError(f"{name} must be >= 1, found {value!r}")
    return int(value)


# ---------------------------------------------------------------- relation helpers


def _acc_dtype(*dtypes: str) -> str:
    """float64 if any of ``dtypes`` is a float, else int64 (wraps like C on the cast back)."""
    return "float64" if any(is_float(d) for d in dtypes) else "int64"


def _static(*dims) -> bool:
    return all(isinstance(d, int) for d in dims)


def _scaled(dim, multiply: int = 1, divide: int = 1):
    """``dim * multiply // divide`` (a symbolic dim gives its expression)."""
    return floordiv(dim_mul(dim, multiply), divide)


def _out_dtype(attrs, a: TensorType, b: TensorType, names) -> str:
    """Inputs may differ in dtype only when ``out_dtype`` says what the result is."""
    if attrs.out_dtype:
        return attrs.out_dtype
    return same_dtype(a, b, names)


def _rank(t: TensorType, name: str, ranks, layout: str = "") -> None:
    if t.ndim not in ranks:
        want = " or ".join(str(r) for r in ranks)
        extra = f" ({layout})" if layout else ""
        fail(f"{name} must have rank {want}{extra}, found {t}")


def _param(data: TensorType, param: TensorType, name: str, axis: int) -> None:
    """A per-channel parameter: shape ``(data.shape[axis],)`` and the data's dtype."""
    c = data.shape[axis]
    if param.ndim != 1 or not dim_may_equal(param.shape[0], c):
        fail(f"{name} must have shape ({c},) to match axis {axis} of data: "
             f"data is {data} but {name} is {param}")
    same_dtype(data, param, ("data", name))


def _axis(axis: int, data: TensorType) -> int:
    return check_axis(axis, data.ndim, of=f"data {data}")


def _layout_shape(dims: dict, layout: str) -> tuple:
    return tuple(dims[ch] for ch in layout)


def _to_canonical(x: np.ndarray, layout: str, canonical: str) -> np.ndarray:
    return np.transpose(x, [layout.index(ch) for ch in canonical])


def _from_canonical(x: np.ndarray, canonical: str, layout: str) -> np.ndarray:
    return np.transpose(x, [canonical.index(ch) for ch in layout])


def _window_out(d, k, stride, dilation, before, after, ceil_mode=False):
    """Output extent of a sliding window: ``floordiv(d + pad - span, stride) + 1`` (at
    least 0) for a symbolic ``d``; ``Any()`` if ``k`` is not static or with ``ceil_mode``
    on a symbolic ``d``."""
    if not _static(k) or isinstance(d, Any) or (ceil_mode and not _static(d)):
        return Any()
    if not _static(d):
        num = dim_add(d, before + after - ((k - 1) * dilation + 1))
        return dim_max(dim_add(floordiv(num, stride), 1), 0)
    num = d + before + after - ((k - 1) * dilation + 1)
    if not ceil_mode:
        return num // stride + 1 if num >= 0 else 0
    out = -(-num // stride) + 1 if num >= 0 else 0
    if out > 0 and (out - 1) * stride >= d + before:  # PyTorch: no window starts in padding
        out -= 1
    return out


# ---------------------------------------------------------------- window helpers (refs)


def _windows(x: np.ndarray, out_sp, kernel, strides, dilation) -> np.ndarray:
    """A read-only ``(N, C, *out_sp, *kernel)`` view of ``x`` (``NC`` + spatial axes,
    already padded): one window per output position, any number of spatial axes."""
    sn, sc, *ss = x.strides
    shape = (x.shape[0], x.shape[1], *out_sp, *kernel)
    st = (sn, sc, *(s * k for s, k in zip(ss, strides)), *(s * d for s, d in zip(ss, dilation)))
    return as_strided(x, shape, st, writeable=False)


def _pad_spatial(x: np.ndarray, pads, value=0) -> np.ndarray:
    """Pad the spatial axes of an ``NC...`` array by ``(before..., after...)``."""
    n = len(pads) // 2
    widths = [(0, 0), (0, 0), *zip(pads[:n], pads[n:])]
    return np.pad(x, widths, constant_values=value)


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """Reshape a 1-D per-channel array to broadcast along ``axis`` of a rank-``ndim`` array."""
    return v.reshape([-1 if i == axis else 1 for i in range(ndim)])
