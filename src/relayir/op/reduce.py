"""Reductions: sum, mean, max, min, prod, all, any, argmax, argmin, variance, std,
logsumexp.

Axis semantics follow Relay: ``axis=None`` or ``()`` reduces every axis (``exclude``
is then ignored); ``exclude=True`` reduces the axes *not* listed. Results keep the
input dtype, integer ``mean`` included (it truncates, as TVM's integer divide does);
``argmax``/``argmin`` give int32; ``all``/``any`` take and give bool. float16 ``mean``,
``variance`` and ``std`` accumulate in float32, as TVM does.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..ir.op import Attrs, OpPattern, call, register_op
from ..ir.types import TensorType, is_float
from .attrs_util import attr_ints, set_fields
from .type_rel import check_axes, fail, show_type, tensor


@dataclasses.dataclass(frozen=True)
class ReduceAttrs(Attrs):
    axis: tuple | None = None
    keepdims: bool = False
    exclude: bool = False

    def __post_init__(self):
        set_fields(self, axis=None if self.axis is None else attr_ints(self.axis, "axis"),
                   keepdims=bool(self.keepdims), exclude=bool(self.exclude))


@dataclasses.dataclass(frozen=True)
class ArgReduceAttrs(ReduceAttrs):
    select_last_index: bool = False

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, select_last_index=bool(self.select_last_index))


@dataclasses.dataclass(frozen=True)
class VarianceAttrs(ReduceAttrs):
    unbiased: bool = False

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, unbiased=bool(self.unbiased))


def reduce_axes(ndim: int, attrs) -> tuple[int, ...]:
    """The axes an op with ``ReduceAttrs`` reduces, sorted (``fail``s on a bad axis)."""
    if not attrs.axis:
        return tuple(range(ndim))
    axes = check_axes(attrs.axis, ndim)
    if attrs.exclude:
        return tuple(i for i in range(ndim) if i not in axes)
    return tuple(sorted(axes))


def _reduce_shape(shape: tuple, axes, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _make_rel(dtype_rule):
    """A reduce relation; ``dtype_rule(t)`` checks the input and names the output dtype."""

    def rel(types, attrs):
        t = tensor(types[0])
        out_dtype = dtype_rule(t)
        axes = reduce_axes(t.ndim, attrs)
        return TensorType(_reduce_shape(t.shape, axes, attrs.keepdims), out_dtype)

    return rel


def _same_dtype(t):
    return t.dtype


def _numeric(t):
    if t.dtype == "bool":
        fail(f"data must be a numeric tensor, found {show_type(t)}")
    return t.dtype


def _float_only(t):
    if not is_float(t.dtype):
        fail(f"data must have a float dtype, found {show_type(t)}")
    return t.dtype


def _bool_only(t):
    if t.dtype != "bool":
        fail(f"data must be a bool tensor, found {show_type(t)}")
    return "bool"


def _int32_index(t):
    return "int32"


# ---------------------------------------------------------------- references


def _axes_of(x, attrs):
    return reduce_axes(x.ndim, attrs)


def _ref_sum(x, attrs):
    return np.sum(x, axis=_axes_of(x, attrs), dtype=x.dtype, keepdims=attrs.keepdims)


def _ref_prod(x, attrs):
    return np.prod(x, axis=_axes_of(x, attrs), dtype=x.dtype, keepdims=attrs.keepdims)


def _extreme_ref(fn, pick):
    def ref(x, attrs):
        # ``initial`` only matters for an empty reduction, which then gives the identity.
        if is_float(x.dtype.name):
            initial = pick(-np.inf, np.inf)
        elif x.dtype == np.bool_:
            initial = pick(False, True)
        else:
            info = np.iinfo(x.dtype)
            initial = pick(info.min, info.max)
        return fn(x, axis=_axes_of(x, attrs), keepdims=attrs.keepdims,
                  initial=x.dtype.type(initial))

    return ref


def _count(x, axes) -> int:
    return int(np.prod([x.shape[a] for a in axes], dtype=np.int64))


def _ref_mean(x, attrs):
    axes = _axes_of(x, attrs)
    n = _count(x, axes)
    if is_float(x.dtype.name):
        acc = np.float32 if x.dtype == np.float16 else x.dtype.type
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.sum(x, axis=axes, dtype=acc, keepdims=attrs.keepdims) / acc(n)
        return np.asarray(out).astype(x.dtype)
    total = np.asarray(np.sum(x, axis=axes, dtype=x.dtype, keepdims=attrs.keepdims))
    if n == 0:
        return np.zeros_like(total)
    if np.issubdtype(x.dtype, np.unsignedinteger):
        return (total // n).astype(x.dtype)
    t = total.astype(np.int64)
    return (np.sign(t) * (np.abs(t) // n)).astype(x.dtype)  # truncate toward zero, like C


def _ref_variance(x, attrs):
    axes = _axes_of(x, attrs)
    acc = np.float32 if x.dtype == np.float16 else x.dtype.type
    xa = x.astype(acc)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.mean(xa, axis=axes, keepdims=True)
        n = _count(x, axes) - (1 if attrs.unbiased else 0)
        var = np.sum((xa - mean) ** 2, axis=axes, keepdims=attrs.keepdims) / acc(n)
    return np.asarray(var).astype(x.dtype)


def _ref_std(x, attrs):
    return np.sqrt(_ref_variance(x, attrs))


def _ref_logsumexp(x, attrs):
    axes = _axes_of(x, attrs)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = np.max(x, axis=axes, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
        out = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    if not attrs.keepdims:
        out = np.squeeze(out, axis=axes)
    return np.asarray(out).astype(x.dtype)


def _arg_ref(fn):
    def ref(x, attrs):
        axes = _axes_of(x, attrs)
        kept = [i for i in range(x.ndim) if i not in axes]
        # Move the reduced axes last and flatten them: the index is row-major over them.
        flat = np.transpose(x, kept + list(axes))
        flat = flat.reshape(flat.shape[:len(kept)] + (-1,))
        if attrs.select_last_index:
            idx = flat.shape[-1] - 1 - fn(flat[..., ::-1], axis=-1)
        else:
            idx = fn(flat, axis=-1)
        out_shape = _reduce_shape(x.shape, axes, attrs.keepdims)
        return np.reshape(idx, out_shape).astype("int32")

    return ref


_REDUCERS = {
    # name: (dtype rule, reference, attrs class)
    "sum": (_numeric, _ref_sum, ReduceAttrs),
    "prod": (_numeric, _ref_prod, ReduceAttrs),
    "mean": (_numeric, _ref_mean, ReduceAttrs),
    "max": (_same_dtype, _extreme_ref(np.max, lambda lo, hi: lo), ReduceAttrs),
    "min": (_same_dtype, _extreme_ref(np.min, lambda lo, hi: hi), ReduceAttrs),
    "all": (_bool_only, lambda x, attrs: np.all(x, axis=_axes_of(x, attrs),
                                                keepdims=attrs.keepdims), ReduceAttrs),
    "any": (_bool_only, lambda x, attrs: np.any(x, axis=_axes_of(x, attrs),
                                                keepdims=attrs.keepdims), ReduceAttrs),
    "logsumexp": (_float_only, _ref_logsumexp, ReduceAttrs),
    "variance": (_float_only, _ref_variance, VarianceAttrs),
    "std": (_float_only, _ref_std, VarianceAttrs),
    "argmax": (_int32_index, _arg_ref(np.argmax), ArgReduceAttrs),
    "argmin": (_int32_index, _arg_ref(np.argmin), ArgReduceAttrs),
}

for _name, (_rule, _ref, _attrs) in _REDUCERS.items():
    register_op(_name, rel=_make_rel(_rule), ref=_ref, pattern=OpPattern.COMM_REDUCE,
                num_inputs=1, attrs=_attrs)


# ---------------------------------------------------------------- Relay-style constructors
# ``sum``, ``max``, ``min``, ``all`` and ``any`` shadow the builtins in this module, as
# Relay's do; nothing below the definitions uses the builtins.


def sum(data, axis=None, keepdims=False, exclude=False):
    """Sum over ``axis`` (all axes when None)."""
    return call("sum", [data], axis=axis, keepdims=keepdims, exclude=exclude)


def prod(data, axis=None, keepdims=False, exclude=False):
    """Product over ``axis``."""
    return call("prod", [data], axis=axis, keepdims=keepdims, exclude=exclude)


def mean(data, axis=None, keepdims=False, exclude=False):
    """Mean over ``axis``; integer data gives a truncated integer mean."""
    return call("mean", [data], axis=axis, keepdims=keepdims, exclude=exclude)


def max(data, axis=None, keepdims=False, exclude=False):
    """Maximum over ``axis``."""
    return call("max", [data], axis=axis, keepdims=keepdims, exclude=exclude)


def min(data, axis=None, keepdims=False, exclude=False):
    """Minimum over ``axis``."""
    return call("min", [data], axis=axis, keepdims=keepdims, exclude=exclude)


def all(data, axis=None, keepdims=False, exclude=False):
    """Logical AND over ``axis`` of a bool tensor."""
    return call("all", [data], axis=axis, keepdims=keepdims, exclude=exclude)


def any(data, axis=None, keepdims=False, exclude=False):
    """Logical OR over ``axis`` of a bool tensor."""
    return call("any", [data], axis=axis, keepdims=keepdims, exclude=exclude)


def argmax(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
    """int32 index of the maximum (row-major over the reduced axes)."""
    return call("argmax", [data], axis=axis, keepdims=keepdims, exclude=exclude,
                select_last_index=select_last_index)


def argmin(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
    """int32 index of the minimum (row-major over the reduced axes)."""
    return call("argmin", [data], axis=axis, keepdims=keepdims, exclude=exclude,
                select_last_index=select_last_index)


def variance(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """Variance over ``axis``; ``unbiased`` divides by n - 1."""
    return call("variance", [data], axis=axis, keepdims=keepdims, exclude=exclude,
                unbiased=unbiased)


def std(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """Standard deviation over ``axis``; ``unbiased`` divides by n - 1."""
    return call("std", [data], axis=axis, keepdims=keepdims, exclude=exclude,
                unbiased=unbiased)


def logsumexp(data, axis=None, keepdims=False, exclude=False):
    """``log(sum(exp(data)))`` over ``axis``, computed stably."""
    return call("logsumexp", [data], axis=axis, keepdims=keepdims, exclude=exclude)


__all__ = ["all", "any", "argmax", "argmin", "logsumexp", "max", "mean", "min", "prod",
           "std", "sum", "variance"]
