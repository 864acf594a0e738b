"""Relay's multi-output ops return a ``TupleWrapper`` (relayir's return the tuple-typed
call); one wrapper per op, over relayir's constructor."""

from __future__ import annotations

import numpy as np

from ....ir.expr import Constant, Expr, Tuple, TupleGetItem
from ....ir.op import call
from ....ir.types import is_float
from ....op.algorithm import topk as _topk
from ....op.dynamic import unique as _unique
from ....op.nn.layers import dropout_raw as _dropout_raw
from ....op.nn.norm import batch_norm as _batch_norm
from ....op.reduce import mean, std, variance
from ....op.sparse import sparse_fill_empty_rows as _sparse_fill_empty_rows
from ....op.sparse import sparse_reshape as _sparse_reshape
from ....op.transform.convert import cast
from ....op.transform.join import split as _split
from ....op.transform.replicate import meshgrid as _meshgrid
from ..expr import TupleWrapper
from ._arg_facts import as_int64


def split(data, indices_or_sections, axis: int = 0) -> TupleWrapper:
    n = (indices_or_sections if isinstance(indices_or_sections, int)
         else len(indices_or_sections) + 1)
    return TupleWrapper(_split(data, indices_or_sections, axis), n)


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis: int = 1,
               epsilon: float = 1e-5, center: bool = True, scale: bool = True) -> TupleWrapper:
    return TupleWrapper(_batch_norm(data, gamma, beta, moving_mean, moving_var, axis, epsilon,
                                    center, scale), 3)


def dropout_raw(data, rate: float = 0.5) -> TupleWrapper:
    return TupleWrapper(_dropout_raw(data, rate), 2)


def topk(data, k=1, axis: int = -1, ret_type: str = "both", is_ascend: bool = False,
         dtype: str = "int32"):
    """Relay ignores ``dtype`` (the indices') when only values are returned; its tests
    pass the values' dtype there, which relayir's attrs would refuse. Float indices
    (Relay allows them) are int64 indices cast. A run-time ``k`` is ``dyn.topk``."""
    if ret_type == "values":
        dtype = "int32"
    cast_to = dtype if is_float(dtype) else None
    dtype = "int64" if cast_to else dtype
    if isinstance(k, Constant):
        k = int(np.asarray(k.data).reshape(-1)[0])
    if not isinstance(k, Expr) and not cast_to:  # relayir's op returns what Relay's does
        out = _topk(data, k, axis, ret_type, is_ascend, dtype)
        return TupleWrapper(out, 2) if ret_type == "both" else out
    out = (call("dyn.topk", [data, as_int64(k)], axis=axis, is_ascend=is_ascend, dtype=dtype)
           if isinstance(k, Expr) else _topk(data, k, axis, "both", is_ascend, dtype))
    values, indices = TupleGetItem(out, 0), TupleGetItem(out, 1)
    if cast_to:
        indices = cast(indices, cast_to)
    if ret_type == "both":
        return TupleWrapper(Tuple([values, indices]), 2)
    return values if ret_type == "values" else indices


def unique(data, is_sorted: bool = True, return_counts: bool = False) -> TupleWrapper:
    """relayir's ``unique`` gives ``(values, indices, inverse_indices, counts)`` with the
    extent of ``values`` as its length (Relay adds ``num_unique`` and pads)."""
    return TupleWrapper(_unique(data, is_sorted), 4)


def mean_variance(data, axis=None, keepdims: bool = False, exclude: bool = False,
                  unbiased: bool = False) -> TupleWrapper:
    """``(mean, variance)``: relayir's two reductions side by side."""
    return TupleWrapper(Tuple([mean(data, axis, keepdims, exclude),
                               variance(data, axis, keepdims, exclude, unbiased)]), 2)


def mean_std(data, axis=None, keepdims: bool = False, exclude: bool = False,
             unbiased: bool = False) -> TupleWrapper:
    """``(mean, std)``: relayir's two reductions side by side."""
    return TupleWrapper(Tuple([mean(data, axis, keepdims, exclude),
                               std(data, axis, keepdims, exclude, unbiased)]), 2)


def meshgrid(data, indexing: str = "ij") -> TupleWrapper:
    return TupleWrapper(_meshgrid(data, indexing), len(data))


def sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value) -> Tuple:
    """Relay gives a ``Tuple`` of the three fields (not a ``TupleWrapper``)."""
    out = _sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value)
    return Tuple([TupleGetItem(out, k) for k in range(3)])


def sparse_reshape(sparse_indices, prev_shape, new_shape) -> TupleWrapper:
    return TupleWrapper(_sparse_reshape(sparse_indices, prev_shape, new_shape), 2)


__all__ = ["batch_norm", "dropout_raw", "mean_std", "mean_variance", "meshgrid",
           "sparse_fill_empty_rows", "sparse_reshape", "split", "topk", "unique"]
