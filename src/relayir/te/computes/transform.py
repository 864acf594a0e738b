"""Computes of the transform ops (``op/transform/``, ``layout_transform``, and
``nn.pad`` / ``nn.batch_flatten``): each one is an index mapping from the output to
its input(s), so lowering inlines it into whatever reads it.
"""

from __future__ import annotations

from ...op.layout import parse_layout
from ...op.transform import slice_plan, slice_range, transpose_perm
from ...op.transform.replicate import meshgrid_axes
from ...op.type_rel import check_insert_axis
from .. import expr as E
from ..tensor import compute
from .common import COMPUTE, broadcast_read, norm_axis, ravel, static, unravel


def _injective(out, fn, name: str):
    return compute(out.shape, fn, name=name, tag="injective")


def _reshape_like(attrs, inputs, out, name="reshape"):
    x = inputs[0]
    return _injective(out, lambda *i: x[unravel(ravel(i, out.shape), x.shape)], name)


COMPUTE.register("reshape")(_reshape_like)
COMPUTE.register("reshape_like")(  # the second input gives only the output's shape
    lambda attrs, inputs, out: _reshape_like(attrs, inputs, out, "reshape_like"))
COMPUTE.register("nn.batch_flatten")(
    lambda attrs, inputs, out: _reshape_like(attrs, inputs, out, "batch_flatten"))


@COMPUTE.register("transpose")
def transpose(attrs, inputs, out):
    x = inputs[0]
    perm = transpose_perm(x.ndim, attrs)

    def fn(*i):
        idx = [None] * x.ndim
        for k, p in enumerate(perm):
            idx[p] = i[k]
        return x[tuple(idx)]

    return _injective(out, fn, "transpose")


@COMPUTE.register("squeeze")
def squeeze(attrs, inputs, out):
    x = inputs[0]
    if attrs.axis is None:
        axes = {k for k, d in enumerate(x.shape) if static(d) == 1}
    else:
        axes = {norm_axis(a, x.ndim) for a in attrs.axis}

    def fn(*i):
        it = iter(i)
        return x[tuple(E.IntImm(0) if k in axes else next(it) for k in range(x.ndim))]

    return _injective(out, fn, "squeeze")


@COMPUTE.register("expand_dims")
def expand_dims(attrs, inputs, out):
    x = inputs[0]
    axis = check_insert_axis(attrs.axis, x.ndim)
    n = attrs.num_newaxis
    return _injective(out, lambda *i: x[i[:axis] + i[axis + n:]], "expand_dims")


def _chain(cases, default):
    """``select(c0, v0, select(c1, v1, ... default))``."""
    out = default
    for cond, value in reversed(cases):
        out = E.select(cond, value, out)
    return out


@COMPUTE.register("concatenate")
def concatenate(attrs, inputs, out):
    xs = inputs[0]
    axis = norm_axis(attrs.axis, xs[0].ndim)

    def fn(*i):
        cases, offset = [], E.IntImm(0)
        for x in xs:
            idx = i[:axis] + (i[axis] - offset,) + i[axis + 1:]
            cases.append((i[axis] < offset + x.shape[axis], x[idx]))
            offset = offset + x.shape[axis]
        return _chain(cases[:-1], cases[-1][1])

    return _injective(out, fn, "concatenate")


@COMPUTE.register("stack")
def stack(attrs, inputs, out):
    xs = inputs[0]
    axis = check_insert_axis(attrs.axis, xs[0].ndim)

    def fn(*i):
        rest = i[:axis] + i[axis + 1:]
        cases = [(E.equal(i[axis], k), x[rest]) for k, x in enumerate(xs)]
        return _chain(cases[:-1], cases[-1][1])

    return _injective(out, fn, "stack")


@COMPUTE.register("split")
def split(attrs, inputs, out):
    x = inputs[0]
    axis = norm_axis(attrs.axis, x.ndim)
    parts, offset = [], E.IntImm(0)
    for k, o in enumerate(out):
        def fn(*i, off=offset):
            return x[i[:axis] + (i[axis] + off,) + i[axis + 1:]]

        parts.append(compute(o.shape, fn, name=f"split{k}", tag="injective"))
        offset = offset + o.shape[axis]
    return parts


@COMPUTE.register("meshgrid")
def meshgrid(attrs, inputs, out):
    """Grid k reads input k at the output index of the axis it runs along."""
    xs = inputs[0]
    grids = []
    for k, (x, axis) in enumerate(zip(xs, meshgrid_axes(len(xs), attrs.indexing))):
        def fn(*i, x=x, axis=axis):
            return x[(i[axis],) if x.ndim else ()]

        grids.append(compute(out[k].shape, fn, name=f"meshgrid{k}", tag="injective"))
    return grids


@COMPUTE.register("unravel_index")
def unravel_index(attrs, inputs, out):
    """Coordinate k is (position // the product of the later extents) mod extent k, the
    shape read at run time (an extent below 1 reads as 1: no division by zero)."""
    indices, shape = inputs
    n = E.const_value(shape.shape[0])
    if n is None:  # one select per axis: their number must be known (fuzz seed 131517)
        raise E.TEError("unravel_index of a shape whose length is a symbolic dimension")
    n = int(n)

    def extent(j):
        return E.Max(shape[(E.IntImm(j),)], E.const(1, shape.dtype))

    def fn(k, *i):
        pos = indices[tuple(i)]
        cases = []
        for j in range(n):  # the coordinate of axis j, chosen by the output row k
            stride = E.const(1, shape.dtype)
            for later in range(j + 1, n):
                stride = stride * extent(later)
            cases.append((j, E.truncmod(E.truncdiv(pos, stride), extent(j))))
        value = cases[-1][1]
        for j, v in reversed(cases[:-1]):
            value = E.select(E.equal(k, E.IntImm(j)), v, value)
        return value

    return compute(out.shape, fn, name="unravel_index", tag="injective")


