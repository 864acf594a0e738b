"""Shape and indexing ops: view/reshape, permute, squeeze, expand, slicing, cat, split."""

from __future__ import annotations

import numpy as np

from ...ir.expr import TupleGetItem, const
from ...op import dynamic as D
from ...op import nn as N
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import (
    axis,
    cast_to,
    current_import,
    dtype,
    is_symbolic,
    ndim,
    out_shape,
    out_shape_expr,
    reshape_to,
    shape,
    static,
    sym_expr,
)

TABLE = ConverterTable()
_BIG = 2**62


@TABLE.register("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
                "aten.view_copy.default", "aten.flatten.using_ints", "aten.unflatten.int",
                "aten.view_as.default", "aten.reshape_as.default")
def view(self, *_):
    return reshape_to(self, out_shape())


@TABLE.register("aten.contiguous.default", "aten.clone.default", "aten.detach.default",
                "aten.alias.default", "aten.lift_fresh_copy.default", "aten.detach_.default",
                "aten.positive.default", "aten.resolve_conj.default", "aten.resolve_neg.default")
def identity(self, *_, **__):
    return self


@TABLE.register("aten.permute.default")
def permute(self, dims):
    n = ndim(self)
    return T.transpose(self, [axis(int(d), n) for d in dims])


@TABLE.register("aten.transpose.int", "aten.swapaxes.default", "aten.swapdims.default")
def transpose(self, dim0, dim1):
    n = ndim(self)
    perm = list(range(n))
    a, b = axis(int(dim0), n), axis(int(dim1), n)
    if a == b:
        return self
    perm[a], perm[b] = perm[b], perm[a]
    return T.transpose(self, perm)


@TABLE.register("aten.t.default", "aten.numpy_T.default")
def t(self):
    return self if ndim(self) < 2 else T.transpose(self)


@TABLE.register("aten.unsqueeze.default", "aten.unsqueeze_.default")
def unsqueeze(self, dim):
    return T.expand_dims(self, axis(int(dim), ndim(self) + 1))


@TABLE.register("aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
                "aten.squeeze_.dim")
def squeeze(self, dim=None):
    xs = shape(self)
    dims = range(len(xs)) if dim is None else dim if isinstance(dim, (list, tuple)) else [dim]
    axes = sorted({axis(int(d), len(xs)) for d in dims if xs[axis(int(d), len(xs))] == 1})
    return T.squeeze(self, axes) if axes else self


@TABLE.register("aten.expand.default", "aten.expand_as.default", "aten.broadcast_to.default")
def expand(self, *_, **__):
    target = out_shape()
    if target == shape(self):
        return self
    if not static(*target):
        return _expand_symbolic(self, target)
    return T.broadcast_to(self, target)


def _expand_symbolic(x, target):
    """Expand to a shape with symbolic extents. A size-1 axis grows to a static extent
    by ``repeat`` and to an input's dim ``s`` by broadcasting against ones of shape
    ``(s,)`` read off that input, so the result keeps its static and named extents
    (a mask expanded to ``(1, 1, seq, seq)``); ``x * 1`` keeps every value, -0.0 and NaN
    included. Other symbolic targets: ``dyn.broadcast_to`` (extents unknown until run)."""
    sources = current_import().sym_source
    src = (1,) * (len(target) - ndim(x)) + shape(x)
    if any(not isinstance(d, int) and d != have and d not in sources
           for d, have in zip(target, src)):
        return D.broadcast_to(x, out_shape_expr())
    if len(target) > ndim(x):
        x = T.expand_dims(x, 0, len(target) - ndim(x))
    for i, (d, have) in enumerate(zip(target, src)):
        if d == have:
            continue
        if isinstance(d, int):
            x = T.repeat(x, d, i)
            continue
        tensor, ax = sources[d]
        row = tensor
        for a in reversed(range(ndim(tensor))):
            if a != ax:
                row = T.take(row, const(np.int64(0)), axis=a)
        ones = T.ones_like(T.cast(row, dtype(x)))
        if i:
            ones = T.expand_dims(ones, 0, i)
        if len(target) - 1 - i:
            ones = T.expand_dims(ones, i + 1, len(target) - 1 - i)
        x = E.logical_and(x, ones) if dtype(x) == "bool" else E.multiply(x, ones)
    return x


@TABLE.register("aten.repeat.default")
def repeat(self, repeats):
    return T.tile(self, [int(r) for r in repeats])


