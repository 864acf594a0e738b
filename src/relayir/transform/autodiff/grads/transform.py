"""Gradients of shape, indexing and selection ops (``op/transform/``, ``op/layout.py``)."""

from __future__ import annotations

import numpy as np

from ....errors import Error
from ....ir.expr import TupleGetItem, const
from ....op import nn as _nn
from ....op import reduce as _r
from ....op import tensor as _e
from ....op import transform as _t
from ....op.layout import layout_transform
from ....op.transform import slice_plan, slice_range
from ....op.transform import split as _split
from ....op.transform.replicate import meshgrid_axes
from . import GRADIENT
from ._util import collapse_like, dilate, dtype_of, pad_crop, scalar, shape_of

# integer coordinates
NON_DIFFERENTIABLE = frozenset({"unravel_index"})


@GRADIENT.register("reshape", "squeeze", "expand_dims", "nn.batch_flatten")
def _reshape(call, out, g):
    return [_t.reshape(g, shape_of(call.args[0]))]


@GRADIENT.register("reshape_like")
def _reshape_like(call, out, g):
    return [_t.reshape(g, shape_of(call.args[0])), None]


@GRADIENT.register("meshgrid")
def _meshgrid(call, out, g):
    """Input k gets its grid's adjoint summed over the other axes."""
    fields = call.args[0].checked_type.fields
    axes = meshgrid_axes(len(fields), call.attrs.indexing)
    sums = [_r.sum(gk, axis=[a for a in range(len(fields)) if a != ax])
            for gk, ax in zip(g, axes)]
    return [[_t.reshape(gk, tuple(int(d) for d in f.shape)) for gk, f in zip(sums, fields)]]


@GRADIENT.register("transpose")
def _transpose(call, out, g):
    n = len(shape_of(call.args[0]))
    axes = call.attrs.axes
    perm = list(range(n))[::-1] if axes is None else [a % n for a in axes]
    inv = [0] * n
    for i, p in enumerate(perm):
        inv[p] = i
    return [_t.transpose(g, inv)]


@GRADIENT.register("concatenate")
def _concatenate(call, out, g):
    fields = call.args[0].checked_type.fields
    n = len(shape_of(call))
    axis = call.attrs.axis % n
    sizes = [int(f.shape[axis]) for f in fields]
    idx = list(np.cumsum(sizes)[:-1])
    if len(fields) == 1:
        return [[g]]
    parts = _split(g, [int(i) for i in idx], axis)
    return [[TupleGetItem(parts, i) for i in range(len(fields))]]


@GRADIENT.register("stack")
def _stack(call, out, g):
    fields = call.args[0].checked_type.fields
    axis = call.attrs.axis % len(shape_of(call))
    parts = _split(g, len(fields), axis)
    return [[_t.squeeze(TupleGetItem(parts, i), [axis]) for i in range(len(fields))]]


@GRADIENT.register("split")
def _split_grad(call, out, g):
    axis = call.attrs.axis % len(shape_of(call.args[0]))
    return [_t.concatenate(list(g), axis)]


@GRADIENT.register("strided_slice")
def _strided_slice(call, out, g):
    x = call.args[0]
    shape = list(shape_of(x))
    cur = list(shape_of(call))
    dtype = dtype_of(x)
    for axis, begin, end, stride in slice_plan(tuple(shape), call.attrs):
        r = slice_range(shape[axis], begin, end, stride, call.attrs.slice_mode)
        if len(r) == 0:
            return [_t.zeros(tuple(shape), dtype)]
        if r.step < 0:
            g = _t.reverse(g, axis)
            start, step = r[-1], -r.step
        else:
            start, step = r.start, r.step
        g = dilate(g, tuple(cur), axis, step, dtype)
        length = (len(r) - 1) * step + 1
        pads = [(0, 0)] * len(shape)
        pads[axis] = (start, shape[axis] - start - length)
        cur[axis] = length
        g = pad_crop(g, tuple(cur), pads, 0.0, dtype)
        cur[axis] = shape[axis]
    return [g]


