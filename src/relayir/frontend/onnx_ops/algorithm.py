"""Sorting, scans, einsum, one-hot, element gathers/scatters and bitwise ops: TopK,
CumSum, CumProd, Trilu, Einsum, OneHot, GatherElements, GatherND, ScatterElements, Scatter,
ScatterND, BitShift, BitwiseAnd/Or/Xor/Not.

ONNX lays an index tuple out along the LAST axis of GatherND/ScatterND indices; Relay's
gather_nd/scatter_nd take it along the first, so those converters move that axis.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import TupleGetItem, const
from ...op import algorithm as A
from ...op import bitwise as B
from ...op import dynamic_params as DP
from ...op import scatter as S
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import (
    OnnxTable,
    constant_value,
    dtype,
    ints_or_none,
    ndim,
    run_time,
    shape,
)

TABLE = OnnxTable()


def _topk(x, k, axis, largest, _outputs):
    out = A.topk(x, k=int(k), axis=int(axis), ret_type="both", is_ascend=not largest,
                 dtype="int64")
    return tuple(TupleGetItem(out, i) for i in range(2))[:max(_outputs, 1)]


@TABLE.register("TopK")
def topk_v1(x, k=1, axis=-1, _outputs=2):
    return _topk(x, k, axis, True, _outputs)


def _run_time_topk(x, k, axis, largest, _outputs):
    """TopK whose ``k`` is read when the model runs (``dyn.topk``)."""
    k = T.cast(run_time(k, "k"), "int64")
    return DP.topk(x, k, axis=int(axis), is_ascend=not largest, dtype="int64")[
        :max(_outputs, 1)]


@TABLE.register("TopK", since=10)
def topk_v10(x, k, axis=-1, _outputs=2):
    known = ints_or_none(k)
    if known is None:
        return _run_time_topk(x, k, axis, True, _outputs)
    return _topk(x, known[0], axis, True, _outputs)


@TABLE.register("TopK", since=11)
def topk(x, k, axis=-1, largest=1, sorted=1, _outputs=2):  # noqa: A002  (ONNX's name)
    known = ints_or_none(k)
    if known is None:
        return _run_time_topk(x, k, axis, bool(largest), _outputs)
    return _topk(x, known[0], axis, bool(largest), _outputs)


def _scan(name, x, axis, exclusive, reverse):
    known = ints_or_none(axis)
    if known is None:  # the axis is read when the model runs (dyn.cumsum / dyn.cumprod)
        return DP.scan(name, x, T.cast(run_time(axis, "axis"), "int64"),
                       exclusive=bool(exclusive), reverse=bool(reverse))
    return getattr(A, name)(x, axis=known[0], exclusive=bool(exclusive),
                            reverse=bool(reverse))


@TABLE.register("CumSum", since=11)
def cumsum(x, axis, exclusive=0, reverse=0):
    return _scan("cumsum", x, axis, exclusive, reverse)


@TABLE.register("CumProd", since=26)
def cumprod(x, axis, exclusive=0, reverse=0):
    return _scan("cumprod", x, axis, exclusive, reverse)


@TABLE.register("Trilu", since=14)
def trilu(x, k=None, upper=1):
    known = [0] if k is None else ints_or_none(k)
    if known is None:  # the diagonal is read when the model runs (dyn.trilu)
        return DP.trilu(x, T.cast(run_time(k, "k"), "int64"), bool(upper))
    return A.trilu(x, known[0], bool(upper))


@TABLE.register("Einsum", since=12)
def einsum(*xs, equation):
    return A.einsum(list(xs), equation)


@TABLE.register("OneHot", since=9)
def one_hot(indices, depth, values, axis=-1):
    """``depth`` and ``values`` may be known only at run time (``dyn.one_hot``; the
    ``[off, on]`` pair is then read from the ``values`` tensor)."""
    if not dtype(indices).startswith("int"):
        indices = T.cast(indices, "int64")
    vals = constant_value(values)
    if vals is None:
        if shape(run_time(values, "values")) != (2,):
            raise ConversionError(f"values must hold [off_value, on_value], found "
                                  f"{shape(values)}")
        off, on = (T.take(values, const(np.asarray(i, "int64"))) for i in (0, 1))
        out_dtype = dtype(values)
    else:
        vals = np.asarray(vals).reshape(-1)
        if vals.size != 2:
            raise ConversionError(f"values must hold [off_value, on_value], found {vals.size}")
        off, on, out_dtype = const(vals[0]), const(vals[1]), vals.dtype.name
    known = constant_value(depth)
    if known is not None:
        d = int(np.asarray(known).reshape(-1)[0])
        depth_c = const(np.asarray(d, dtype(indices)))
    else:
        depth_c = T.cast(T.reshape(run_time(depth, "depth"), ()), dtype(indices))
    # negative indices count from the end (ONNX 11 and later; out of range before)
    indices = T.where(E.less(indices, const(np.asarray(0, dtype(indices)))),
                      E.add(indices, depth_c), indices)
    if known is None:
        return DP.one_hot(indices, on, off, T.cast(depth_c, "int64"), axis=int(axis),
                          dtype=out_dtype)
    return A.one_hot(indices, on, off, depth=d, axis=int(axis), dtype=out_dtype)


@TABLE.register("GatherElements", since=11)
def gather_elements(x, indices, axis=0):  # noqa: A002
    return S.gather(x, int(axis), indices)


def _tuple_first(indices):
    """(..., M) -> (M, ...): ONNX's index-tuple axis to Relay's."""
    n = ndim(indices)
    return T.transpose(indices, [n - 1, *range(n - 1)])


@TABLE.register("GatherND", since=11)
def gather_nd(x, indices, batch_dims=0):
    return S.gather_nd(x, _tuple_first(indices), batch_dims=int(batch_dims))


def _reduction(reduction):
    return "update" if reduction == "none" else reduction


@TABLE.register("Scatter", since=9)
def scatter(x, indices, updates, axis=0):  # noqa: A002
    return S.scatter_elements(x, indices, updates, axis=int(axis))


@TABLE.register("ScatterElements", since=11)
def scatter_elements(x, indices, updates, axis=0, reduction="none"):  # noqa: A002
    return S.scatter_elements(x, indices, updates, axis=int(axis),
                              reduction=_reduction(reduction))


@TABLE.register("ScatterND", since=11)
def scatter_nd(x, indices, updates, reduction="none"):
    return S.scatter_nd(x, _tuple_first(indices), updates, mode=_reduction(reduction))


@TABLE.register("BitShift", since=11)
def bit_shift(x, y, direction):
    if direction not in ("LEFT", "RIGHT"):
        raise ConversionError(f"direction must be LEFT or RIGHT, found {direction!r}")
    return (B.left_shift if direction == "LEFT" else B.right_shift)(x, y)


TABLE.register("BitwiseAnd", since=18)(lambda a, b: B.bitwise_and(a, b))
TABLE.register("BitwiseOr", since=18)(lambda a, b: B.bitwise_or(a, b))
TABLE.register("BitwiseXor", since=18)(lambda a, b: B.bitwise_xor(a, b))
TABLE.register("BitwiseNot", since=18)(lambda x: B.bitwise_not(x))