@TABLE.register("aten.repeat_interleave.self_int")
def repeat_interleave(self, repeats, dim=None, output_size=None):
    if dim is None:
        return T.repeat(T.reshape(self, [-1]), int(repeats), 0)
    return T.repeat(self, int(repeats), axis(int(dim), ndim(self)))


def _slice(x, dim, start, end, step):
    d = axis(int(dim), ndim(x))
    if is_symbolic(start) or is_symbolic(end):  # table[:x.shape[1]]: bounds at run time
        return _run_time_slice(x, d, start, end, step)
    size = shape(x)[d]
    start = 0 if start is None else int(start)
    end = _BIG if end is None else int(end)
    if isinstance(size, int):
        start = min(max(start + size if start < 0 else start, 0), size)
        end = min(max(end + size if end < 0 else end, 0), size)
        if start == 0 and end == size and step == 1:
            return x
    elif start < 0 or end < 0:
        raise ConversionError("a negative slice bound on a dynamic dimension")
    return T.strided_slice(x, [start], [min(end, 2**31 - 1)], [int(step)], axes=[d])


def _run_time_slice(x, d, start, end, step):
    """A slice whose bounds are symbolic sizes: ``dyn.strided_slice`` with the bounds
    computed from the inputs' shapes when the model runs (a negative bound counts from
    the end, as torch's does; the reference clamps to the extent)."""
    def bound(v, default):
        if v is None:
            return const(np.asarray([default], "int64"))
        return T.reshape(sym_expr(v) if is_symbolic(v) else const(np.asarray(int(v), "int64")),
                         (1,))

    return D.strided_slice(x, bound(start, 0), bound(end, _BIG), const(np.asarray(
        [int(step)], "int64")), axes=[d])


@TABLE.register("aten.slice.Tensor", "aten.slice_copy.Tensor")
def slice_(self, dim=0, start=None, end=None, step=1):
    return _slice(self, dim, start, end, step)


@TABLE.register("aten.narrow.default")
def narrow(self, dim, start, length):
    return _slice(self, dim, start, int(start) + int(length), 1)


@TABLE.register("aten.select.int", "aten.select_copy.int")
def select(self, dim, index):
    d = axis(int(dim), ndim(self))
    index = int(index)
    if index < 0:
        size = shape(self)[d]
        if not isinstance(size, int):
            raise ConversionError("a negative index on a dynamic dimension")
        index += size
    return T.take(self, const(np.int64(index)), axis=d)


@TABLE.register("aten.index_select.default")
def index_select(self, dim, index):
    return T.take(self, index, axis=axis(int(dim), ndim(self)))


@TABLE.register("aten.index.Tensor")
def index(self, indices):
    used = [i for i, v in enumerate(indices) if v is not None]
    if len(used) != 1:
        raise ConversionError("advanced indexing with more than one index tensor")
    i = used[0]
    idx = indices[i]
    if dtype(idx) == "bool":
        raise ConversionError("boolean-mask indexing (data-dependent shape)")
    size = shape(self)[i]
    if isinstance(size, int):  # torch allows negative indices
        idx = T.where(E.less(idx, cast_to(0, dtype(idx))),
                      E.add(idx, cast_to(size, dtype(idx))), idx)
    return T.take(self, idx, axis=i)


@TABLE.register("aten.flip.default")
def flip(self, dims):
    n, x = ndim(self), self
    for d in dims:
        x = T.reverse(x, axis(int(d), n))
    return x


@TABLE.register("aten.roll.default")
def roll(self, shifts, dims=()):
    if not dims:
        raise ConversionError("roll without dims")
    x = self
    for s, d in zip(shifts, dims):
        d = axis(int(d), ndim(self))  # noqa: PLW2901
        n = shape(self)[d]
        s = int(s) % n
        if s:
            x = T.concatenate([T.strided_slice(x, [n - s], [n], axes=[d]),
                               T.strided_slice(x, [0], [n - s], axes=[d])], d)
    return x


@TABLE.register("aten.cat.default", "aten.concat.default", "aten.concatenate.default")
def cat(tensors, dim=0):
    tensors = [t for t in tensors if shape(t) != (0,)]  # torch skips legacy empty inputs
    if len(tensors) == 1:
        return tensors[0]
    return T.concatenate(tensors, axis(int(dim), ndim(tensors[0])))


@TABLE.register("aten.stack.default")
def stack(tensors, dim=0):
    return T.stack(tensors, axis(int(dim), ndim(tensors[0]) + 1))


