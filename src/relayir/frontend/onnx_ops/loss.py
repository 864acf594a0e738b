"""Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

The class count is static, so picking ``x[n, target[n, ...], ...]`` is a one-hot select:
``target`` compared with a constant ``arange(C)`` laid along the class axis, then a sum
over that axis. A target outside ``[0, C)`` (an ``ignore_index`` such as -100) selects
nothing, which is what ONNX wants since those positions get weight 0.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import const
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype, ndim, shape
from .elementwise import _scalar

TABLE = OnnxTable()


def _class_mask(target, x):
    """``target[:, None, ...] == arange(C)`` shaped like ``x`` (bool)."""
    classes = shape(x)[1]
    if not isinstance(classes, int):
        raise ConversionError("the class dimension (axis 1) must be static")
    lay = (1, classes) + (1,) * (ndim(x) - 2)
    ids = const(np.arange(classes, dtype=dtype(target)).reshape(lay))
    return E.equal(T.expand_dims(target, 1), ids)


def _pick(mask, values, like):
    """Sum over the class axis of ``values`` where ``mask`` holds (``where`` keeps an
    unselected ``-inf`` log-probability from turning the sum into NaN)."""
    return R.sum(T.where(mask, values, _scalar(0, like)), axis=[1])


def nll(x, target, weight=None, ignore_index=None, reduction="mean"):
    """The ONNX loss on log-probabilities ``x`` (N, C, d...) and ``target`` (N, d...)."""
    if ndim(x) < 2:
        raise ConversionError(f"input must have rank >= 2 (N, C, ...), found {shape(x)}")
    if reduction not in ("none", "sum", "mean"):
        raise ConversionError(f"reduction must be none, sum or mean, found {reduction!r}")
    mask = _class_mask(target, x)
    loss = E.negative(_pick(mask, x, x))
    gathered = None
    if weight is not None:
        w = T.reshape(weight, (1, -1) + (1,) * (ndim(x) - 2))
        gathered = _pick(mask, w, x)
    if ignore_index is not None:
        keep = E.not_equal(target, const(np.asarray(ignore_index, dtype(target))))
        gathered = (T.cast(keep, dtype(x)) if gathered is None
                    else T.where(keep, gathered, _scalar(0, x)))
    if gathered is not None:
        loss = E.multiply(loss, gathered)
    if reduction == "none":
        return loss
    total = R.sum(loss)
    if reduction == "sum":
        return total
    if gathered is None:
        return R.mean(loss)
    return E.divide(total, R.sum(gathered))


@TABLE.register("NegativeLogLikelihoodLoss", since=12)
def negative_log_likelihood_loss(x, target, weight=None, ignore_index=None, reduction="mean"):
    return nll(x, target, weight, ignore_index, reduction)


@TABLE.register("SoftmaxCrossEntropyLoss", since=12)
def softmax_cross_entropy_loss(scores, labels, weights=None, ignore_index=None,
                               reduction="mean"):
    """Returns ``(loss, log_prob)``; the importer binds as many as the node names."""
    log_prob = N.log_softmax(scores, axis=1)
    return nll(log_prob, labels, weights, ignore_index, reduction), log_prob