@COMPUTE.register("strided_slice")
def strided_slice(attrs, inputs, out):
    x = inputs[0]
    starts = {}
    for axis, b, e, s in slice_plan(x.shape, attrs):
        d = E.const_value(x.shape[axis])
        if d is not None:
            r = slice_range(int(d), b, e, s, attrs.slice_mode)
            starts[axis] = (r.start, r.step)
        elif s < 0:
            raise E.TEError("strided_slice with a negative stride along a symbolic dimension "
                            "is not supported by the C backend yet")
        else:  # where a non-empty slice starts (an empty one reads nothing)
            starts[axis] = (b if b >= 0 else E.Max(x.shape[axis] + b, E.IntImm(0)),
                            1 if attrs.slice_mode == "size" else s)

    def fn(*i):
        idx = []
        for k in range(x.ndim):
            start, step = starts.get(k, (0, 1))
            idx.append(i[k] * step + start)
        return x[tuple(idx)]

    return _injective(out, fn, "strided_slice")


def _fix_index(value: E.Expr, n: E.Expr, mode: str) -> E.Expr:
    """A gathered index made safe: clip or wrap (``fast`` clips too: never read out of
    bounds, and a valid index is unchanged)."""
    i = E.cast(E.INDEX, value)
    if mode == "wrap":
        return E.FloorMod(i, n)
    return E.Max(E.Min(i, n - 1), E.IntImm(0))


@COMPUTE.register("take")
def take(attrs, inputs, out):
    data, indices = inputs
    if attrs.axis is None:
        size = E.IntImm(1)
        for d in data.shape:
            size = size * d

        def flat(*i):
            return data[unravel(_fix_index(indices[i], size, attrs.mode), data.shape)]

        return _injective(out, flat, "take")
    axis = norm_axis(attrs.axis, data.ndim)
    bd = attrs.batch_dims + indices.ndim if attrs.batch_dims < 0 else attrs.batch_dims
    ni = indices.ndim - bd

    def fn(*i):
        pos = indices[i[:bd] + i[axis:axis + ni]]
        j = _fix_index(pos, data.shape[axis], attrs.mode)
        return data[i[:axis] + (j,) + i[axis + ni:]]

    return _injective(out, fn, "take")


@COMPUTE.register("broadcast_to")
def broadcast_to(attrs, inputs, out):
    x = inputs[0]
    return compute(out.shape, lambda *i: broadcast_read(x, i, out.shape), name="broadcast_to",
                   tag="broadcast")


@COMPUTE.register("tile")
def tile(attrs, inputs, out):
    x = inputs[0]
    lead = len(out.shape) - x.ndim
    return _injective(
        out, lambda *i: x[tuple(E.truncmod(i[lead + k], d) for k, d in enumerate(x.shape))],
        "tile")


@COMPUTE.register("repeat")
def repeat(attrs, inputs, out):
    x = inputs[0]
    axis = norm_axis(attrs.axis, x.ndim)
    return _injective(
        out, lambda *i: x[i[:axis] + (E.truncdiv(i[axis], attrs.repeats),) + i[axis + 1:]],
        "repeat")


@COMPUTE.register("reverse")
def reverse(attrs, inputs, out):
    x = inputs[0]
    axis = norm_axis(attrs.axis, x.ndim)
    return _injective(
        out, lambda *i: x[i[:axis] + (x.shape[axis] - 1 - i[axis],) + i[axis + 1:]],
        "reverse")


@COMPUTE.register("layout_transform")
def layout_transform(attrs, inputs, out):
    x = inputs[0]
    src, dst = parse_layout(attrs.src_layout), parse_layout(attrs.dst_layout)

    def fn(*i):
        pos = dict(zip(dst.letters, i))
        coord = {}
        for a in dst.primal:  # the primal coordinate each output index stands for
            f = dst.factor(a)
            coord[a] = pos[a] * f + pos[a.lower()] if f else pos[a]
        idx = []
        for a, f in src.axes:
            if f is not None:
                idx.append(E.truncmod(coord[a.upper()], f))
            else:
                block = src.factor(a)
                idx.append(E.truncdiv(coord[a], block) if block else coord[a])
        return x[tuple(idx)]

    return _injective(out, fn, "layout_transform")


@COMPUTE.register("nn.pad")
def pad(attrs, inputs, out):
    x, value = inputs
    mode = attrs.pad_mode

    def fn(*i):
        idx, inside = [], []
        for k, (before, _after) in enumerate(attrs.pad_width):
            j, d = i[k] - before, x.shape[k]
            if mode == "constant":
                if before or _after:
                    inside += [j >= 0, j < d]
                idx.append(j)
            elif mode == "edge":
                idx.append(E.Max(E.Min(j, d - 1), E.IntImm(0)))
            else:  # reflect, without repeating the edge
                j = E.select(j < 0, -j, j)
                idx.append(E.select(j >= d, (d - 1) * 2 - j, j))
        read = x[tuple(idx)]
        if not inside:
            return read
        return E.select(E.logical_and(*inside), read, value[()])

    return _injective(out, fn, "pad")
