"""Relay's shape-taking ops pick the ``dyn.*`` op when a shape argument is an
expression (a constant counts as its value), as ``relay.reshape(x, shape_expr)`` does;
relayir's constructors take static shapes only and keep ``dyn.*`` separate."""

from __future__ import annotations

import numpy as np

from ....errors import Error
from ....ir.expr import Constant, Expr
from ....op import dynamic as dyn
from ....op import dynamic_params as dyn_params
from ....op.algorithm import arange as _arange
from ....op.algorithm import one_hot as _one_hot
from ....op.algorithm import trilu as _trilu
from ....op.nn.layers import pad as _pad
from ....op.reduce import max as _max
from ....op.scatter import gather_nd as _gather_nd
from ....op.scatter import segment_sum as _segment_sum
from ....op.sparse import sparse_to_dense as _sparse_to_dense
from ....op.tensor import add as _add  # type: ignore[attr-defined]
from ....op.tensor import less  # type: ignore[attr-defined]
from ....op.transform import where
from ....op.transform.convert import cast as _cast
from ....op.transform.creation import full as _full
from ....op.transform.creation import ones as _ones
from ....op.transform.creation import zeros as _zeros
from ....op.transform.index import strided_slice as _strided_slice
from ....op.transform.replicate import broadcast_to as _broadcast_to
from ....op.transform.replicate import tile as _tile
from ....op.transform.shape import expand_dims as _expand_dims
from ....op.transform.shape import reshape as _reshape
from ....op.transform.shape import squeeze as _squeeze
from ._arg_facts import any_expr, as_int64, constant_value, int64_const, known_dtype, known_type


def reshape(data, newshape, allowzero: bool = False):
    newshape = constant_value(newshape)
    if any_expr(newshape):
        return dyn.reshape(data, newshape, allowzero)
    return _reshape(data, newshape, allowzero)


def squeeze(data, axis=None):
    """An expression ``axis`` (a 1-D int tensor) names the axes at run time."""
    axis = constant_value(axis)
    return dyn_params.squeeze(data, axis) if any_expr(axis) else _squeeze(data, axis)


def full(fill_value, shape=(), dtype: str = ""):
    shape = constant_value(shape)
    if any_expr(shape):
        return dyn.full(fill_value, shape, dtype or None)
    return _full(fill_value, shape, dtype)


def zeros(shape, dtype: str = "float32"):
    shape = constant_value(shape)
    return dyn.zeros(shape, dtype) if any_expr(shape) else _zeros(shape, dtype)


def ones(shape, dtype: str = "float32"):
    shape = constant_value(shape)
    return dyn.ones(shape, dtype) if any_expr(shape) else _ones(shape, dtype)


def broadcast_to(data, shape):
    shape = constant_value(shape)
    return dyn.broadcast_to(data, shape) if any_expr(shape) else _broadcast_to(data, shape)


def tile(data, reps):
    """Relay takes run-time ``reps`` of any number dtype (a float tensor is cast)."""
    reps = constant_value(reps)
    return dyn.tile(data, as_int64(reps)) if any_expr(reps) else _tile(data, reps)


def expand_dims(data, axis, num_newaxis: int = 1):
    """An expression ``axis`` (an int scalar, negative from the end as in Relay) is
    ``dyn.unsqueeze`` at ``axis .. axis + num_newaxis - 1``; the data's rank must be
    known."""
    axis = constant_value(axis)
    if not any_expr(axis):
        return _expand_dims(data, axis, num_newaxis)
    ndim = _rank_of(data, "relay.expand_dims with an expression axis")
    axis = _reshape(_cast(axis, "int64"), (1,))
    axis = where(less(axis, int64_const(0)), _add(axis, int64_const(ndim + 1)), axis)
    return dyn_params.unsqueeze(data, _add(axis, int64_const(np.arange(num_newaxis))))


