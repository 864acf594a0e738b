"""Ops of the ``ai.onnx.preview`` and ``ai.onnx.preview.training`` domains, registered
under their qualified names (``"ai.onnx.preview.FlexAttention"``): FlexAttention and
the optimizer steps Adagrad, Adam and Momentum (inference-time graphs that update
weights, e.g. for on-device training).

The optimizers take ``R`` (learning rate) and ``T`` (step count) first, then ``n``
tensors of each kind (X..., G..., V..., H...), and return the updated tensors grouped by
kind; ``T == 0`` selects the first-step formulas at run time.
"""

from __future__ import annotations

import numpy as np

from ...op import nn as N
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, convert_subgraph, dtype, ndim, shape
from .elementwise import _scalar, onnx_dtype
from .nn import matmul

TABLE = OnnxTable()
_TRAINING = "ai.onnx.preview.training."


def _groups(tensors, kinds, op):
    n, extra = divmod(len(tensors), kinds)
    if extra or not n:
        raise ConversionError(f"{op}: expected R, T and {kinds} equal groups of tensors, "
                              f"found {len(tensors) + 2} inputs")
    return [tensors[i * n:(i + 1) * n] for i in range(kinds)]


def _regularized(x, g, norm_coefficient):
    return g if not norm_coefficient else E.add(E.multiply(_scalar(norm_coefficient, x), x), g)


def _as(v, like):
    return v if dtype(v) == dtype(like) else T.cast(v, dtype(like))


@TABLE.register(_TRAINING + "Adagrad")
def adagrad(r, t, *tensors, decay_factor=0.0, epsilon=0.0, norm_coefficient=0.0):
    xs, gs, hs = _groups(tensors, 3, "Adagrad")
    rate = E.divide(r, E.add(_scalar(1, r), E.multiply(T.cast(t, dtype(r)),
                                                       _scalar(decay_factor, r))))
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        g = _regularized(x, g, norm_coefficient)
        h = E.add(h, E.multiply(g, g))
        step = E.divide(g, E.add(E.sqrt(h), _scalar(epsilon, x)))
        new_x.append(E.subtract(x, E.multiply(_as(rate, x), step)))
        new_h.append(h)
    return (*new_x, *new_h)


@TABLE.register(_TRAINING + "Adam")
def adam(r, t, *tensors, alpha=0.9, beta=0.999, epsilon=0.0, norm_coefficient=0.0,
         norm_coefficient_post=0.0):
    xs, gs, vs, hs = _groups(tensors, 4, "Adam")
    steps = T.cast(t, dtype(r))
    corrected = E.divide(
        E.multiply(r, E.sqrt(E.subtract(_scalar(1, r), E.power(_scalar(beta, r), steps)))),
        E.subtract(_scalar(1, r), E.power(_scalar(alpha, r), steps)))
    rate = T.where(E.greater(t, _scalar(0, t)), corrected, r)
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        g = _regularized(x, g, norm_coefficient)
        v = E.add(E.multiply(_scalar(alpha, x), v), E.multiply(_scalar(1 - alpha, x), g))
        h = E.add(E.multiply(_scalar(beta, x), h),
                  E.multiply(_scalar(1 - beta, x), E.multiply(g, g)))
        step = E.divide(v, E.add(E.sqrt(h), _scalar(epsilon, x)))
        x = E.subtract(x, E.multiply(_as(rate, x), step))
        if norm_coefficient_post:
            x = E.multiply(_scalar(1 - norm_coefficient_post, x), x)
        new_x.append(x)
        new_v.append(v)
        new_h.append(h)
    return (*new_x, *new_v, *new_h)


@TABLE.register(_TRAINING + "Momentum")
def momentum(r, t, *tensors, alpha, beta, mode, norm_coefficient):
    if mode not in ("standard", "nesterov"):
        raise ConversionError(f"Momentum: mode must be standard or nesterov, found {mode!r}")
    xs, gs, vs = _groups(tensors, 3, "Momentum")
    first = E.equal(t, _scalar(0, t))  # the gradient's coefficient is 1 on the first step
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        g = _regularized(x, g, norm_coefficient)
        coeff = T.where(first, _scalar(1, x), _scalar(beta, x))
        v = E.add(E.multiply(_scalar(alpha, x), v), E.multiply(coeff, g))
        step = v if mode == "standard" else E.add(g, E.multiply(_scalar(alpha, x), v))
        new_x.append(E.subtract(x, E.multiply(_as(r, x), step)))
        new_v.append(v)
    return (*new_x, *new_v)


def _graph_mod(graph, value, what):
    if graph is None:
        return value
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise ConversionError(f"FlexAttention: {what} must take and return one tensor")
    (out,) = convert_subgraph(graph, {graph.input[0].name: value})
    return out if dtype(out) == dtype(value) else T.cast(out, dtype(value))


@TABLE.register("ai.onnx.preview.FlexAttention")
def flex_attention(q, k, v, scale=None, score_mod=None, prob_mod=None,
                   softmax_precision=None):
    """Attention whose scores and probabilities pass through user subgraphs; the softmax
    runs in float32 for 16-bit inputs (or ``softmax_precision``)."""
    if not ndim(q) == ndim(k) == ndim(v) == 4:
        raise ConversionError(f"FlexAttention needs 4-D Q, K, V, found {shape(q)}, "
                              f"{shape(k)}, {shape(v)}")
    q_heads, head = shape(q)[1], shape(q)[3]
    kv_heads = shape(k)[1]
    if q_heads != kv_heads:
        if q_heads % kv_heads:
            raise ConversionError(f"FlexAttention: {q_heads} query heads are not a multiple "
                                  f"of {kv_heads} key/value heads")
        k = T.repeat(k, q_heads // kv_heads, axis=1)
        v = T.repeat(v, q_heads // kv_heads, axis=1)
    root = _scalar(np.sqrt(np.float32(1 / np.sqrt(head) if scale is None else scale)), q)
    scores = matmul(E.multiply(q, root), T.transpose(E.multiply(k, root), (0, 1, 3, 2)))
    work = (onnx_dtype(softmax_precision) if softmax_precision
            else "float32" if dtype(q) == "float16" else dtype(q))
    if dtype(scores) != work:
        scores = T.cast(scores, work)
    scores = _graph_mod(score_mod, scores, "score_mod")
    probs = _graph_mod(prob_mod, N.softmax(scores, axis=-1), "prob_mod")
    out = matmul(probs, v if dtype(v) == work else T.cast(v, work))
    return out if dtype(out) == dtype(v) else T.cast(out, dtype(v))
