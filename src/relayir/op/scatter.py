"""Index-driven reads and writes: gather, gather_nd, scatter_elements, scatter_nd.

``gather`` is ONNX's GatherElements / ``torch.gather`` (the output has the indices'
shape); ``gather_nd`` and ``scatter_nd`` take Relay's index layout, the index tuple
first: ``indices`` of shape ``(M, Y...)`` addresses the first ``M`` axes (after the
batch axes). Negative indices count from the end, as in ONNX; an index out of range
is a run-time error of the reference (the C kernels clamp instead of reading out of
bounds). Scatters with duplicate indices apply their updates in index order, so with
reduction "update" the last one wins.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import OpError
from ..ir.op import Attrs, OpPattern, call, register_op
from ..ir.types import TensorType, is_int
from .attrs_util import attr_int, set_fields
from .type_rel import check_axis, dim_may_equal, fail, show_type, tensors

REDUCTIONS = ("update", "add", "mul", "min", "max")
_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def wrap_indices(idx: np.ndarray, n: int, what: str) -> np.ndarray:
    """Negative indices counted from the end; anything outside [-n, n) is an error."""
    idx = idx.astype("int64")
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)].reshape(-1)[0]
        raise IndexError(f"{what}: index {bad} is out of range for an axis of size {n}")
    return np.where(idx < 0, idx + n, idx)


def _int_indices(t, what="indices"):
    if not is_int(t.dtype):
        fail(f"{what} must have an integer dtype, found {show_type(t)}")


def _no_larger(small, big, skip: int, names):
    """``small``'s dims must not exceed ``big``'s (except axis ``skip``)."""
    if small.ndim != big.ndim:
        fail(f"{names[0]} {show_type(small)} must have the rank of {names[1]} {show_type(big)}")
    for k, (a, b) in enumerate(zip(small.shape, big.shape)):
        if k != skip and isinstance(a, int) and isinstance(b, int) and a > b:
            fail(f"{names[0]} {show_type(small)} is larger than {names[1]} {show_type(big)} "
                 f"on axis {k}")


# ---------------------------------------------------------------- gather


@dataclasses.dataclass(frozen=True)
class GatherAttrs(Attrs):
    axis: int = 0

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"))


def _gather_rel(types, attrs):
    data, indices = tensors(types, ("data", "indices"))
    _int_indices(indices)
    axis = check_axis(attrs.axis, data.ndim, of=f"data {show_type(data)}")
    _no_larger(indices, data, axis, ("indices", "data"))
    return TensorType(indices.shape, data.dtype)


def _gather_ref(data, indices, attrs):
    axis = attrs.axis % data.ndim
    idx = wrap_indices(indices, data.shape[axis], "gather")
    view = data[tuple(slice(None) if k == axis else slice(0, d)
                      for k, d in enumerate(indices.shape))]
    return np.take_along_axis(view, idx, axis=axis)


register_op("gather", rel=_gather_rel, ref=_gather_ref, pattern=OpPattern.INJECTIVE,
            num_inputs=2, arg_names=("data", "indices"), attrs=GatherAttrs)


# ---------------------------------------------------------------- gather_nd


@dataclasses.dataclass(frozen=True)
class GatherNDAttrs(Attrs):
    """data (B..., X...), indices (M, B..., Y...) -> (B..., Y..., X[M:]...)."""

    batch_dims: int = 0

    def __post_init__(self):
        bd = attr_int(self.batch_dims, "batch_dims")
        if bd < 0:
            raise ValueError(f"batch_dims must be >= 0, found {bd}")
        set_fields(self, batch_dims=bd)


def nd_layout(data, indices, batch_dims: int, what: str = "indices") -> int:
    """``M`` (the length of an index tuple), after checking the shapes fit."""
    if indices.ndim < 1 + batch_dims:
        fail(f"{what} {show_type(indices)} needs rank >= {1 + batch_dims} "
             f"(the index tuple first, then {batch_dims} batch axes)")
    m = indices.shape[0]
    if not isinstance(m, int):
        fail(f"the first axis of {what} {show_type(indices)} (the index tuple) must be static")
    if m + batch_dims > data.ndim:
        fail(f"{what} {show_type(indices)} addresses {m} axes after {batch_dims} batch axes, "
             f"but data {show_type(data)} has rank {data.ndim}")
    for k in range(batch_dims):
        if not dim_may_equal(data.shape[k], indices.shape[1 + k]):
            fail(f"batch axis {k} differs: data {show_type(data)}, {what} {show_type(indices)}")
    return m


def _gather_nd_rel(types, attrs):
    data, indices = tensors(types, ("data", "indices"))
    _int_indices(indices)
    m = nd_layout(data, indices, attrs.batch_dims)
    shape = indices.shape[1:] + data.shape[attrs.batch_dims + m:]
    return TensorType(shape, data.dtype)


def nd_index(data_shape, indices: np.ndarray, batch_dims: int, what: str) -> tuple:
    """The numpy index tuple selecting ``data[b..., idx[0], ..., idx[M-1]]``."""
    m = indices.shape[0]
    bshape, rest = indices.shape[1:1 + batch_dims], indices.shape[1 + batch_dims:]
    parts = []
    for k, d in enumerate(bshape):
        shape = [1] * (batch_dims + len(rest))
        shape[k] = d
        parts.append(np.arange(d).reshape(shape))
    for j in range(m):
        parts.append(wrap_indices(indices[j], data_shape[batch_dims + j], what))
    return tuple(parts)


def _gather_nd_ref(data, indices, attrs):
    return data[nd_index(data.shape, indices, attrs.batch_dims, "gather_nd")]


register_op("gather_nd", rel=_gather_nd_rel, ref=_gather_nd_ref, pattern=OpPattern.INJECTIVE,
            num_inputs=2, arg_names=("data", "indices"), attrs=GatherNDAttrs)


# ---------------------------------------------------------------- scatter_elements


def _reduction(value, name="reduction") -> str:
    if value == "none":
        value = "update"
    if value not in REDUCTIONS:
        raise ValueError(f"{name} must be one of {', '.join(REDUCTIONS)}, found {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class ScatterElementsAttrs(Attrs):
    axis: int = 0
    reduction: str = "update"

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"),
                   reduction=_reduction(self.reduction))


def _scatter_elements_rel(types, attrs):
    data, indices, updates = tensors(types, ("data", "indices", "updates"))
    _int_indices(indices)
    axis = check_axis(attrs.axis, data.ndim, of=f"data {show_type(data)}")
    _no_larger(indices, data, axis, ("indices", "data"))
    if updates.dtype != data.dtype or updates.ndim != indices.ndim or not all(
            dim_may_equal(a, b) for a, b in zip(updates.shape, indices.shape)):
        fail(f"updates {show_type(updates)} must have the shape of indices "
             f"{show_type(indices)} and the dtype of data {show_type(data)}")
    return data


def _apply(out, index, updates, reduction):
    if reduction == "update":
        out[index] = updates
    else:
        _UFUNC[reduction].at(out, index, updates)
    return out


def _scatter_elements_ref(data, indices, updates, attrs):
    axis = attrs.axis % data.ndim
    idx = wrap_indices(indices, data.shape[axis], "scatter_elements")
    grid = list(np.indices(indices.shape, sparse=True))
    grid[axis] = idx
    return _apply(data.copy(), tuple(grid), updates, attrs.reduction)


register_op("scatter_elements", rel=_scatter_elements_rel, ref=_scatter_elements_ref,
            pattern=OpPattern.OPAQUE, num_inputs=3, arg_names=("data", "indices", "updates"),
            attrs=ScatterElementsAttrs)


# ---------------------------------------------------------------- scatter_nd


@dataclasses.dataclass(frozen=True)
class ScatterNDAttrs(Attrs):
    """data (X...), indices (M, Y...), updates (Y..., X[M:]...)."""

    mode: str = "update"

    def __post_init__(self):
        set_fields(self, mode=_reduction(self.mode, "mode"))


def _scatter_nd_rel(types, attrs):
    data, indices, updates = tensors(types, ("data", "indices", "updates"))
    _int_indices(indices)
    m = nd_layout(data, indices, 0)
    want = indices.shape[1:] + data.shape[m:]
    if updates.dtype != data.dtype or updates.ndim != len(want) or not all(
            dim_may_equal(a, b) for a, b in zip(updates.shape, want)):
        fail(f"updates {show_type(updates)} must be "
             f"Tensor[({', '.join(map(repr, want))}), {data.dtype}] "
             f"(indices {show_type(indices)}, data {show_type(data)})")
    return data


def _scatter_nd_ref(data, indices, updates, attrs):
    index = nd_index(data.shape, indices, 0, "scatter_nd")
    return _apply(data.copy(), index, updates, attrs.mode)


register_op("scatter_nd", rel=_scatter_nd_rel, ref=_scatter_nd_ref, pattern=OpPattern.OPAQUE,
            num_inputs=3, arg_names=("data", "indices", "updates"), attrs=ScatterNDAttrs)


# ---------------------------------------------------------------- segment_sum


@dataclasses.dataclass(frozen=True)
class SegmentSumAttrs(Attrs):
    num_segments: int = 1

    def __post_init__(self):
        n = attr_int(self.num_segments, "num_segments")
        if n < 0:
            raise ValueError(f"num_segments must be >= 0, found {n}")
        set_fields(self, num_segments=n)


def _segment_sum_rel(types, attrs):
    data, ids = tensors(types, ("data", "segment_ids"))
    _int_indices(ids, "segment_ids")
    if data.ndim < 1 or ids.ndim != 1:
        fail(f"segment_ids {show_type(ids)} must be 1-D and data {show_type(data)} at "
             f"least 1-D")
    n, m = data.shape[0], ids.shape[0]
    if isinstance(n, int) and isinstance(m, int) and m > n:
        fail(f"segment_ids {show_type(ids)} has more entries than data {show_type(data)} "
             f"has rows")
    return TensorType((attrs.num_segments, *data.shape[1:]), data.dtype)


def _segment_sum_ref(data, segment_ids, attrs):
    n = attrs.num_segments
    ids = segment_ids.astype("int64")
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        bad = ids[(ids < 0) | (ids >= n)][0]
        raise OpError(f"segment_sum: segment id {bad} is outside [0, {n}) (num_segments)")
    if ids.size > data.shape[0]:
        raise OpError(f"segment_sum: {ids.size} segment ids for {data.shape[0]} rows of data")
    out = np.zeros((n, *data.shape[1:]), dtype=data.dtype)
    np.add.at(out, ids, data[:ids.size])
    return out


register_op("segment_sum", rel=_segment_sum_rel, ref=_segment_sum_ref,
            pattern=OpPattern.OPAQUE, num_inputs=2, arg_names=("data", "segment_ids"),
            attrs=SegmentSumAttrs,
            description="rows of data summed into the segment their id names (a scatter-add "
                        "along axis 0, TensorFlow's unsorted_segment_sum)")


# ---------------------------------------------------------------- Relay-style constructors


def gather(data, axis, indices):
    """``out[i][j][k] = data[i][indices[i][j][k]][k]`` for ``axis=1`` (Relay's argument
    order; ONNX GatherElements, torch.gather)."""
    return call("gather", [data, indices], axis=axis)


def gather_nd(data, indices, batch_dims=0):
    """Gather slices addressed by index tuples laid out along the first axis of indices."""
    return call("gather_nd", [data, indices], batch_dims=batch_dims)


def scatter_elements(data, indices, updates, axis=0, reduction="update"):
    """A copy of ``data`` with ``updates`` written (or combined) at ``indices`` along axis."""
    return call("scatter_elements", [data, indices, updates], axis=axis, reduction=reduction)


def scatter_nd(data, indices, updates, mode="update"):
    """A copy of ``data`` with slices ``updates`` written (or combined) at index tuples."""
    return call("scatter_nd", [data, indices, updates], mode=mode)


def segment_sum(data, segment_ids, num_segments):
    """``out[s] = sum of data[i] over the i with segment_ids[i] == s``; ``num_segments``
    rows (an int: ``dynamic.segment_sum`` takes it as a tensor)."""
    return call("segment_sum", [data, segment_ids], num_segments=num_segments)


__all__ = ["gather", "gather_nd", "scatter_elements", "scatter_nd", "segment_sum"]