@TABLE.register("aten.hstack.default")
def hstack(tensors):
    return cat(tensors, 0 if ndim(tensors[0]) == 1 else 1)


def _split_at(x, sizes, dim):
    d = axis(int(dim), ndim(x))
    bounds = list(np.cumsum(sizes)[:-1])
    if not bounds:
        return [x]
    parts = T.split(x, [int(b) for b in bounds], d)
    return [TupleGetItem(parts, i) for i in range(len(sizes))]


@TABLE.register("aten.split.Tensor", "aten.split_copy.Tensor")
def split(self, split_size, dim=0):
    n = shape(self)[axis(int(dim), ndim(self))]
    if isinstance(split_size, (list, tuple)):
        return _split_at(self, split_size, dim)
    s = int(split_size)
    return _split_at(self, [min(s, n - i) for i in range(0, n, s)], dim)


@TABLE.register("aten.split_with_sizes.default", "aten.split.sizes")
def split_with_sizes(self, split_sizes, dim=0):
    return _split_at(self, [int(s) for s in split_sizes], dim)


@TABLE.register("aten.chunk.default")
def chunk(self, chunks, dim=0):
    n = shape(self)[axis(int(dim), ndim(self))]
    size = -(-n // int(chunks))
    return split(self, size, dim)


@TABLE.register("aten.tensor_split.sections")
def tensor_split(self, sections, dim=0):
    n = shape(self)[axis(int(dim), ndim(self))]
    k = int(sections)
    return _split_at(self, [n // k + (1 if i < n % k else 0) for i in range(k)], dim)


@TABLE.register("aten.unbind.int")
def unbind(self, dim=0):
    d = axis(int(dim), ndim(self))
    parts = _split_at(self, [1] * shape(self)[d], d)
    return [T.squeeze(p, [d]) for p in parts]


def _pad_width(x, pad):
    n = ndim(x)
    width = [[0, 0] for _ in range(n)]
    for i in range(len(pad) // 2):
        width[n - 1 - i] = [int(pad[2 * i]), int(pad[2 * i + 1])]
    return width


@TABLE.register("aten.constant_pad_nd.default")
def constant_pad_nd(self, pad, value=0):
    if any(int(p) < 0 for p in pad):
        raise ConversionError("negative padding (cropping)")
    return N.pad(self, _pad_width(self, pad), cast_to(value, dtype(self)))


@TABLE.register("aten.pad.default")
def pad(self, pad, mode="constant", value=None):
    if mode == "constant":
        return constant_pad_nd(self, pad, 0 if value is None else value)
    modes = {"reflect": "reflect", "replicate": "edge"}
    if mode not in modes:
        raise ConversionError(f"pad mode {mode!r}")
    return N.pad(self, _pad_width(self, pad), cast_to(0, dtype(self)), pad_mode=modes[mode])


for _mode, _relay in [("reflection", "reflect"), ("replication", "edge")]:
    for _n in (1, 2):
        def _padder(self, padding, _relay=_relay):
            return N.pad(self, _pad_width(self, padding), cast_to(0, dtype(self)),
                         pad_mode=_relay)

        TABLE.register(f"aten.{_mode}_pad{_n}d.default")(_padder)


@TABLE.register("aten.meshgrid.default", "aten.meshgrid.indexing")
def meshgrid(tensors, indexing="ij"):
    """Each 1-D input spread along its own axis of the grid (``xy``: the first two axes
    swapped, as numpy's). The spreading is a broadcast against zeros of the other
    inputs, so symbolic sizes (a detection head's ``arange(h)``) stay symbolic."""
    if indexing not in ("ij", "xy"):
        raise ConversionError(f"meshgrid indexing {indexing!r}")
    xs = [T.reshape(t, (1,)) if ndim(t) == 0 else t for t in tensors]
    n = len(xs)
    place = list(range(n))
    if indexing == "xy" and n >= 2:
        place[0], place[1] = 1, 0

    def spread(t, at):
        if at:
            t = T.expand_dims(t, 0, at)
        return T.expand_dims(t, at + 1, n - 1 - at) if n - 1 - at else t

    spread_all = [spread(x, place[i]) for i, x in enumerate(xs)]
    out = []
    for i, x in enumerate(spread_all):
        for j, other in enumerate(spread_all):
            if j != i:
                x = E.add(x, T.zeros_like(cast_to(other, dtype(tensors[i]))))
        out.append(x)
    return out
