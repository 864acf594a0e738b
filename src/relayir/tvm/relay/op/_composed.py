"""Relay ops that relayir spells as a graph of its own ops (no second implementation).

- ``reverse_sequence(data, seq_lengths, seq_axis, batch_axis)``: a ``gather`` along the
  sequence axis whose index is ``L - 1 - t`` for ``t < L`` (``L`` the batch's length,
  clipped to ``[0, n]``) and ``t`` after it, as Relay (TOPI) reverses;
- ``adv_index([data, i0, i1, ...])``: numpy's ``data[i0, i1, ...]`` with broadcast
  index tensors, a ``gather_nd`` of the stacked indices;
- ``sliding_window(data, axis, window_shape, strides)``: one ``take`` of a constant
  ``(positions, window)`` index per windowed axis, then the positions before the windows;
- ``fixed_point_multiply(x, multiplier, shift)``: Relay's ``q_multiply_shift`` in int64
  (``x << max(shift, 0)``, times the multiplier, plus half, right shift by
  ``31 + max(-shift, 0)``);
- ``stft(data, n_fft, hop_length, win_length, window, normalized, onesided)``: the
  frames (a ``take`` of a ``(frames, n_fft)`` index, dynamic when the length is not
  static) times the centred window, times the DFT's cosine and sine matrices.

The constructions need the data's static shape where Relay's type relation would read
it (``reverse_sequence``, ``sliding_window``): the data must have a known type.
"""

from __future__ import annotations

import numpy as np

from ....errors import Error
from ....ir.expr import Constant, Expr, Var
from ....ir.types import Any, TensorType
from ....op import dynamic as dyn
from ....op.bitwise import left_shift, right_shift
from ....op.nn import matmul, pad
from ....op.reduce import prod
from ....op.reduce import sum as _sum
from ....op.scatter import gather, gather_nd
from ....op.tensor import add, floor_divide, less, less_equal, maximum, minimum, multiply, subtract
from ....op.transform import cast, expand_dims, reshape, stack, take, transpose, where


def _const(value, dtype: str) -> Constant:
    return Constant(np.asarray(value, dtype=dtype))


def _type_of(expr: Expr, where: str) -> TensorType:
    """The tensor type of ``expr`` (an annotated variable's, else inferred)."""
    if isinstance(expr, Var) and isinstance(expr.type_annotation, TensorType):
        return expr.type_annotation
    from ....transform import infer_type

    try:
        t = infer_type(expr).checked_type
    except Error as exc:
        raise Error(f"relay.{where}: the data's type is needed and cannot be inferred "
                    f"({exc})") from None
    if not isinstance(t, TensorType):
        raise Error(f"relay.{where}: the data must be a tensor, found {t}")
    return t


def _static_shape(expr: Expr, where: str) -> tuple:
    shape = _type_of(expr, where).shape
    if not all(isinstance(d, int) for d in shape):
        raise Error(f"relay.{where}: needs a static data shape, found {shape}")
    return shape


def reverse_sequence(data, seq_lengths, seq_axis: int = 1, batch_axis: int = 0):
    shape = _static_shape(data, "reverse_sequence")
    nd = len(shape)
    seq_axis, batch_axis = seq_axis % nd, batch_axis % nd
    n = shape[seq_axis]
    t_shape, l_shape = [1] * nd, [1] * nd
    t_shape[seq_axis], l_shape[batch_axis] = n, shape[batch_axis]
    lengths_type = _type_of(seq_lengths, "reverse_sequence")
    # the message is Relay's, spelling included (code that ported Relay may match on it)
    if lengths_type.shape not in ((shape[batch_axis],), (Any(),)):
        raise Error(f"relay.reverse_sequence: For reverse_sequnece seq_lengths size should "
                    f"match with dimension of batch axis, but got dimension of batch_axis = "
                    f"{shape[batch_axis]}, and seq_length size = {lengths_type.shape[0]}"
                    if len(lengths_type.shape) == 1 else
                    f"relay.reverse_sequence: seq_lengths must be a vector, found {lengths_type}")
    t = _const(np.arange(n).reshape(t_shape), "int64")
    lengths = cast(seq_lengths, "int64")
    lengths = reshape(minimum(maximum(lengths, _const(0, "int64")), _const(n, "int64")),
                      l_shape)
    rev = subtract(subtract(lengths, _const(1, "int64")), t)
    index = where(less(t, lengths), rev, add(t, multiply(lengths, _const(0, "int64"))))
    index = add(index, _const(np.zeros(shape), "int64"))  # to the data's shape
    return gather(data, seq_axis, index)


def adv_index(inputs):
    data, *indices = list(inputs)
    if not indices:
        raise Error("relay.adv_index: needs the data and at least one index tensor")
    indices = [cast(i, "int64") for i in indices]
    zero = multiply(indices[0], _const(0, "int64"))
    for i in indices[1:]:
        zero = add(zero, multiply(i, _const(0, "int64")))  # the broadcast shape, all 0
    return gather_nd(data, stack([add(i, zero) for i in indices], 0))


