"""Reductions (axes attribute before opset 13/18, input after), the composed ones
(ReduceL1/L2/SumSquare/LogSum/LogSumExp) and ArgMax/ArgMin.

An ``axes`` input known only at run time (a graph input) imports as the ``dyn``
reduction (``op/dynamic_params.py``): its static length fixes the result's rank, the
values pick the axes when the model runs. An empty ``axes`` tensor is known to be empty
when importing, so ``noop_with_empty_axes`` is decided then.
"""

from __future__ import annotations

from ...op import dynamic_params as D
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from .base import OnnxTable, ints_or_none, run_time, shape

TABLE = OnnxTable()

_REDUCE = {"ReduceSum": (R.sum, 13), "ReduceMean": (R.mean, 18), "ReduceMax": (R.max, 18),
           "ReduceMin": (R.min, 18), "ReduceProd": (R.prod, 18)}
_DYN_NAME = {R.sum: "sum", R.mean: "mean", R.max: "max", R.min: "min", R.prod: "prod",
             R.logsumexp: "logsumexp"}


def _reduce(fn, x, axes, keepdims, noop):
    """``axes``: a list of ints, None (all), or an expression (known at run time)."""
    if axes is not None and not isinstance(axes, list):
        return D.reduce(_DYN_NAME[fn], x, axes, keepdims=bool(keepdims))
    if not axes:
        if noop:
            return x
        axes = None
    return fn(x, axis=axes, keepdims=bool(keepdims))


def _axes_input(axes):
    """The axes input's ints when known when importing, else the run-time expression
    (an empty one is known to be empty: ``[]``)."""
    if axes is None:
        return None
    known = ints_or_none(axes)
    if known is not None:
        return known
    run_time(axes, "axes")
    return [] if shape(axes) == (0,) else T.cast(axes, "int64")


for _name, (_fn, _since) in _REDUCE.items():
    TABLE.register(_name)(lambda x, axes=None, keepdims=1, _fn=_fn:
                          _reduce(_fn, x, axes, keepdims, False))
    TABLE.register(_name, since=_since)(
        lambda x, axes=None, keepdims=1, noop_with_empty_axes=0, _fn=_fn:
        _reduce(_fn, x, _axes_input(axes), keepdims, noop_with_empty_axes))


def _square(x):
    return E.multiply(x, x)


def _same(x):
    return x


# name → (elementwise before, reduction, elementwise after, opset taking axes as input);
# "no-op" empty axes still apply the elementwise parts, as onnx's reference does
_COMPOSED = {"ReduceL1": (E.abs, R.sum, _same, 18), "ReduceL2": (_square, R.sum, E.sqrt, 18),
             "ReduceSumSquare": (_square, R.sum, _same, 18),
             "ReduceLogSum": (_same, R.sum, E.log, 18),
             "ReduceLogSumExp": (_same, R.logsumexp, _same, 18)}


def _composed(pre, fn, post):
    def reduce(x, axes, keepdims, noop):
        if isinstance(axes, list) and not axes and noop:
            return post(pre(x)) if fn is R.sum else x
        return post(_reduce(fn, pre(x), axes, keepdims, False))
    return reduce


for _name, (_pre, _fn, _post, _since) in _COMPOSED.items():
    _red = _composed(_pre, _fn, _post)
    TABLE.register(_name)(lambda x, axes=None, keepdims=1, _red=_red:
                          _red(x, axes, keepdims, False))
    TABLE.register(_name, since=_since)(
        lambda x, axes=None, keepdims=1, noop_with_empty_axes=0, _red=_red:
        _red(x, _axes_input(axes), keepdims, noop_with_empty_axes))


def _arg(fn):
    def convert(x, axis=0, keepdims=1, select_last_index=0):  # noqa: A002
        y = fn(x, axis=[int(axis)], keepdims=bool(keepdims),
               select_last_index=bool(select_last_index))
        return T.cast(y, "int64")
    return convert


TABLE.register("ArgMax")(_arg(R.argmax))
TABLE.register("ArgMin")(_arg(R.argmin))
