"""Shape manipulation: Reshape, Flatten, Transpose, (Un)Squeeze, Concat, Split, Slice,
Gather, Expand, Tile, Pad, Shape, ConstantOfShape, Constant."""

from __future__ import annotations

import numpy as np

from ...ir.expr import TupleGetItem, const
from ...op import nn as N
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, axis, ints, ndim, shape, value

TABLE = OnnxTable()


def _static(x, what):
    s = shape(x)
    if not all(isinstance(d, int) for d in s):
        raise ConversionError(f"{what} of a dynamic shape not supported yet")
    return s


@TABLE.register("Reshape")
def reshape_v1(x, shape=None, **_):  # noqa: A002
    return T.reshape(x, list(shape))


@TABLE.register("Reshape", since=5)
def reshape(x, new_shape, allowzero=0):
    target = ints(new_shape, "shape")
    src = _static(x, "Reshape")
    out = [src[i] if d == 0 and not allowzero else d for i, d in enumerate(target)]
    return T.reshape(x, out)


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
    return _squeeze(x, ints(axes, "axes"))


@TABLE.register("Unsqueeze")
def unsqueeze_v1(x, axes):
    return _unsqueeze(x, axes)


@TABLE.register("Unsqueeze", since=13)
def unsqueeze(x, axes):
    return _unsqueeze(x, ints(axes, "axes"))


@TABLE.register("Concat")
def concat(*xs, axis=0):  # noqa: A002
    return T.concatenate(list(xs), axis=int(axis))


def _split(x, a, sizes, outputs):
    a = axis(a, ndim(x))
    if sizes is None:
        d = _static(x, "Split")[a]
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
    return _split(x, axis, ints(split, "split"), num_outputs or _outputs)


@TABLE.register("Slice")
def slice_v1(x, starts, ends, axes=None):
    return _slice(x, starts, ends, axes, None)


@TABLE.register("Slice", since=10)
def slice_(x, starts, ends, axes=None, steps=None):
    return _slice(x, ints(starts, "starts"), ints(ends, "ends"), ints(axes, "axes"),
                  ints(steps, "steps"))


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
    a = axis + ndim(x) if axis < 0 else axis  # noqa: F823
    idx = np.asarray(value(indices, "indices")).astype("int64")
    idx = np.where(idx < 0, idx + shape(x)[a], idx)
    return T.take(x, const(idx), axis=a)


@TABLE.register("Expand")
def expand(x, new_shape):
    target = ints(new_shape, "shape")
    s = _static(x, "Expand")
    out = np.broadcast_shapes(tuple(s), tuple(target))
    return T.broadcast_to(x, list(out))


@TABLE.register("Tile")
def tile(x, repeats, *_, **__):
    return T.tile(x, ints(repeats, "repeats"))


def _pad(x, pads, pad_value, mode):
    if mode != "constant":
        raise ConversionError(f"Pad mode {mode!r} not supported yet")
    n = ndim(x)
    width = [(int(pads[i]), int(pads[i + n])) for i in range(n)]
    return N.pad(x, width, pad_value=pad_value)


@TABLE.register("Pad")
def pad_v2(x, pads=None, paddings=None, mode="constant", value=0.0):
    return _pad(x, pads if pads is not None else paddings, float(value), mode)


@TABLE.register("Pad", since=11)
def pad(x, pads, constant_value=None, axes=None, mode="constant"):
    p = ints(pads, "pads")
    if axes is not None:
        n, ax = ndim(x), [axis(a, ndim(x)) for a in ints(axes, "axes")]
        full = [0] * (2 * n)
        for i, a in enumerate(ax):
            full[a], full[a + n] = p[i], p[i + len(ax)]
        p = full
    v = 0.0 if constant_value is None else value(constant_value, "constant_value").item()
    return _pad(x, p, v, mode)


@TABLE.register("Shape")
def shape_(x, start=0, end=None):
    return const(np.asarray(_static(x, "Shape")[start:end], "int64"))


@TABLE.register("Size")
def size(x):
    return const(np.asarray(int(np.prod(_static(x, "Size"))), "int64"))


@TABLE.register("ConstantOfShape")
def constant_of_shape(new_shape, value=None):  # noqa: A002
    v = np.zeros(1, "float32") if value is None else value
    return const(np.full(ints(new_shape, "shape"), v.reshape(-1)[0], v.dtype))



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
    s, lim, d = (value(v, "range bound") for v in (start, limit, delta))
    return const(np.arange(s, lim, d).astype(s.dtype))