def sliding_window(data, axis: int, window_shape, strides):
    shape = _static_shape(data, "sliding_window")
    nd = len(shape)
    axis = axis % nd
    window_shape, strides = list(window_shape), list(strides)
    if len(window_shape) != nd - axis or len(strides) != nd - axis:
        raise Error(f"relay.sliding_window: window_shape and strides need {nd - axis} "
                    f"entries (axes {axis}..{nd - 1}), found {window_shape} and {strides}")
    out = data
    positions = []
    for j in reversed(range(axis, nd)):
        w, s = window_shape[j - axis], strides[j - axis]
        p = (shape[j] - w) // s + 1
        if w < 1 or s < 1 or p < 1:
            raise Error(f"relay.sliding_window: window {w} with stride {s} does not fit "
                        f"axis {j} of extent {shape[j]}")
        positions.append(p)
        index = np.arange(p)[:, None] * s + np.arange(w)[None, :]
        out = take(out, _const(index, "int64"), axis=j)
    # (pre..., P_a, W_a, P_a+1, W_a+1, ...) -> (pre..., P_a, P_a+1, ..., W_a, W_a+1, ...)
    k = nd - axis
    perm = list(range(axis)) + [axis + 2 * i for i in range(k)] + \
        [axis + 2 * i + 1 for i in range(k)]
    return transpose(out, perm)


def fixed_point_multiply(x, multiplier: int, shift: int):
    left = max(int(shift), 0)
    right = 31 + max(-int(shift), 0)
    v = cast(x, "int64")
    if left:
        v = left_shift(v, _const(left, "int64"))
    v = multiply(v, _const(int(multiplier), "int64"))
    v = right_shift(add(v, _const(1 << (right - 1), "int64")), _const(right, "int64"))
    return cast(v, _type_of(x, "fixed_point_multiply").dtype)


def _frames(data, shape, n_fft: int, hop: int):
    """``(..., frames, n_fft)``: the data's windows of ``n_fft`` samples every ``hop``."""
    length = shape[-1]
    if isinstance(length, int):
        count = (length - n_fft) // hop + 1
        if count < 1:
            raise Error(f"relay.stft: n_fft={n_fft} is longer than the signal ({length})")
        index = np.arange(count)[:, None] * hop + np.arange(n_fft)[None, :]
        return take(data, _const(index, "int64"), axis=-1)
    size = take(dyn.shape_of(data, "int64"), _const(len(shape) - 1, "int64"), axis=0)
    count = add(floor_divide(subtract(size, _const(n_fft, "int64")), _const(hop, "int64")),
                _const(1, "int64"))
    starts = multiply(dyn.arange(_const(0, "int64"), count, _const(1, "int64"), "int64"),
                      _const(hop, "int64"))
    index = add(expand_dims(starts, 1), _const(np.arange(n_fft)[None, :], "int64"))
    return take(data, index, axis=-1)


def stft(data, n_fft: int, hop_length=None, win_length=None, window=None,
         normalized: bool = False, onesided: bool = True):
    n_fft = int(n_fft)
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win_length = n_fft if win_length is None else int(win_length)
    dtype = _type_of(data, "stft")
    if hop < 1 or not 0 < win_length <= n_fft:
        raise Error(f"relay.stft: needs hop_length >= 1 and 0 < win_length <= n_fft, found "
                    f"hop_length={hop}, win_length={win_length}, n_fft={n_fft}")
    if window is None:
        window = _const(np.ones(win_length), dtype.dtype)
    window = cast(window, dtype.dtype)
    lpad = (n_fft - win_length) // 2
    if lpad or n_fft - win_length - lpad:
        window = pad(window, ((lpad, n_fft - win_length - lpad),))
    frames = multiply(_frames(data, dtype.shape, n_fft, hop), window)
    rows = n_fft // 2 + 1 if onesided else n_fft
    angle = 2 * np.pi * np.outer(np.arange(n_fft), np.arange(rows)) / n_fft  # (k, w)
    scale = 1 / np.sqrt(n_fft) if normalized else 1.0
    re = matmul(frames, _const(np.cos(angle) * scale, dtype.dtype))
    im = matmul(frames, _const(-np.sin(angle) * scale, dtype.dtype))
    out = stack([re, im], -1)  # (..., frames, rows, 2)
    nd = len(dtype.shape)
    perm = list(range(nd - 1)) + [nd, nd - 1, nd + 1]
    return transpose(out, perm)


def searchsorted(sorted_sequence, values, right: bool = False, dtype: str = "int32"):
    """For each value, how many entries of its row of ``sorted_sequence`` are ``<`` it
    (``<=`` with ``right``): numpy's ``searchsorted`` per row (a 1-D sequence serves
    every row), as a comparison of every pair and a sum."""
    seq, vals = _type_of(sorted_sequence, "searchsorted"), _type_of(values, "searchsorted")
    if len(seq.shape) != 1 and len(seq.shape) != len(vals.shape):
        raise Error(f"relay.searchsorted: the sorted sequence is 1-d or has the values' "
                    f"rank, found {seq} and {vals}")
    compare = less_equal if right else less
    hits = compare(expand_dims(sorted_sequence, -2), expand_dims(values, -1))  # (.., N, M)
    return _sum(cast(hits, dtype), axis=-1)


def ndarray_size(data, dtype: str = "int32"):
    """The number of elements of ``data`` (read at run time when the shape is dynamic)."""
    return cast(prod(dyn.shape_of(data, "int64")), dtype)


__all__ = ["adv_index", "fixed_point_multiply", "ndarray_size", "reverse_sequence",
           "searchsorted", "sliding_window", "stft"]
