"""Attention (opset 23+): scaled dot-product attention with heads, grouped-query heads,
masks, causal and sliding windows, softcap and a key/value cache.

Every constraint becomes one additive bias (0 where a key may be attended, -inf where
not) summed with numpy broadcasting, as ONNX's reference does, so a rank-2/3/4 mask, a
per-batch causal frontier and a padding mask combine without special cases. A row
whose bias is all -inf has no key to attend: its probabilities are 0 (softmax would
give NaN).
"""

from __future__ import annotations

import functools

import numpy as np

from ...ir.expr import const
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype, ndim, shape
from .elementwise import _scalar, onnx_dtype
from .nn import matmul
from .shape import _static

TABLE = OnnxTable()


def _split_heads(x, heads, what):
    """(B, S, H*D) → (B, H, S, D)."""
    b, s, hidden = _static(x, f"Attention {what}")
    if heads is None or hidden % int(heads):
        raise ConversionError(f"Attention: 3-D {what} of width {hidden} needs a num_heads "
                              f"attribute that divides it, found {heads}")
    return T.transpose(T.reshape(x, (b, s, int(heads), hidden // int(heads))), (0, 2, 1, 3))


def _neg_inf(like):
    return _scalar(-np.inf, like)


def _mask_bias(mask, q, kv_len):
    """The user's mask as an additive bias over ``kv_len`` keys (bool: False → -inf;
    keys past the mask's last column are masked)."""
    if dtype(mask) == "bool":
        mask = T.where(mask, _scalar(0, q), _neg_inf(q))
    elif dtype(mask) != dtype(q):
        mask = T.cast(mask, dtype(q))
    ms = _static(mask, "Attention attn_mask")
    if ms[-1] < kv_len:
        fill = const(np.full((*ms[:-1], kv_len - ms[-1]), -np.inf, dtype(q)))
        mask = T.concatenate([mask, fill], axis=len(ms) - 1)
    return mask


def _position_bias(q, q_len, kv_len, offset, nonpad, causal, left, right):
    """Causal and sliding-window limits on ``diff = i + offset - j`` (query i, key j).
    ``offset`` is the cache length, or ``nonpad_kv_seqlen[b] - q_len`` per batch."""
    i = np.arange(q_len).reshape(q_len, 1)
    j = np.arange(kv_len).reshape(1, kv_len)
    if nonpad is None:
        diff = const((i + offset - j).astype("int64"))
    else:
        per_batch = E.subtract(T.cast(nonpad, "int64"), const(np.asarray(q_len, "int64")))
        diff = E.add(T.reshape(per_batch, (-1, 1, 1, 1)), const((i - j).astype("int64")))
    allowed = []
    if causal:
        allowed.append(E.greater_equal(diff, const(np.asarray(0, "int64"))))
    if left >= 0:
        allowed.append(E.less_equal(diff, const(np.asarray(left, "int64"))))
    if right >= 0:
        allowed.append(E.greater_equal(diff, const(np.asarray(-right, "int64"))))
    if not allowed:
        return None
    return T.where(functools.reduce(E.logical_and, allowed), _scalar(0, q), _neg_inf(q))


def _bias(q, mask, nonpad, q_len, kv_len, past_len, causal, left, right):
    pieces = []
    if mask is not None:
        pieces.append(_mask_bias(mask, q, kv_len))
    if causal or left >= 0 or right >= 0:
        # queries follow the cached keys, or end where each batch's valid keys end
        pos = _position_bias(q, q_len, kv_len, past_len, None if past_len else nonpad,
                             causal, left, right)
        if pos is not None:
            pieces.append(pos)
    if nonpad is not None:
        valid = E.less(const(np.arange(kv_len, dtype="int64")),
                       T.reshape(T.cast(nonpad, "int64"), (-1, 1, 1, 1)))
        pieces.append(T.where(valid, _scalar(0, q), _neg_inf(q)))
    return functools.reduce(E.add, pieces) if pieces else None


def _softmax_rows(scores, bias, precision):
    """Softmax over keys, 0 on rows the bias masks entirely."""
    out_dtype = dtype(scores)
    if precision:
        scores = T.cast(scores, onnx_dtype(precision))
    probs = N.softmax(scores, axis=-1)
    if precision:
        probs = T.cast(probs, out_dtype)
    if bias is not None:
        dead = E.equal(R.max(bias, axis=[-1], keepdims=True), _neg_inf(bias))
        probs = T.where(dead, _scalar(0, probs), probs)
    return probs


@TABLE.register("Attention", since=23)
def attention(q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None,
              scale=None, is_causal=0, q_num_heads=None, kv_num_heads=None,
              softmax_precision=None, softcap=0.0, qk_matmul_output_mode=0,
              left_window_size=-1, right_window_size=-1):
    """Returns ``(Y, present_key, present_value, qk_matmul_output)``."""
    rank = ndim(q)
    if rank == 3:
        q = _split_heads(q, q_num_heads, "Q")
        k = _split_heads(k, kv_num_heads, "K")
        v = _split_heads(v, kv_num_heads, "V")
    elif rank != 4:
        raise ConversionError(f"Attention: Q must be 3-D or 4-D, found {shape(q)}")
    if (past_key is None) != (past_value is None):
        raise ConversionError("Attention: past_key and past_value must be given together")
    past_len = 0
    if past_key is not None:
        past_len = _static(past_key, "Attention past_key")[2]
        k = T.concatenate([past_key, k], axis=2)
        v = T.concatenate([past_value, v], axis=2)
    present_k, present_v = k, v
    _, q_heads, q_len, head = _static(q, "Attention Q")
    kv_heads, kv_len = _static(k, "Attention K")[1:3]
    if q_heads != kv_heads:
        if q_heads % kv_heads:
            raise ConversionError(f"Attention: {q_heads} query heads are not a multiple of "
                                  f"{kv_heads} key/value heads")
        k = T.repeat(k, q_heads // kv_heads, axis=1)
        v = T.repeat(v, q_heads // kv_heads, axis=1)
    # ONNX scales Q and K by sqrt(scale) each, rounded to the input dtype.
    root = np.sqrt(1 / np.sqrt(head) if scale is None else float(scale))
    s = _scalar(root, q)
    scores = matmul(E.multiply(q, s), T.transpose(E.multiply(k, s), (0, 1, 3, 2)))
    if softcap and softcap > 0:
        cap = _scalar(softcap, q)
        scores = E.multiply(E.tanh(E.divide(scores, cap)), cap)
    bias = _bias(q, attn_mask, nonpad_kv_seqlen, q_len, kv_len, past_len, bool(is_causal),
                 int(left_window_size), int(right_window_size))
    biased = scores if bias is None else E.add(scores, bias)
    probs = _softmax_rows(biased, bias, softmax_precision)
    y = matmul(probs, v)
    if rank == 3:
        b, _, _, dv = _static(y, "Attention Y")
        y = T.reshape(T.transpose(y, (0, 2, 1, 3)), (b, q_len, q_heads * dv))
    qk = {2: biased, 3: probs}.get(int(qk_matmul_output_mode), scores)
    return y, present_k, present_v, qk


def _rotate(x1, x2, cos, sin):
    return (E.subtract(E.multiply(cos, x1), E.multiply(sin, x2)),
            E.add(E.multiply(sin, x1), E.multiply(cos, x2)))


@TABLE.register("RotaryEmbedding", since=23)
def rotary_embedding(x, cos_cache, sin_cache, position_ids=None, interleaved=0,
                     rotary_embedding_dim=0, num_heads=0):
    """Rotate pairs of the first ``rotary_embedding_dim`` features of each head: halves
    ``(d, d + rd/2)``, or neighbours ``(2i, 2i + 1)`` when ``interleaved``."""
    s = _static(x, "RotaryEmbedding input")
    if len(s) == 4:  # (B, H, S, D) → (B, S, H, D)
        x = T.transpose(x, (0, 2, 1, 3))
    elif len(s) == 3:
        if not num_heads or s[2] % int(num_heads):
            raise ConversionError(f"RotaryEmbedding: 3-D input of width {s[2]} needs a "
                                  f"num_heads attribute that divides it, found {num_heads}")
        x = T.reshape(x, (s[0], s[1], int(num_heads), s[2] // int(num_heads)))
    else:
        raise ConversionError(f"RotaryEmbedding: input must be 3-D or 4-D, found {s}")
    b, seq, heads, head = _static(x, "RotaryEmbedding input")
    rd = int(rotary_embedding_dim) or head
    if position_ids is not None:
        cos_cache = T.take(cos_cache, position_ids, axis=0)
        sin_cache = T.take(sin_cache, position_ids, axis=0)
    cos, sin = T.expand_dims(cos_cache, 2), T.expand_dims(sin_cache, 2)
    if interleaved:
        x1 = T.strided_slice(x, [0], [rd], strides=[2], axes=[3])
        x2 = T.strided_slice(x, [1], [rd], strides=[2], axes=[3])
        real, imag = _rotate(x1, x2, cos, sin)
        rotated = T.reshape(T.stack([real, imag], axis=4), (b, seq, heads, rd))
    else:
        x1 = T.strided_slice(x, [0], [rd // 2], axes=[3])
        x2 = T.strided_slice(x, [rd // 2], [rd], axes=[3])
        rotated = T.concatenate(list(_rotate(x1, x2, cos, sin)), axis=3)
    if rd < head:
        rotated = T.concatenate([rotated, T.strided_slice(x, [rd], [head], axes=[3])], axis=3)
    if len(s) == 3:
        return T.reshape(rotated, s)
    return T.transpose(rotated, (0, 2, 1, 3))
