"""Shape manipulation: Reshape, Flatten, Transpose, (Un)Squeeze, Concat, Split, Slice,
Gather, Expand, Tile, Pad, Shape, ConstantOfShape, Constant.

A shape-like input (``Reshape``'s shape, ``Tile``'s repeats, ``Slice``'s starts...) that
is constant, or folds to one, gives the static op; one known only at run time gives the
``dyn.*`` op (result extents ``Any``). So do the axes of (Un)Squeeze and Split's sizes
(``op/dynamic_params.py``): their static length fixes the result's rank or the number of
parts, their values are read when the model runs. An input without a static length
must be known (``base.ints`` raises ``ConstantInputRequired`` naming the graph inputs)."""

from __future__ import annotations

import numpy as np

from ...ir.expr import Expr, TupleGetItem, const
from ...op import dynamic as D
from ...op import dynamic_params as DP
from ...op import nn as N
from ...op import reduce as R
from ...op import scatter as S
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import (
    OnnxTable,
    axis,
    constant_value,
    dtype,
    ints,
    ints_or_none,
    ndim,
    run_time,
    shape,
    ttype,
)

TABLE = OnnxTable()


def _static(x, what):
    s = shape(x)
    if not all(isinstance(d, int) for d in s):
        raise ConversionError(f"{what} of a dynamic shape not supported yet")
    return s


@TABLE.register("Reshape")
def reshape_v1(x, shape=None, **_):  # noqa: A002
    return T.reshape(x, list(shape))


def _int64(x):
    return x if dtype(x) == "int64" else T.cast(x, "int64")


@TABLE.register("Reshape", since=5)
def reshape(x, new_shape, allowzero=0):
    """ONNX's 0 (copy the input's extent unless ``allowzero``) and -1 are Relay's."""
    target = ints_or_none(new_shape)
    if target is None:
        return D.reshape(x, _int64(new_shape), allowzero=bool(allowzero))
    return T.reshape(x, target, allowzero=bool(allowzero) and 0 in target)


@TABLE.register("Flatten")
def flatten(x, axis=1):  # noqa: A002
    s = _static(x, "Flatten")
    a = axis + len(s) if axis < 0 else axis
    return T.reshape(x, (int(np.prod(s[:a], dtype=np.int64)), int(np.prod(s[a:], dtype=np.int64))))


@TABLE.register("Transpose")
def transpose(x, perm=None):
    return T.transpose(x, list(perm) if perm is not None else None)


def _squeeze(x, axes):
    n = ndim(x)
    if axes is None:
        if not all(isinstance(d, int) for d in shape(x)):
            raise ConversionError(f"Squeeze without axes of {ttype(x)}: which run-time "
                                  "extents are 1 decides the result's rank")
        axes = [i for i, d in enumerate(shape(x)) if d == 1]
    return T.squeeze(x, sorted(axis(a, n) for a in axes))


def _unsqueeze(x, axes):
    n = ndim(x) + len(axes)
    for a in sorted(axis(a, n) for a in axes):
        x = T.expand_dims(x, a)
    return x


@TABLE.register("Squeeze")
def squeeze_v1(x, axes=None):
    return _squeeze(x, axes)


@TABLE.register("Squeeze", since=13)
def squeeze(x, axes=None):
    known = ints_or_none(axes) if axes is not None else None
    if axes is None or known is not None:
        return _squeeze(x, known)
    return DP.squeeze(x, T.cast(run_time(axes, "axes"), "int64"))  # picked at run time


@TABLE.register("Unsqueeze")
def unsqueeze_v1(x, axes):
    return _unsqueeze(x, axes)


@TABLE.register("Unsqueeze", since=13)
def unsqueeze(x, axes):
    known = ints_or_none(axes)
    if known is not None:
        return _unsqueeze(x, known)
    return DP.unsqueeze(x, T.cast(run_time(axes, "axes"), "int64"))  # picked at run time


@TABLE.register("Concat")
def concat(*xs, axis=0):  # noqa: A002
    return T.concatenate(list(xs), axis=int(axis))


def _split_run_time(x, a, outputs):
    """Equal parts (the last smaller) of an extent known only at run time."""
    def scalar(v):
        return const(np.asarray(v, "int64"))

    d = T.take(D.shape_of(x), scalar(a))
    step = E.floor_divide(E.add(d, scalar(outputs - 1)), scalar(outputs))
    one = const(np.ones(1, "int64"))
    parts = []
    for k in range(outputs):
        begin = E.minimum(E.multiply(step, scalar(k)), d)
        end = E.minimum(E.multiply(step, scalar(k + 1)), d)
        parts.append(D.strided_slice(x, T.reshape(begin, (1,)), T.reshape(end, (1,)), one,
                                     axes=[a]))
    return tuple(parts)


