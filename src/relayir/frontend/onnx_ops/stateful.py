"""Ops that read and return a state cache: LinearAttention, CausalConvWithState and
TensorScatter (opsets 24-27).

LinearAttention's recurrence is unrolled over the (static) sequence length: one small
matmul-sized step per token, so the graph grows with the length. That suits decode and
short prefill; long prefills would want a scan op or the chunked form.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import const
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype, shape
from .base import axis as norm_axis
from .composite import _swish
from .nn import matmul
from .shape import _static

TABLE = OnnxTable()


def _heads(x, heads, what):
    """(B, T, H*D) → (B, H, T, D) in float32."""
    b, t, hd = _static(x, f"LinearAttention {what}")
    if hd % heads:
        raise ConversionError(f"LinearAttention: {what} width {hd} is not divisible by "
                              f"{heads} heads")
    x = T.transpose(T.reshape(x, (b, t, heads, hd // heads)), (0, 2, 1, 3))
    return x if dtype(x) == "float32" else T.cast(x, "float32")


def _step(x, t):
    return T.strided_slice(x, [t], [t + 1], axes=[2])


def _swap_last(x):
    return T.transpose(x, (0, 1, 3, 2))


@TABLE.register("LinearAttention", since=27)
def linear_attention(query, key, value, past_state=None, decay=None, beta=None,
                     chunk_size=None, kv_num_heads=None, q_num_heads=None, scale=None,
                     update_rule="gated_delta"):
    """Returns ``(output, present_state)``; the state is (B, H_kv, d_k, d_v)."""
    if update_rule not in ("linear", "gated", "delta", "gated_delta"):
        raise ConversionError(f"LinearAttention: unknown update_rule {update_rule!r}")
    if not q_num_heads or not kv_num_heads or q_num_heads % kv_num_heads:
        raise ConversionError(f"LinearAttention: q_num_heads ({q_num_heads}) must be a "
                              f"positive multiple of kv_num_heads ({kv_num_heads})")
    gating = update_rule in ("gated", "gated_delta")
    delta = update_rule in ("delta", "gated_delta")
    if gating != (decay is not None) or delta != (beta is not None):
        raise ConversionError(f"LinearAttention: update_rule {update_rule!r} needs "
                              f"{'decay' if gating else 'no decay'} and "
                              f"{'beta' if delta else 'no beta'}")
    b, steps, _ = _static(query, "LinearAttention query")
    q, k, v = (_heads(query, q_num_heads, "query"), _heads(key, kv_num_heads, "key"),
               _heads(value, kv_num_heads, "value"))
    d_k, d_v = shape(q)[3], shape(v)[3]
    group = q_num_heads // kv_num_heads
    if gating:  # (B, T, H_kv) or (B, T, H_kv*d_k) → (B, H_kv, T, 1 or d_k)
        per = _static(decay, "LinearAttention decay")[2] // kv_num_heads
        decay = T.cast(T.transpose(T.reshape(decay, (b, steps, kv_num_heads, per)),
                                   (0, 2, 1, 3)), "float32")
    if delta:  # (B, T, H_kv or 1) → (B, H_kv or 1, T, 1)
        hb = _static(beta, "LinearAttention beta")[2]
        beta = T.cast(T.transpose(T.reshape(beta, (b, steps, hb, 1)), (0, 2, 1, 3)),
                      "float32")
    if past_state is None:
        state = const(np.zeros((b, kv_num_heads, d_k, d_v), "float32"))
        state_dtype = dtype(query)
    else:
        state, state_dtype = T.cast(past_state, "float32"), dtype(past_state)
    factor = const(np.asarray(1 / np.sqrt(d_k) if not scale else float(scale), "float32"))
    outs = []
    for t in range(steps):
        k_t, v_t = _step(k, t), _step(v, t)  # (B, H, 1, d)
        if gating:
            state = E.multiply(state, E.exp(_swap_last(_step(decay, t))))
        if delta:
            v_t = E.multiply(_step(beta, t), E.subtract(v_t, matmul(k_t, state)))
        state = E.add(state, E.multiply(_swap_last(k_t), v_t))
        read = state if group == 1 else T.repeat(state, group, axis=1)
        outs.append(E.multiply(factor, matmul(_step(q, t), read)))
    out = T.concatenate(outs, axis=2) if steps > 1 else outs[0]
    out = T.reshape(T.transpose(out, (0, 2, 1, 3)), (b, steps, q_num_heads * d_v))
    if dtype(query) != "float32":
        out = T.cast(out, dtype(query))
    return out, state if state_dtype == "float32" else T.cast(state, state_dtype)


@TABLE.register("CausalConvWithState", since=27)
def causal_conv_with_state(x, weight, bias=None, past_state=None, activation="none"):
    """Depthwise causal conv1d over ``past_state ++ x``; returns ``(output,
    present_state)``, the state being the last ``k - 1`` input positions."""
    if activation not in ("none", "silu", "swish"):
        raise ConversionError(f"CausalConvWithState: unknown activation {activation!r}")
    b, channels, _ = _static(x, "CausalConvWithState input")
    k = _static(weight, "CausalConvWithState weight")[2]
    if past_state is None:
        past_state = const(np.zeros((b, channels, k - 1), dtype(x)))
    padded = T.concatenate([past_state, x], axis=2)
    y = N.conv1d(padded, weight, groups=channels, channels=channels, kernel_size=[k])
    if bias is not None:
        y = N.bias_add(y, bias, axis=1)
    if activation != "none":
        y = _swish(y if dtype(y) == "float32" else T.cast(y, "float32"), 1.0)
        y = y if dtype(x) == "float32" else T.cast(y, dtype(x))
    total = shape(padded)[2]
    return y, T.strided_slice(padded, [total - (k - 1)], [total], axes=[2])


@TABLE.register("TensorScatter", since=24)
def tensor_scatter(past_cache, update, write_indices=None, mode="linear", axis=-2):  # noqa: A002
    """Write ``update`` into ``past_cache`` along ``axis`` from ``write_indices[b]`` per
    batch (wrapping when ``mode="circular"``): a one-hot (L, S) matrix per batch picks,
    for each cache slot, the update row written there."""
    s = _static(past_cache, "TensorScatter past_cache")
    rank, a = len(s), norm_axis(axis, len(s))
    if a == 0:
        raise ConversionError("TensorScatter: axis must not be the batch axis")
    length, steps = s[a], _static(update, "TensorScatter update")[a]
    perm = [i for i in range(rank) if i != a]
    perm.insert(rank - 2, a)
    inverse = [perm.index(i) for i in range(rank)]
    past, upd = T.transpose(past_cache, perm), T.transpose(update, perm)
    if write_indices is None:
        start = const(np.zeros((s[0],), "int64"))
    else:
        start = T.cast(write_indices, "int64")
    lay = (s[0],) + (1,) * (rank - 1)
    slot = E.subtract(const(np.arange(length, dtype="int64").reshape(length, 1)),
                      T.reshape(start, lay))
    if mode == "circular":
        slot = E.floor_mod(slot, const(np.asarray(length, "int64")))
    elif mode != "linear":
        raise ConversionError(f"TensorScatter: mode must be linear or circular, found {mode!r}")
    pick = E.equal(slot, const(np.arange(steps, dtype="int64")))  # (B, 1.., L, S)
    written = R.any(pick, axis=[-1], keepdims=True)
    gathered = matmul(T.cast(pick, dtype(past_cache)), upd)
    return T.transpose(T.where(written, gathered, past), inverse)
