"""Indexing: ``strided_slice``, ``take``, ``unravel_index``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import OpError
from ...ir.dim_expr import dim_add, dim_max, dim_min, dim_sub, floordiv
from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import Any, TensorType, is_int
from ..attrs_util import attr_int, attr_ints, set_fields
from ..type_rel import (
    check_axes,
    check_axis,
    dim_unify,
    fail,
    runtime_checked,
    show_type,
    tensor,
    tensors,
)

# ---------------------------------------------------------------- strided_slice


@dataclasses.dataclass(frozen=True)
class StridedSliceAttrs(Attrs):
    """numpy slicing per axis. ``axes=None``: begin/end apply to the leading axes.
    ``slice_mode="size"``: ``end`` holds sizes (-1: to the end) and strides are 1."""

    begin: tuple = ()
    end: tuple = ()
    strides: tuple | None = None
    axes: tuple | None = None
    slice_mode: str = "end"

    def __post_init__(self):
        begin, end = attr_ints(self.begin, "begin"), attr_ints(self.end, "end")
        strides = None if self.strides is None else attr_ints(self.strides, "strides")
        axes = None if self.axes is None else attr_ints(self.axes, "axes")
        if len(begin) != len(end):
            raise ValueError(f"begin {begin} and end {end} must have the same length")
        if strides is not None and (len(strides) > max(len(begin), 1) or 0 in strides):
            raise ValueError(f"strides {strides} must be nonzero, at most one per begin value")
        if axes is not None and len(axes) != len(begin):
            raise ValueError(f"axes {axes} must have one entry per begin value {begin}")
        if self.slice_mode not in ("end", "size"):
            raise ValueError(f"slice_mode must be 'end' or 'size', found {self.slice_mode!r}")
        set_fields(self, begin=begin, end=end, strides=strides, axes=axes)


def slice_plan(shape: tuple, attrs) -> list[tuple[int, int, int, int]]:
    """``(axis, begin, end, stride)`` per sliced axis, with begin/end raw."""
    ndim = len(shape)
    n = len(attrs.begin)
    if attrs.axes is None:
        if n > ndim:
            fail(f"begin {attrs.begin} has {n} entries but the data has rank {ndim}")
        axes = list(range(n))
    else:
        axes = check_axes(attrs.axes, ndim, "axes")
    strides = list(attrs.strides or ())
    strides += [1] * (n - len(strides))
    if attrs.slice_mode == "size":
        strides = [1] * n
    return list(zip(axes, attrs.begin, attrs.end, strides))


def slice_range(dim: int, begin: int, end: int, stride: int, mode: str) -> range:
    if mode == "size":
        start = min(max(begin + dim if begin < 0 else begin, 0), dim)
        return range(start, dim if end < 0 else min(start + end, dim))
    return range(*slice(begin, end, stride).indices(dim))


# an end this large means "to the end" (TVM's and torch's sentinels): a dim is smaller
_TO_END = 2**31 - 1


def symbolic_slice_len(d, begin: int, end: int, stride: int, mode: str):
    """The length of ``range(*slice(begin, end, stride).indices(d))`` for a symbolic
    ``d``, exactly (``x[1:]`` of ``n`` items has ``max(n - 1, 0)``), or ``Any`` for a
    negative stride."""
    if isinstance(d, Any) or stride < 0:
        return Any()
    if mode == "size":
        if begin < 0:
            return Any()
        rest = dim_max(dim_sub(d, begin), 0)
        return rest if end < 0 else dim_min(rest, end)
    end = d if end >= _TO_END else end
    if begin >= 0 and (end is d or end < 0):  # start min(b, d), stop d or max(d + e, 0)
        span = dim_max(dim_sub(dim_add(d, 0 if end is d else end), begin), 0)
    elif begin >= 0:  # stop min(e, d)
        span = 0 if end <= begin else dim_min(dim_max(dim_sub(d, begin), 0), end - begin)
    elif end is d:  # start max(d + b, 0), stop d
        span = dim_min(-begin, d)
    elif end < 0:
        span = 0 if end <= begin else dim_min(dim_max(dim_add(d, end), 0), end - begin)
    else:  # start max(d + b, 0), stop min(e, d): rare, left unknown
        return Any()
    return span if stride == 1 else floordiv(dim_add(span, stride - 1), stride)


def _strided_slice_rel(types, attrs):
    t = tensor(types[0])
    shape = list(t.shape)
    for axis, b, e, s in slice_plan(t.shape, attrs):
        d = shape[axis]
        shape[axis] = len(slice_range(d, b, e, s, attrs.slice_mode)) if isinstance(d, int) \
            else symbolic_slice_len(d, b, e, s, attrs.slice_mode)
    return TensorType(tuple(shape), t.dtype)


def _strided_slice_ref(x, attrs):
    index = [slice(None)] * x.ndim
    for axis, b, e, s in slice_plan(x.shape, attrs):
        r = slice_range(x.shape[axis], b, e, s, attrs.slice_mode)
        # an empty range may start at -1 (x[-4:-4:-2] of 3 items), which a slice would
        # read as the last item
        index[axis] = slice(r.start, r.stop if r.stop >= 0 else None, r.step) if len(r) \
            else slice(0, 0)
    return x[tuple(index)]


register_op("strided_slice", rel=_strided_slice_rel, ref=runtime_checked(_strided_slice_ref),
            pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=StridedSliceAttrs)


# ---------------------------------------------------------------- take


@dataclasses.dataclass(frozen=True)
class TakeAttrs(Attrs):
    """``mode``: "clip" clamps indices to [0, n-1] (negatives too, as in TVM), "wrap" takes
    them modulo n, "fast" assumes they are in range (the reference raises otherwise)."""

    axis: int | None = None  # None: index the flattened data
    batch_dims: int = 0
    mode: str = "clip"

    def __post_init__(self):
        if self.mode not in ("clip", "wrap", "fast"):
            raise ValueError(f"mode must be 'clip', 'wrap' or 'fast', found {self.mode!r}")
        set_fields(self, axis=None if self.axis is None else attr_int(self.axis, "axis"),
                   batch_dims=attr_int(self.batch_dims, "batch_dims"))


def _take_layout(dshape: tuple, ishape: tuple, attrs) -> tuple[int | None, int]:
    """(axis, batch_dims), both normalised."""
    if attrs.axis is None:
        if attrs.batch_dims:
            fail(f"batch_dims {attrs.batch_dims} needs an axis")
        return None, 0
    axis = check_axis(attrs.axis, len(dshape))
    bd = attrs.batch_dims + len(ishape) if attrs.batch_dims < 0 else attrs.batch_dims
    if not 0 <= bd <= min(axis, len(ishape)):
        fail(f"batch_dims {attrs.batch_dims} must lie in [0, min(axis={axis}, "
             f"indices rank={len(ishape)})]")
    return axis, bd


def _take_rel(types, attrs):
    data, indices = tensors(types, ("data", "indices"))
    if not is_int(indices.dtype):
        fail(f"indices must have an integer dtype, found {show_type(indices)}")
    axis, bd = _take_layout(data.shape, indices.shape, attrs)
    if axis is None:
        return TensorType(indices.shape, data.dtype)
    for k in range(bd):
        if dim_unify(data.shape[k], indices.shape[k]) is None:
            fail(f"batch dimension {k} differs: data is {show_type(data)} but indices is "
                 f"{show_type(indices)}")
    shape = data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:]
    return TensorType(shape, data.dtype)


def _fix_indices(idx, n: int, mode: str):
    idx = idx.astype("int64")
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if mode == "wrap":
        return np.mod(idx, n)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"take mode 'fast': an index is outside [0, {n})")
    return idx


def _take_ref(data, indices, attrs):
    axis, bd = _take_layout(data.shape, indices.shape, attrs)
    if axis is None:
        return np.take(data.reshape(-1), _fix_indices(indices, data.size, attrs.mode))
    idx = _fix_indices(indices, data.shape[axis], attrs.mode)
    if bd == 0:
        return np.take(data, idx, axis=axis)
    out_shape = data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:]
    batch = int(np.prod(data.shape[:bd]))
    d = data.reshape((batch,) + data.shape[bd:])
    i = idx.reshape((batch,) + indices.shape[bd:])
    parts = [np.take(d[b], i[b], axis=axis - bd) for b in range(batch)]
    return np.reshape(np.stack(parts) if parts else np.zeros(out_shape, data.dtype), out_shape)


register_op("take", rel=_take_rel, ref=runtime_checked(_take_ref), pattern=OpPattern.INJECTIVE,
            num_inputs=2, arg_names=("data", "indices"), attrs=TakeAttrs)


def strided_slice(data, begin, end, strides=None, axes=None, slice_mode="end"):
    """numpy-style slicing with per-axis begin/end/stride."""
    return call("strided_slice", [data], begin=begin, end=end, strides=strides, axes=axes,
                slice_mode=slice_mode)


def take(data, indices, axis=None, batch_dims=0, mode="clip"):
    """Gather along ``axis`` (or from the flattened data when ``axis`` is None)."""
    return call("take", [data, indices], axis=axis, batch_dims=batch_dims, mode=mode)


# ---------------------------------------------------------------- unravel_index


def _unravel_index_rel(types, attrs):
    indices, shape = tensors(types, ("indices", "shape"))
    if not is_int(indices.dtype) or indices.ndim > 1:
        fail(f"indices must be a 0-D or 1-D integer tensor, found {show_type(indices)}")
    if shape.ndim != 1 or shape.dtype != indices.dtype:
        fail(f"shape must be a 1-D tensor of the dtype of indices {show_type(indices)}, "
             f"found {show_type(shape)}")
    return TensorType((shape.shape[0], *indices.shape), indices.dtype)


def _unravel_index_ref(indices, shape, attrs=None):
    """Each position's coordinates, each taken modulo its extent: a position past the
    tensor's size wraps around, as TVM's kernel gives it (numpy refuses it)."""
    if np.any(shape < 1) or np.any(indices < 0):
        raise OpError(f"unravel_index: shape {shape.tolist()} must hold extents >= 1 and "
                      f"indices must be >= 0, found {np.asarray(indices).tolist()}")
    out, rest = [], np.asarray(indices).astype("int64")
    for d in shape[::-1].astype("int64"):
        rest, k = np.divmod(rest, d)
        out.append(k)
    return np.stack(out[::-1]).astype(indices.dtype)


register_op("unravel_index", rel=_unravel_index_rel, ref=_unravel_index_ref,
            pattern=OpPattern.INJECTIVE, num_inputs=2, arg_names=("indices", "shape"),
            description="coordinates of flat positions in a tensor of a run-time shape")


def unravel_index(indices, shape):
    """The coordinates (one row per axis of ``shape``) of the flat ``indices``."""
    return call("unravel_index", [indices, shape])