def _split(x, a, sizes, outputs):
    a = axis(a, ndim(x))
    if sizes is None:
        d = shape(x)[a]
        if not isinstance(d, int):
            return _split_run_time(x, a, outputs)
        step = -(-d // outputs)
        sizes = [min(step, d - i * step) for i in range(outputs)]
    cuts = list(np.cumsum(sizes)[:-1])
    parts = T.split(x, [int(c) for c in cuts], axis=a)
    return tuple(TupleGetItem(parts, i) for i in range(len(sizes)))


@TABLE.register("Split")
def split_v1(x, split=None, axis=0, num_outputs=None, _outputs=1):  # noqa: A002
    sizes = list(split) if isinstance(split, (list, tuple)) else ints(split, "split")
    return _split(x, axis, sizes, _outputs)


@TABLE.register("Split", since=13)
def split(x, split=None, axis=0, num_outputs=None, _outputs=1):  # noqa: A002
    known = ints_or_none(split) if split is not None else None
    if split is None or known is not None:
        return _split(x, axis, known, num_outputs or _outputs)
    sizes = T.cast(run_time(split, "split"), "int64")  # the parts' sizes, at run time
    a = int(axis) + ndim(x) if int(axis) < 0 else int(axis)
    parts = DP.split(x, sizes, axis=a)
    return tuple(TupleGetItem(parts, i) for i in range(shape(sizes)[0]))


@TABLE.register("Slice")
def slice_v1(x, starts, ends, axes=None):
    return _slice(x, starts, ends, axes, None)


@TABLE.register("Slice", since=10)
def slice_(x, starts, ends, axes=None, steps=None):
    b, e, st = ints_or_none(starts), ints_or_none(ends), ints_or_none(steps)
    if axes is not None and ints_or_none(axes) is None:
        return _run_time_axes_slice(x, starts, ends, run_time(axes, "axes"), steps)
    ax = ints(axes, "axes")
    static = all(isinstance(d, int) for d in shape(x))
    if b is not None and e is not None and (steps is None or st is not None) and static:
        return _slice(x, b, e, ax, st)
    n = shape(starts)[0]
    if steps is None:
        steps = const(np.ones(n, "int64"))
    ax = None if ax is None else [axis(a, ndim(x)) for a in ax]
    return D.strided_slice(x, _int64(starts), _int64(ends), _int64(steps), axes=ax)


def _run_time_axes_slice(x, starts, ends, axes, steps):
    """Slice whose axes are read when the model runs: full-rank begin/end/strides are
    scattered together from the listed axes (the others keep their whole extent)."""
    r, n = ndim(x), shape(starts)[0]
    ax = T.cast(axes, "int64")
    ax = T.where(E.less(ax, const(np.asarray(0, "int64"))),
                 E.add(ax, const(np.asarray(r, "int64"))), ax)

    def full(fill, values):
        return S.scatter_elements(const(np.full(r, fill, "int64")), ax, _int64(values))

    steps = const(np.ones(n, "int64")) if steps is None else steps
    return D.strided_slice(x, full(0, starts), full(np.iinfo("int64").max, ends),
                           full(1, steps))


def _slice(x, starts, ends, axes, steps):
    s = _static(x, "Slice")
    axes = list(range(len(starts))) if axes is None else [axis(a, len(s)) for a in axes]
    steps = steps or [1] * len(starts)
    if any(st < 0 for st in steps):  # a reversed slice: gather the indices it picks
        for a, b, e, st in zip(axes, starts, ends, steps):
            ix = np.arange(s[a])[slice(_clamp(b), _clamp(e), st)]
            x = T.take(x, const(ix.astype("int64")), axis=a)
        return x
    begin, end, stride = [0] * len(s), list(s), [1] * len(s)
    for a, b, e, st in zip(axes, starts, ends, steps):
        begin[a], end[a], stride[a] = slice(_clamp(b), _clamp(e), st).indices(s[a])
    return T.strided_slice(x, begin, end, stride)


def _clamp(v):
    return max(min(int(v), 2**62), -(2**62))


@TABLE.register("Gather")
def gather(x, indices, axis=0):  # noqa: A002  (shadows base.axis here)
    """Negative indices count from the end: constant ones are fixed here, run-time ones
    take modulo the extent (``mode="wrap"``, the same for in-range indices)."""
    a = axis + ndim(x) if axis < 0 else axis  # noqa: F823
    idx = constant_value(indices)
    if idx is None:
        return T.take(x, indices, axis=a, mode="wrap")
    idx = np.asarray(idx).astype("int64")
    idx = np.where(idx < 0, idx + shape(x)[a], idx)
    return T.take(x, const(idx), axis=a)


@TABLE.register("Expand")
def expand(x, new_shape):
    """Bidirectional broadcast: the result's shape is broadcast(x's shape, new_shape)."""
    target = ints_or_none(new_shape)
    s = shape(x)
    if target is not None and all(isinstance(d, int) for d in s):
        return T.broadcast_to(x, list(np.broadcast_shapes(tuple(s), tuple(target))))
    want = _int64(new_shape) if target is None else const(np.asarray(target, "int64"))
    have = D.shape_of(x)
    n, m = len(s), shape(want)[0]
    ones = const(np.ones(abs(n - m), "int64"))
    if m < n:
        want = T.concatenate([ones, want], 0)
    elif n < m:
        have = T.concatenate([ones, have], 0)
    # where x's extent is 1 the target's counts, elsewhere x's (the target's is 1 or equal)
    out = T.where(E.equal(have, const(np.asarray(1, "int64"))), want, have)
    return D.broadcast_to(x, out)


@TABLE.register("Tile")
def tile(x, repeats, *_, **__):
    reps = ints_or_none(repeats)
    return D.tile(x, _int64(repeats)) if reps is None else T.tile(x, reps)


def _wrap(x, width):
    """Periodic padding: the last ``before`` and the first ``after`` entries of each axis
    are copied around it."""
    for a, (b, e) in enumerate(width):
        parts = [x]
        if b:
            parts.insert(0, T.strided_slice(x, [-b], [2**62], axes=[a]))
        if e:
            parts.append(T.strided_slice(x, [0], [e], axes=[a]))
        x = T.concatenate(parts, a) if len(parts) > 1 else x
    return x


def _pad(x, pads, pad_value, mode):
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise ConversionError(f"Pad mode {mode!r} not supported yet")
    n = ndim(x)
    width = [(int(pads[i]), int(pads[i + n])) for i in range(n)]
    if mode == "wrap" and all(b >= 0 and e >= 0 for b, e in width):
        return _wrap(x, width)
    if any(b < 0 or e < 0 for b, e in width):  # negative pads crop
        begin = [max(-b, 0) for b, _ in width]
        end = [e if e < 0 else 2**62 for _, e in width]
        x = T.strided_slice(x, begin, end)
        width = [(max(b, 0), max(e, 0)) for b, e in width]
    if not isinstance(pad_value, Expr):
        pad_value = const(np.asarray(pad_value, dtype(x)))
    return N.pad(x, width, pad_value=pad_value, pad_mode=mode)


@TABLE.register("Pad")
def pad_v2(x, pads=None, paddings=None, mode="constant", value=0.0):
    return _pad(x, pads if pads is not None else paddings, float(value), mode)


@TABLE.register("Pad", since=11)
def pad(x, pads, fill_value=None, axes=None, mode="constant"):
    n = ndim(x)
    fill = const(np.zeros((), dtype(x))) if fill_value is None else T.reshape(fill_value, ())
    p = ints(pads, "pads") if mode == "wrap" else ints_or_none(pads)
    ax = None if axes is None else [axis(a, n) for a in ints(axes, "axes")]
    if p is None:
        width = T.reshape(_int64(pads), (2, -1))
        if ax is not None:  # scatter the per-axis widths into a (2, n) table
            width = T.take(T.concatenate([const(np.zeros((2, 1), "int64")), width], 1),
                           const(np.asarray([ax.index(k) + 1 if k in ax else 0
                                             for k in range(n)], "int64")), axis=1)
        return D.pad(x, T.transpose(width, (1, 0)), fill, pad_mode=mode)
    if ax is not None:
        full = [0] * (2 * n)
        for i, a in enumerate(ax):
            full[a], full[a + n] = p[i], p[i + len(ax)]
        p = full
    return _pad(x, p, fill, mode)


@TABLE.register("Shape")
def shape_(x, start=0, end=None):
    s = shape(x)
    if all(isinstance(d, int) for d in s):
        return const(np.asarray(s[start:end], "int64"))
    picked = range(len(s))[start:end]
    return T.strided_slice(D.shape_of(x), [picked.start], [picked.stop])


@TABLE.register("Size")
def size(x):
    s = shape(x)
    if all(isinstance(d, int) for d in s):
        return const(np.asarray(int(np.prod(s)), "int64"))
    return R.prod(D.shape_of(x))


@TABLE.register("ConstantOfShape")
def constant_of_shape(new_shape, value=None):  # noqa: A002
    v = np.zeros(1, "float32") if value is None else value
    target = ints_or_none(new_shape)
    if target is None:
        return D.full(const(v.reshape(-1)[0]), _int64(new_shape), dtype=v.dtype.name)
    return const(np.full(target, v.reshape(-1)[0], v.dtype))



@TABLE.register("Constant")
def constant(**attrs):
    if len(attrs) != 1:
        raise ConversionError(f"Constant needs exactly one value attribute, found {list(attrs)}")
    ((kind, v),) = attrs.items()
    if kind in ("value_float", "value_floats"):
        return const(np.asarray(v, "float32"))
    if kind in ("value_int", "value_ints"):
        return const(np.asarray(v, "int64"))
    if kind != "value":
        raise ConversionError(f"Constant {kind} not supported yet")
    return const(np.asarray(v))


@TABLE.register("Range")
def range_(start, limit, delta):
    """``start + i * delta`` in the inputs' dtype; bounds known only at run time give
    ``dyn.arange`` (length ``Any``)."""
    bounds = [constant_value(v) for v in (start, limit, delta)]
    if any(b is None for b in bounds):
        return D.arange(*(T.reshape(v, ()) for v in (start, limit, delta)))
    s, lim, d = (np.asarray(b).reshape(()) for b in bounds)
    n = max(int(np.ceil((float(lim) - float(s)) / float(d))), 0)
    return const((s + np.arange(n).astype(s.dtype) * d).astype(s.dtype))


@TABLE.register("Compress", since=9)
def compress(x, condition, axis=None):  # noqa: A002
    """The kept positions set the result's extent: a constant condition gives a ``take``
    of known indices, a run-time one ``argwhere`` (extent ``Any``)."""
    if axis is None:
        x, axis = T.reshape(x, (-1,)), 0
    cond = constant_value(condition)
    if cond is None:
        keep = T.reshape(D.argwhere(condition), (-1,))
    else:
        keep = const(np.nonzero(np.asarray(cond).reshape(-1))[0].astype("int64"))
    return T.take(x, keep, axis=int(axis), mode="fast")


@TABLE.register("NonZero", since=9)
def nonzero(x):
    return T.transpose(D.argwhere(x), (1, 0))


@TABLE.register("Unique", since=11)
def unique(x, axis=None, sorted=1, _outputs=1):  # noqa: A002
    out = D.unique(x, is_sorted=bool(sorted), axis=axis)
    return tuple(TupleGetItem(out, k) for k in range(4))[:_outputs] if _outputs > 1 \
        else TupleGetItem(out, 0)


@TABLE.register("AffineGrid", since=20)
def affine_grid(theta, size, align_corners=0):
    """Each output point is ``theta @ (x, y[, z], 1)`` over a regular grid in [-1, 1]
    (the grid itself is a constant: ``size`` must be known)."""
    n, _, *spatial = ints(size, "size")
    axes = []
    for extent in spatial:
        if align_corners:
            axes.append(np.linspace(-1.0, 1.0, extent))
        else:
            axes.append((2 * np.arange(extent) + 1) / extent - 1)
    # points in (D,) H, W order; coordinates in x, y(, z) order, then 1
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = [m.reshape(-1) for m in reversed(mesh)]
    base = np.stack(coords + [np.ones_like(coords[0])], axis=1).astype(dtype(theta))
    points = T.broadcast_to(const(base), (n, *base.shape))
    grid = N.batch_matmul(points, theta, transpose_b=True)  # (N, points, coords)
    return T.reshape(grid, (n, *spatial, len(spatial)))


@TABLE.register("MaxUnpool", since=9)
def max_unpool(x, indices, output_shape=None, kernel_shape=None, pads=None, strides=None):
    """Zeros with each value written at its flat index into the shape pooling came from
    (as MaxPool's Indices count); a larger ``output_shape`` pads that at the end."""
    from ...op import scatter as S

    s = _static(x, "MaxUnpool")
    n = len(s) - 2
    pads = list(pads or [0] * (2 * n))
    strides = list(strides or [1] * n)
    inferred = list(s[:2]) + [(d - 1) * st - pads[i] - pads[i + n] + k for i, (d, st, k) in
                              enumerate(zip(s[2:], strides, kernel_shape))]
    flat = S.scatter_elements(const(np.zeros(int(np.prod(inferred)), dtype(x))),
                              T.reshape(indices, (-1,)), T.reshape(x, (-1,)), axis=0)
    y = T.reshape(flat, inferred)
    if output_shape is None:
        return y
    out = ints(output_shape, "output_shape")
    return N.pad(y, [(0, o - i) for o, i in zip(out, inferred)],
                 pad_value=const(np.zeros((), dtype(x))))
