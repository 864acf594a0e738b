"""Computes of ``op/scatter.py``.

Gathers are index mappings (inlined into their consumers). A scatter is written from
the output's side: each output element reduces over the updates that land on it
(``add``: sum, ``mul``: product, ``min``/``max``), and "update" takes the last one that
does (an ``argmax`` of the match, last position first) or keeps ``data``. Indices are
wrapped like the reference (negative from the end) and then clamped, so a bad index
never reads out of bounds.
"""

from __future__ import annotations

from .. import expr as E
from .. import tensor as te
from ..tensor import compute
from .common import COMPUTE, float_acc, norm_axis, ravel, unravel


def fix_index(value: E.Expr, n: E.Expr) -> E.Expr:
    """An index of an axis of size ``n``: negative counts from the end, then clamped."""
    i = E.cast(E.INDEX, value)
    i = E.select(i < 0, i + n, i)
    return E.Max(E.Min(i, n - 1), E.IntImm(0))


@COMPUTE.register("gather")
def gather(attrs, inputs, out):
    data, indices = inputs
    axis = norm_axis(attrs.axis, data.ndim)

    def fn(*i):
        j = fix_index(indices[i], data.shape[axis])
        return data[i[:axis] + (j,) + i[axis + 1:]]

    return compute(out.shape, fn, name="gather", tag="injective")


@COMPUTE.register("gather_nd")
def gather_nd(attrs, inputs, out):
    data, indices = inputs
    bd = attrs.batch_dims
    m = int(E.const_value(indices.shape[0]))
    ny = indices.ndim - 1  # batch axes and Y axes: the leading output axes

    def fn(*i):
        lead = i[:ny]
        idx = [fix_index(indices[(E.IntImm(k),) + lead], data.shape[bd + k]) for k in range(m)]
        return data[i[:bd] + tuple(idx) + i[ny:]]

    return compute(out.shape, fn, name="gather_nd", tag="injective")


def _combine(mode: str, data_value, matches, update_at, dtype):
    """``data`` combined with every matching update (see the module docstring).

    ``matches(rv)`` is the bool "update at reduce position rv lands here"; ``update_at``
    reads the update at a position (index exprs)."""
    rv = matches.rvars()
    if not rv:  # one update per output position (no update axes): nothing to reduce
        hit, value = matches.at(()), update_at(())
        if mode == "update":
            return E.select(hit, value, data_value)
        if mode in ("add", "mul"):
            # -0.0 is the float sum's identity (+0.0 would turn a -0.0 datum into +0.0)
            ident = -0.0 if mode == "add" and E.is_float(dtype) else int(mode == "mul")
            value = E.select(hit, value, E.const(ident, dtype))
            return data_value + value if mode == "add" else data_value * value
        return E.select(hit, (E.Max if mode == "max" else E.Min)(data_value, value),
                        data_value)
    if mode == "update":
        sizes = [E.const_value(r.extent) for r in rv]
        if 0 in sizes:  # no updates at all: the argmax below would point at position 0
            return data_value
        pos = E.Reduce("argmax", E.cast("int32", matches(rv)), tuple(rv), "int32",
                       index=ravel([r.var for r in rv], [r.extent for r in rv]), last=True)
        last = unravel(E.cast(E.INDEX, pos), [r.extent for r in rv])
        hit = matches.at(last)
        # a run-time extent may be 0: test it first, so that no update is read then
        # (&& evaluates left to right: position 0 of an empty array is never loaded)
        runtime = [r.extent > 0 for r, n in zip(rv, sizes) if n is None]
        return E.select(E.logical_and(*runtime, hit) if runtime else hit, update_at(last),
                        data_value)
    where = tuple(r.var for r in rv)
    if mode in ("add", "mul"):
        acc = "float64" if E.is_float(dtype) else ("int64" if not E.is_unsigned(dtype)
                                                   else "uint64")
        ident = E.const(0 if mode == "add" else 1, acc)
        src = E.select(matches(rv), E.cast(acc, update_at(where)), ident)
        total = E.Reduce("sum" if mode == "add" else "prod", src, tuple(rv), dtype, acc)
        if mode == "mul" or not E.is_float(dtype):
            return data_value + total if mode == "add" else data_value * total
        # a position no update lands on keeps its datum as the reference does (the sum's
        # +0.0 would turn a -0.0 into +0.0)
        hits = E.Reduce("max", E.cast("int32", matches(rv)), tuple(rv), "int32")
        return E.select(hits > E.const(0, "int32"), data_value + total, data_value)
    ident = E.min_value(dtype) if mode == "max" else E.max_value(dtype)
    src = E.select(matches(rv), update_at(where), ident)
    best = E.Reduce(mode, src, tuple(rv), dtype)
    return E.Max(data_value, best) if mode == "max" else E.Min(data_value, best)


