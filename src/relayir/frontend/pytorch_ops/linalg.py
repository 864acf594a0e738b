"""Matrix products and attention: matmul/mm/bmm/addmm/baddbmm, scaled dot-product attention."""

from __future__ import annotations

import math

import numpy as np

from ...ir.expr import const
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import cast_to, dtype, reshape_to, shape, static

TABLE = ConverterTable()


def _to3d(x, xs):
    """``(*batch, m, k)`` -> ``(b, m, k)``."""
    if len(xs) == 3:
        return x
    if len(xs) == 4:
        return T.reshape(x, [-3, 0, 0])
    if static(*xs[-2:]):
        return T.reshape(x, [-1, *xs[-2:]])
    raise ConversionError(f"batched matmul on shape {xs}")


def _broadcast_batch(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def batched(a, b, as_, bs, transpose_b=False):
    """``a @ b`` (or ``a @ b^T``) for ``as_ = (*batch, m, k)`` and ``bs`` of rank >= 2."""
    bk = (bs[-1], bs[-2]) if transpose_b else (bs[-2], bs[-1])
    if len(bs) == 2:
        return N.matmul(a, b, transpose_b=transpose_b), (*as_[:-1], bk[1])
    batch = _broadcast_batch(as_[:-2], bs[:-2])
    if tuple(as_[:-2]) != batch:
        if not static(*batch, *as_):
            raise ConversionError("matmul broadcasting over dynamic batch dimensions")
        a = T.broadcast_to(a, (*batch, *as_[-2:]))
        as_ = (*batch, *as_[-2:])
    if tuple(bs[:-2]) != batch:
        if not static(*batch, *bs):
            raise ConversionError("matmul broadcasting over dynamic batch dimensions")
        b = T.broadcast_to(b, (*batch, *bs[-2:]))
        bs = (*batch, *bs[-2:])
    y = N.batch_matmul(_to3d(a, as_), _to3d(b, bs), transpose_b=transpose_b)
    out = (*batch, as_[-2], bk[1])
    if len(out) == 3:
        return y, out
    return reshape_to(y, out, src=("_b", as_[-2], bk[1])), out


@TABLE.register("aten.matmul.default")
def matmul(self, other):
    a, b = self, other
    as_, bs = shape(a), shape(b)
    if len(as_) == 1 and len(bs) == 1:
        return R.sum(E.multiply(a, b))
    if len(as_) == 1:
        y, out = batched(T.expand_dims(a, 0), b, (1, as_[0]), bs)
        return T.squeeze(y, [len(out) - 2])
    if len(bs) == 1:
        y, out = batched(a, T.expand_dims(b, 1), as_, (bs[0], 1))
        return T.squeeze(y, [len(out) - 1])
    return batched(a, b, as_, bs)[0]


@TABLE.register("aten.mm.default")
def mm(self, mat2):
    return N.matmul(self, mat2)


@TABLE.register("aten.bmm.default")
def bmm(self, mat2):
    return N.batch_matmul(self, mat2, transpose_b=False)


def _scaled(x, s, dt):
    return x if s == 1 else E.multiply(x, cast_to(s, dt))


@TABLE.register("aten.addmm.default")
def addmm(self, mat1, mat2, beta=1, alpha=1):
    dt = dtype(self)
    return E.add(_scaled(self, beta, dt), _scaled(N.matmul(mat1, mat2), alpha, dt))


@TABLE.register("aten.baddbmm.default")
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    return E.add(_scaled(self, beta, dtype(self)), _scaled(bmm(batch1, batch2), alpha, dtype(self)))


@TABLE.register("aten.addmv.default")
def addmv(self, mat, vec, beta=1, alpha=1):
    return E.add(_scaled(self, beta, dtype(self)), _scaled(matmul(mat, vec), alpha, dtype(self)))


@TABLE.register("aten.mv.default")
def mv(self, vec):
    return matmul(self, vec)


@TABLE.register("aten.dot.default", "aten.vdot.default")
def dot(self, tensor):
    return R.sum(E.multiply(self, tensor))


@TABLE.register("aten.outer.default", "aten.ger.default")
def outer(self, vec2):
    return E.multiply(T.expand_dims(self, 1), T.expand_dims(vec2, 0))


@TABLE.register("aten.scaled_dot_product_attention.default")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q k^T * scale + mask) v`` as batch_matmul, softmax, batch_matmul."""
    if enable_gqa:
        raise ConversionError("scaled_dot_product_attention with enable_gqa")
    qs, ks, vs = shape(query), shape(key), shape(value)
    dt = dtype(query)
    scale = 1 / math.sqrt(qs[-1]) if scale is None else float(scale)
    scores, ss = batched(query, key, qs, ks, transpose_b=True)
    scores = _scaled(scores, scale, dt)
    length, source = qs[-2], ks[-2]
    if is_causal:
        if not static(length, source):
            raise ConversionError("causal attention over a dynamic length")
        keep = np.tril(np.ones((length, source), bool))
        scores = T.where(const(keep), scores, cast_to(-np.inf, dt))
    if attn_mask is not None:
        if dtype(attn_mask) == "bool":
            scores = T.where(attn_mask, scores, cast_to(-np.inf, dt))
        else:
            scores = E.add(scores, attn_mask)
    probs = N.softmax(scores, axis=-1)
    if attn_mask is not None and dtype(attn_mask) == "bool":  # torch's safe softmax: a
        live = R.any(attn_mask, [-1], keepdims=True)           # fully masked row gives 0
        probs = T.where(live, probs, cast_to(0.0, dt))
    return batched(probs, value, ss, vs)[0]
