"""Computes of the reductions (``op/reduce.py``).

Float sums, products and means accumulate in float64 (so results match numpy's pairwise
float32 sums to well within 1e-5); integer ones in 64 bits, which wraps exactly as
numpy's same-dtype accumulation does once cast back.
"""

from __future__ import annotations

import math
import sys

from ...op.reduce import reduce_axes
from .. import expr as E
from .. import tensor as te
from ..tensor import Tensor, compute
from .common import COMPUTE, float_acc, prod, product_acc, ravel


class _Geometry:
    """Which axes a reduction removes and how output indices map to input indices."""

    def __init__(self, x: Tensor, attrs, keepdims: bool | None = None):
        self.x = x
        self.axes = reduce_axes(x.ndim, attrs)
        self.keepdims = attrs.keepdims if keepdims is None else keepdims
        kept = [d for k, d in enumerate(x.shape) if k not in self.axes]
        self.shape = tuple(E.IntImm(1) if k in self.axes else d
                           for k, d in enumerate(x.shape)) if self.keepdims else tuple(kept)
        self.extents = [x.shape[a] for a in self.axes]
        self.count = prod(self.extents)

    def rvars(self) -> list:
        return [te.reduce_axis(d, f"r{k}") for k, d in enumerate(self.extents)]

    def source_index(self, out_index: tuple, rvars: list) -> tuple:
        idx, pos, r = [], 0, iter(rvars)
        for k in range(self.x.ndim):
            if k in self.axes:
                idx.append(next(r).var)
                if self.keepdims:
                    pos += 1
            else:
                idx.append(out_index[pos])
                pos += 1
        return tuple(idx)

    def keep_index(self, out_index: tuple) -> tuple:
        """``out_index`` (of the reduced tensor) as an index of a keepdims tensor."""
        if self.keepdims:
            return tuple(E.IntImm(0) if k in self.axes else i for k, i in enumerate(out_index))
        it = iter(out_index)
        return tuple(E.IntImm(0) if k in self.axes else next(it) for k in range(self.x.ndim))

    def reduce(self, fbody, name: str, shape=None) -> Tensor:
        """``out[i] = fbody(i, rvars, read)`` where ``read(rv)`` reads x at the source."""

        def body(*i):
            rv = self.rvars()
            return fbody(i, rv, lambda rvs: self.x[self.source_index(i, rvs)])

        return compute(self.shape if shape is None else shape, body, name=name, tag="reduce")


def _reduce(combiner: str, source: E.Expr, rv: list, acc_dtype: str | None = None,
            dtype: str | None = None) -> E.Expr:
    """``te``'s reduction over ``rv``; over no axes at all (``exclude`` of every axis, a
    scalar) the element itself, cast as the reduction would (a Reduce needs an axis to
    lower), and for a float sum plus +0.0, as numpy's (its sum starts from +0.0: a
    -0.0 alone sums to +0.0)."""
    if rv:
        return te._reducer(combiner)(source, rv, acc_dtype=acc_dtype, dtype=dtype)
    value = source if acc_dtype is None else E.cast(acc_dtype, source)
    if combiner == "sum" and E.is_float(value.dtype):
        value = value + E.const(0.0, value.dtype)
    return E.cast(dtype or source.dtype, value)


def _simple(combiner: str, acc=None):
    def rule(attrs, inputs, out):
        g = _Geometry(inputs[0], attrs)
        dtype = inputs[0].dtype
        acc_dtype = acc(dtype) if acc else None

        def body(i, rv, read):
            return _reduce(combiner, read(rv), rv, acc_dtype=acc_dtype, dtype=dtype)

        return g.reduce(body, combiner)

    return rule


COMPUTE.register("sum")(_simple("sum", float_acc))
COMPUTE.register("prod")(_simple("prod", product_acc))
COMPUTE.register("max")(_simple("max"))
COMPUTE.register("min")(_simple("min"))
COMPUTE.register("all")(_simple("and"))
COMPUTE.register("any")(_simple("or"))


def _mean_of(i, rv, read, g: _Geometry, dtype: str, value=None) -> E.Expr:
    """The mean over the reduce axes of ``value(read(rv))`` (default: the element)."""
    src = read(rv) if value is None else value(read(rv))
    acc = float_acc(dtype)
    total = _reduce("sum", src, rv, acc_dtype=acc, dtype=acc)
    if E.is_float(dtype):
        return E.cast(dtype, total / E.cast(acc, g.count))
    wrapped = E.cast(acc, E.cast(dtype, total))  # numpy sums in the input dtype
    return E.cast(dtype, E.TruncDiv(wrapped, E.cast(acc, g.count)))