class _Matcher:
    """Callable ``matches(rv)``; ``at(index)`` tests a position given as index exprs."""

    def __init__(self, extents, test):
        self.extents = extents
        self.test = test

    def rvars(self):
        return [te.reduce_axis(d, f"u{k}") for k, d in enumerate(self.extents)]

    def __call__(self, rv):
        return self.test(tuple(r.var for r in rv))

    def at(self, index):
        return self.test(tuple(index))


@COMPUTE.register("scatter_elements")
def scatter_elements(attrs, inputs, out):
    data, indices, updates = inputs
    axis = norm_axis(attrs.axis, data.ndim)

    def fn(*i):
        inside = [i[k] < indices.shape[k] for k in range(data.ndim) if k != axis]

        def position(k):  # the indices position (clamped) for reduce value k on axis
            return tuple(k if d == axis else E.Min(i[d], indices.shape[d] - 1)
                         for d in range(data.ndim))

        def test(where):
            hit = E.equal(fix_index(indices[position(where[0])], data.shape[axis]), i[axis])
            return E.logical_and(*inside, hit) if inside else hit

        matches = _Matcher([indices.shape[axis]], test)
        return _combine(attrs.reduction, data[i], matches,
                        lambda where: updates[position(where[0])], data.dtype)

    return compute(out.shape, fn, name="scatter_elements", tag="reduce")


@COMPUTE.register("scatter_nd")
def scatter_nd(attrs, inputs, out):
    data, indices, updates = inputs
    m = int(E.const_value(indices.shape[0]))
    ys = indices.shape[1:]

    def fn(*i):
        def test(where):
            hits = [E.equal(fix_index(indices[(E.IntImm(k),) + tuple(where)], data.shape[k]),
                            i[k]) for k in range(m)]
            return E.logical_and(*hits)

        matches = _Matcher(list(ys), test)
        return _combine(attrs.mode, data[i], matches,
                        lambda where: updates[tuple(where) + i[m:]], data.dtype)

    return compute(out.shape, fn, name="scatter_nd", tag="reduce")


@COMPUTE.register("segment_sum")
def segment_sum(attrs, inputs, out):
    """Each output row sums the data rows whose id names it (a scatter-add written from
    the output's side); an id outside ``[0, num_segments)`` names no row."""
    data, ids = inputs
    acc = float_acc(out.dtype)

    def fn(*i):
        r = te.reduce_axis(ids.shape[0], "u0")
        hit = E.equal(E.cast(E.INDEX, ids[(r.var,)]), i[0])
        src = E.select(hit, E.cast(acc, data[(r.var,) + i[1:]]), E.const(0, acc))
        return E.Reduce("sum", src, (r,), out.dtype, acc)

    return compute(out.shape, fn, name="segment_sum", tag="reduce")


@COMPUTE.register("sparse_to_dense")
def sparse_to_dense(attrs, inputs, out):
    """The values scattered over the default value ("update": a repeated index keeps
    its last value); indices wrap and clamp as the scatters' do."""
    indices, values, default = inputs
    n = len(out.shape)

    def coordinate(where, k):
        if indices.ndim == 0:
            return indices[()]
        return indices[(where[0],) if indices.ndim == 1 else (where[0], E.IntImm(k))]

    def value(where):
        return values[()] if values.ndim == 0 else values[(where[0],)]

    def fn(*i):
        def test(where):
            return E.logical_and(*[E.equal(fix_index(coordinate(where, k), out.shape[k]), i[k])
                                   for k in range(n)])

        matches = _Matcher([] if indices.ndim == 0 else [indices.shape[0]], test)
        return _combine("update", default[()], matches, value, out.dtype)

    return compute(out.shape, fn, name="sparse_to_dense", tag="reduce")
