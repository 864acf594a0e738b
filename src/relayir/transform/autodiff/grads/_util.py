"""Shape helpers shared by the gradient rules (static shapes)."""

from __future__ import annotations

from ....errors import Error
from ....ir.expr import const
from ....op import nn as _nn
from ....op import reduce as _r
from ....op import transform as _t


def shape_of(e) -> tuple:
    try:
        return tuple(int(d) for d in e.checked_type.shape)
    except (TypeError, ValueError):
        raise Error(f"gradient needs static shapes, found {e.checked_type}") from None


def dtype_of(e) -> str:
    return e.checked_type.dtype


def scalar(value, like) -> object:
    return const(value, dtype_of(like))


def collapse_sum_to(g, out_shape: tuple, shape: tuple):
    """Sum ``g`` (of the broadcast shape ``out_shape``) back to ``shape``."""
    out_shape, shape = tuple(out_shape), tuple(shape)
    if out_shape == shape:
        return g
    lead = len(out_shape) - len(shape)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(shape)
                                if d == 1 and out_shape[lead + i] != 1]
    if axes:
        g = _r.sum(g, axis=axes, keepdims=True)
    return _t.reshape(g, shape)


def collapse_like(g, call, arg):
    return None if g is None else collapse_sum_to(g, shape_of(call), shape_of(arg))


def unreduce(g, shape: tuple, axes) -> object:
    """Broadcast a reduction's output gradient back to the input ``shape``."""
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return _t.broadcast_to(_t.reshape(g, kept), shape)


def along(v, axis: int, ndim: int):
    """A 1-D tensor reshaped to broadcast along ``axis`` of a rank-``ndim`` tensor."""
    shape = [1] * ndim
    shape[axis] = -1
    return _t.reshape(v, tuple(shape))


def pad_crop(e, shape: tuple, pads, value=0.0, dtype="float32"):
    """Pad (positive) or crop (negative) each axis by ``pads[i] = (before, after)``."""
    if any(b < 0 or a < 0 for b, a in pads):
        begin = [max(-b, 0) for b, _ in pads]
        end = [d - max(-a, 0) for d, (_, a) in zip(shape, pads)]
        e = _t.strided_slice(e, begin, end)
        shape = tuple(en - be for be, en in zip(begin, end))
    pos = tuple((max(b, 0), max(a, 0)) for b, a in pads)
    if any(b or a for b, a in pos):
        e = _nn.pad(e, pos, const(value, dtype))
    return e


def dilate(e, shape: tuple, axis: int, stride: int, dtype: str = "float32"):
    """Insert ``stride - 1`` zeros between the entries of ``e`` along ``axis``."""
    if stride == 1 or shape[axis] == 0:
        return e
    n = len(shape)
    x = _t.expand_dims(e, axis + 1)
    pads = [(0, 0)] * (n + 1)
    pads[axis + 1] = (0, stride - 1)
    x = _nn.pad(x, tuple(pads), const(0.0, dtype))
    big = list(shape)
    big[axis] = shape[axis] * stride
    x = _t.reshape(x, tuple(big))
    begin = [0] * n
    end = list(big)
    end[axis] = (shape[axis] - 1) * stride + 1
    return _t.strided_slice(x, begin, end)