@COMPUTE.register("mean")
def mean(attrs, inputs, out):
    g = _Geometry(inputs[0], attrs)
    return g.reduce(lambda i, rv, read: _mean_of(i, rv, read, g, inputs[0].dtype), "mean")


def _nan_first_key(v: E.Expr, combiner: str) -> E.Expr:
    """A float32/float16 value as a float64 key that orders NaN beyond every number and
    keeps the infinities beyond every finite value: NaN -> +-inf, +-inf -> +-DBL_MAX."""
    sign = 1.0 if combiner == "argmax" else -1.0
    inf = E.const(sign * math.inf, v.dtype)
    key = E.select(E.equal(v, inf), E.const(sign * sys.float_info.max, "float64"),
                   E.cast("float64", v))
    return E.select(E.isnan(v), E.const(sign * math.inf, "float64"), key)


def _arg(combiner: str):
    """numpy's ``argmax``/``argmin``: the first NaN's index when there is a NaN (the last
    one under ``select_last_index``), else the first (last) extreme."""

    def rule(attrs, inputs, out):
        x = inputs[0]
        g = _Geometry(x, attrs)
        last = attrs.select_last_index

        def arg(rv, source, how=combiner):
            if not rv:  # no axes: the one element is the extreme
                return E.const(0, "int32")
            index = ravel([r.var for r in rv], g.extents)
            return E.Reduce(how, source, rv, "int32", index=index, last=last)

        def body(i, rv, read):
            v = read(rv)
            if not E.is_float(x.dtype):
                return arg(rv, v)
            if x.dtype != "float64":  # one pass over a widened key
                return arg(rv, _nan_first_key(v, combiner))
            # float64 has no wider type: the NaN's index when there is one, else the plain
            rn, ra = g.rvars(), g.rvars()
            has_nan = _reduce("or", E.isnan(read(rn)), rn)
            first_nan = arg(ra, E.cast("int8", E.isnan(read(ra))), "argmax")
            return E.select(has_nan, first_nan, arg(rv, v))

        return g.reduce(body, combiner)

    return rule


COMPUTE.register("argmax")(_arg("argmax"))
COMPUTE.register("argmin")(_arg("argmin"))


def _variance(attrs, x: Tensor, name: str) -> Tensor:
    acc = float_acc(x.dtype)
    keep = _Geometry(x, attrs, keepdims=True)
    mean_t = keep.reduce(lambda i, rv, read: _mean_of(i, rv, read, keep, acc,
                                                      lambda v: E.cast(acc, v)),
                         "mean")
    g = _Geometry(x, attrs)
    denom = E.cast(acc, g.count - (1 if attrs.unbiased else 0))

    def body(i, rv, read):
        m = mean_t[g.keep_index(i)]
        d = E.cast(acc, read(rv)) - m
        return _reduce("sum", d * d, rv, dtype=acc) / denom

    return g.reduce(body, name)


@COMPUTE.register("variance")
def variance(attrs, inputs, out):
    v = _variance(attrs, inputs[0], "variance")
    return compute(out.shape, lambda *i: E.cast(out.dtype, v[i]), name="variance",
                   tag="elemwise")


@COMPUTE.register("std")
def std(attrs, inputs, out):
    v = _variance(attrs, inputs[0], "std")
    return compute(out.shape, lambda *i: E.cast(out.dtype, E.sqrt(v[i])), name="std",
                   tag="elemwise")


@COMPUTE.register("logsumexp")
def logsumexp(attrs, inputs, out):
    x = inputs[0]
    keep = _Geometry(x, attrs, keepdims=True)
    m = keep.reduce(lambda i, rv, read: _reduce("max", read(rv), rv), "max")
    zero = E.const(0, x.dtype)
    g = _Geometry(x, attrs)
    acc = float_acc(x.dtype)

    def body(i, rv, read):
        mi = m[g.keep_index(i)]
        shift = E.select(E.isfinite(mi), mi, zero)
        total = _reduce("sum", E.exp(read(rv) - shift), rv, acc_dtype=acc, dtype=acc)
        return E.cast(x.dtype, E.log(total) + E.cast(acc, shift))

    return g.reduce(body, "logsumexp")
