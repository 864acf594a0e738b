"""Gradients of reductions (``op/reduce.py``)."""

from __future__ import annotations

import numpy as np

from ....op import reduce as _r
from ....op import tensor as _e
from ....op import transform as _t
from ....op.reduce import reduce_axes
from . import GRADIENT
from ._util import dtype_of, scalar, shape_of, unreduce


def _setup(call, out, g):
    x = call.args[0]
    shape = shape_of(x)
    axes = reduce_axes(len(shape), call.attrs)
    count = int(np.prod([shape[i] for i in axes])) if axes else 1
    return x, shape, axes, count, unreduce(g, shape, axes), unreduce(out, shape, axes)


@GRADIENT.register("sum")
def _sum(call, out, g):
    _, _, _, _, gb, _ = _setup(call, out, g)
    return [gb]


@GRADIENT.register("mean")
def _mean(call, out, g):
    x, _, _, count, gb, _ = _setup(call, out, g)
    return [gb / scalar(float(count), x)]


@GRADIENT.register("max", "min")
def _extreme(call, out, g):
    x, shape, axes, _, gb, yb = _setup(call, out, g)
    mask = _t.cast(_e.equal(x, yb), dtype_of(x))
    ties = unreduce(_r.sum(mask, axis=list(axes), keepdims=True), shape, axes)
    return [gb * mask / ties]


@GRADIENT.register("prod")
def _prod(call, out, g):
    x, _, _, _, gb, yb = _setup(call, out, g)
    return [gb * yb / x]  # assumes no zero entries, like Relay


def _centred(call, out, g):
    x, shape, axes, count, gb, yb = _setup(call, out, g)
    mean = unreduce(_r.mean(x, axis=list(axes), keepdims=True), shape, axes)
    denom = float(count - (1 if call.attrs.unbiased else 0))
    return x, gb, yb, x - mean, denom


@GRADIENT.register("variance")
def _variance(call, out, g):
    x, gb, _, xc, denom = _centred(call, out, g)
    return [gb * xc * scalar(2.0 / denom, x)]


@GRADIENT.register("std")
def _std(call, out, g):
    x, gb, yb, xc, denom = _centred(call, out, g)
    return [gb * xc / (yb * scalar(denom, x))]


@GRADIENT.register("logsumexp")
def _logsumexp(call, out, g):
    x, _, _, _, gb, yb = _setup(call, out, g)
    return [gb * _e.exp(x - yb)]