@GRADIENT.register("take")
def _take(call, out, g):
    data, indices = call.args
    a = call.attrs
    if a.batch_dims:
        raise Error("gradient of take: batch_dims > 0 is not supported")
    dshape, ishape = shape_of(data), shape_of(indices)
    dtype = dtype_of(data)
    if a.axis is None:
        flat = (int(np.prod(dshape)),)
        sub = _take_grad(g, indices, flat, ishape, 0, a.mode, dtype)
        return [_t.reshape(sub, dshape), None]
    return [_take_grad(g, indices, dshape, ishape, a.axis % len(dshape), a.mode, dtype), None]


def _take_grad(g, indices, dshape, ishape, axis, mode, dtype):
    n = dshape[axis]
    pre = int(np.prod(dshape[:axis]))
    post = int(np.prod(dshape[axis + 1:]))
    ni = int(np.prod(ishape))
    idx = _t.reshape(indices, (ni,))
    idx_dtype = dtype_of(indices)
    if mode == "clip":
        idx = _t.clip(idx, 0, n - 1)
    elif mode == "wrap":
        idx = _e.floor_mod(idx, const(n, idx_dtype))
    onehot = _t.cast(_e.equal(_t.expand_dims(idx, 1), const(np.arange(n).astype(idx_dtype))),
                     dtype)  # (ni, n)
    g3 = _t.reshape(g, (pre, ni, post))
    g2 = _t.reshape(_t.transpose(g3, (0, 2, 1)), (pre * post, ni))
    d = _nn.dense(g2, _t.transpose(onehot, (1, 0)))  # (pre*post, n)
    d = _t.transpose(_t.reshape(d, (pre, post, n)), (0, 2, 1))
    return _t.reshape(d, dshape)


@GRADIENT.register("cast")
def _cast(call, out, g):
    return [_t.cast(g, dtype_of(call.args[0]))]


@GRADIENT.register("clip")
def _clip(call, out, g):
    x = call.args[0]
    inside = _e.logical_and(_e.greater_equal(x, scalar(call.attrs.a_min, x)),
                            _e.less_equal(x, scalar(call.attrs.a_max, x)))
    return [_t.where(inside, g, scalar(0.0, x))]


@GRADIENT.register("where")
def _where(call, out, g):
    c, x, y = call.args
    zero = scalar(0.0, call)
    return [None, collapse_like(_t.where(c, g, zero), call, x),
            collapse_like(_t.where(c, zero, g), call, y)]


@GRADIENT.register("full")
def _full(call, out, g):
    return [_t.reshape(_r.sum(g), shape_of(call.args[0]))]


@GRADIENT.register("full_like")
def _full_like(call, out, g):
    return [None, _t.reshape(_r.sum(g), shape_of(call.args[1]))]


@GRADIENT.register("broadcast_to")
def _broadcast_to(call, out, g):
    return [collapse_like(g, call, call.args[0])]


@GRADIENT.register("tile")
def _tile(call, out, g):
    x = call.args[0]
    shape = shape_of(x)
    reps = tuple(call.attrs.reps)
    n = max(len(shape), len(reps))
    full_shape = (1,) * (n - len(shape)) + shape
    full_reps = (1,) * (n - len(reps)) + reps
    inter = [v for r, d in zip(full_reps, full_shape) for v in (r, d)]
    g = _r.sum(_t.reshape(g, tuple(inter)), axis=list(range(0, 2 * n, 2)))
    return [_t.reshape(g, shape)]


@GRADIENT.register("repeat")
def _repeat(call, out, g):
    x = call.args[0]
    shape = shape_of(x)
    axis = call.attrs.axis % len(shape)
    inter = (*shape[:axis + 1], call.attrs.repeats, *shape[axis + 1:])
    return [_r.sum(_t.reshape(g, inter), axis=[axis + 1])]


@GRADIENT.register("reverse")
def _reverse(call, out, g):
    return [_t.reverse(g, call.attrs.axis)]


@GRADIENT.register("layout_transform")
def _layout_transform(call, out, g):
    return [layout_transform(g, call.attrs.dst_layout, call.attrs.src_layout)]
