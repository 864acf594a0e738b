"""Reductions (axes attribute before opset 13/18, input after) and ArgMax/ArgMin."""

from __future__ import annotations

from ...op import reduce as R
from ...op import transform as T
from .base import OnnxTable, ints

TABLE = OnnxTable()

_REDUCE = {"ReduceSum": (R.sum, 13), "ReduceMean": (R.mean, 18), "ReduceMax": (R.max, 18),
           "ReduceMin": (R.min, 18), "ReduceProd": (R.prod, 18)}


def _reduce(fn, x, axes, keepdims, noop):
    if not axes:
        if noop:
            return x
        axes = None
    return fn(x, axis=axes, keepdims=bool(keepdims))


for _name, (_fn, _since) in _REDUCE.items():
    TABLE.register(_name)(lambda x, axes=None, keepdims=1, _fn=_fn:
                          _reduce(_fn, x, axes, keepdims, False))
    TABLE.register(_name, since=_since)(
        lambda x, axes=None, keepdims=1, noop_with_empty_axes=0, _fn=_fn:
        _reduce(_fn, x, ints(axes, "axes"), keepdims, noop_with_empty_axes))


def _arg(fn):
    def convert(x, axis=0, keepdims=1, select_last_index=0):  # noqa: A002
        y = fn(x, axis=[int(axis)], keepdims=bool(keepdims),
               select_last_index=bool(select_last_index))
        return T.cast(y, "int64")
    return convert


TABLE.register("ArgMax")(_arg(R.argmax))
TABLE.register("ArgMin")(_arg(R.argmin))
