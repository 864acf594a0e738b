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
from ...op import scatter as S
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype, ints, ndim, value

TABLE = OnnxTable()


def _topk(x, k, axis, largest, _outputs):
    out = A.topk(x, k=int(k), axis=int(axis), ret_type="both", is_ascend=not largest,
                 dtype="int64")
    return tuple(TupleGetItem(out, i) for i in range(2))[:max(_outputs, 1)]


@TABLE.register("TopK")
def topk_v1(x, k=1, axis=-1, _outputs=2):
    return _topk(x, k, axis, True, _outputs)


@TABLE.register("TopK", since=10)
def topk_v10(x, k, axis=-1, _outputs=2):
    return _topk(x, ints(k, "k")[0], axis, True, _outputs)


@TABLE.register("TopK", since=11)
def topk(x, k, axis=-1, largest=1, sorted=1, _outputs=2):  # noqa: A002  (ONNX's name)
    return _topk(x, ints(k, "k")[0], axis, bool(largest), _outputs)


@TABLE.register("CumSum", since=11)
def cumsum(x, axis, exclusive=0, reverse=0):
    return A.cumsum(x, axis=ints(axis, "axis")[0], exclusive=bool(exclusive),
                    reverse=bool(reverse))


@TABLE.register("CumProd", since=26)
def cumprod(x, axis, exclusive=0, reverse=0):
    return A.cumprod(x, axis=ints(axis, "axis")[0], exclusive=bool(exclusive),
                     reverse=bool(reverse))


@TABLE.register("Trilu", since=14)
def trilu(x, k=None, upper=1):
    return A.trilu(x, 0 if k is None else ints(k, "k")[0], bool(upper))


@TABLE.register("Einsum", since=12)
def einsum(*xs, equation):
    return A.einsum(list(xs), equation)


@TABLE.register("OneHot", since=9)
def one_hot(indices, depth, values, axis=-1):
    d = int(np.asarray(value(depth, "depth")).reshape(-1)[0])
    vals = np.asarray(value(values, "values")).reshape(-1)
    if vals.size != 2:
        raise ConversionError(f"values must hold [off_value, on_value], found {vals.size}")
    if not dtype(indices).startswith("int"):
        indices = T.cast(indices, "int64")
    # negative indices count from the end (ONNX 11 and later; out of range before)
    depth_c = const(np.asarray(d, dtype(indices)))
    indices = T.where(E.less(indices, const(np.asarray(0, dtype(indices)))),
                      E.add(indices, depth_c), indices)
    return A.one_hot(indices, const(vals[1]), const(vals[0]), depth=d, axis=int(axis),
                     dtype=vals.dtype.name)


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