def one_hot(indices, on_value, off_value, depth, axis: int = -1, dtype: str = "float32"):
    depth = constant_value(depth)
    if isinstance(depth, list) and len(depth) == 1:
        depth = depth[0]
    if any_expr(depth):
        on_value, off_value = (v if isinstance(v, Expr) else Constant(np.array(v, dtype))
                               for v in (on_value, off_value))
        return dyn_params.one_hot(indices, on_value, off_value, depth, axis, dtype)
    return _one_hot(indices, on_value, off_value, depth, axis, dtype)


def strided_slice(data, begin, end, strides=None, axes=None, slice_mode: str = "end"):
    begin, end, strides = constant_value(begin), constant_value(end), constant_value(strides)
    if any_expr(begin, end, strides):
        if strides is None:
            strides = [1]
        return dyn.strided_slice(data, begin, end, strides, axes, slice_mode)
    return _strided_slice(data, begin, end, strides, axes, slice_mode)


def arange(start, stop=None, step=None, dtype: str = "float32"):
    start, stop, step = constant_value(start), constant_value(stop), constant_value(step)
    if any_expr(start, stop, step):
        return dyn.arange(start, stop, 1 if step is None else step, dtype)
    return _arange(start, stop, 1 if step is None else step, dtype)


def pad(data, pad_width, pad_value=0, pad_mode: str = "constant"):
    """With run-time ``pad_width``, a number ``pad_value`` (Relay's default 0) is a scalar
    of the data's dtype, which ``dyn.nn.pad`` requires of it."""
    pad_width = constant_value(pad_width)
    if any_expr(pad_width):
        dtype = known_dtype(data)
        if not isinstance(pad_value, Expr) and dtype is not None:
            pad_value = Constant(np.array(pad_value, dtype))
        return dyn.pad(data, as_int64(pad_width), pad_value, pad_mode)
    return _pad(data, pad_width, pad_value, pad_mode)


def shape_of(data, dtype: str = "int32"):
    """Relay's default dtype is int32 (relayir's ``shape_of`` defaults to int64)."""
    return dyn.shape_of(data, dtype)


def trilu(data, k=0, upper: bool = True):
    """Relay takes ``k`` as an expression; relayir as an int (a constant is read)."""
    return _trilu(data, constant_value(k), upper)


def gather_nd(data, indices, batch_dims: int = 0, index_rank=None):
    """``index_rank`` (Relay's hint for indices of unknown shape) is not needed: relayir
    reads it off the indices' type."""
    return _gather_nd(data, indices, batch_dims)


def segment_sum(data, segment_ids, num_segments=None):
    """Relay's ``num_segments`` may be an expression, or None: then the largest id + 1,
    known only at run time (``dyn.segment_sum``)."""
    num_segments = constant_value(num_segments)
    if isinstance(num_segments, list):
        num_segments = num_segments[0] if len(num_segments) == 1 else num_segments
    if num_segments is None:
        num_segments = _add(_cast(_max(segment_ids), "int64"), Constant(np.array(1, "int64")))
    if any_expr(num_segments):
        return dyn.segment_sum(data, segment_ids, num_segments)
    return _segment_sum(data, segment_ids, num_segments)


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0):
    """A Python number as ``default_value`` (Relay's default 0) becomes a scalar of the
    values' dtype, which relayir's op requires of it."""
    if not isinstance(default_value, Expr):
        default_value = Constant(np.array(default_value, _dtype_of(sparse_values)))
    output_shape = constant_value(output_shape)
    if any_expr(output_shape):
        return dyn.sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value)
    return _sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value)




def _dtype_of(e) -> str:
    dtype = known_dtype(e)
    if dtype is None:
        raise Error("relay.sparse_to_dense: give default_value as an expression when "
                    "sparse_values has no known dtype")
    return dtype


def _rank_of(e, what: str) -> int:
    ty = known_type(e)
    if ty is None:
        raise Error(f"{what}: the data's rank must be known (annotate its variable)")
    return ty.ndim




argwhere = dyn.argwhere

__all__ = ["arange", "argwhere", "broadcast_to", "expand_dims", "full", "gather_nd", "one_hot",
           "ones", "pad", "reshape", "segment_sum", "shape_of", "sparse_to_dense", "squeeze",
           "strided_slice", "tile", "trilu", "zeros"]
