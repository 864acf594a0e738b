"""The classic MNIST MLP, with a plain numpy forward as its torch-free reference."""

from __future__ import annotations

import numpy as np

from ...ir.expr import Function, var
from ...ir.module import IRModule
from ...op import nn


def _weights(rng, shape, fan_in):
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype("float32")


def mlp(batch_size: int = 1, in_features: int = 784, hidden: int = 256,
        num_classes: int = 10, seed: int = 0):
    """``softmax(dense(relu(dense(x, w1) + b1), w2) + b2)``: the classic MNIST MLP."""
    rng = np.random.default_rng(seed)
    x = var("data", shape=(batch_size, in_features))
    w1 = var("fc1_weight", shape=(hidden, in_features))
    b1 = var("fc1_bias", shape=(hidden,))
    w2 = var("fc2_weight", shape=(num_classes, hidden))
    b2 = var("fc2_bias", shape=(num_classes,))
    h = nn.relu(nn.bias_add(nn.dense(x, w1), b1))
    out = nn.softmax(nn.bias_add(nn.dense(h, w2), b2))
    mod = IRModule.from_expr(Function([x, w1, b1, w2, b2], out))
    params = {
        "fc1_weight": _weights(rng, (hidden, in_features), in_features),
        "fc1_bias": _weights(rng, (hidden,), hidden),
        "fc2_weight": _weights(rng, (num_classes, hidden), hidden),
        "fc2_bias": _weights(rng, (num_classes,), num_classes),
    }
    return mod, params


def mlp_reference(params: dict, data: np.ndarray, **config) -> np.ndarray:
    """The MLP computed directly with numpy (float64), independent of relayir and torch."""
    x = data.astype("float64")
    h = np.maximum(x @ params["fc1_weight"].T.astype("float64") + params["fc1_bias"], 0)
    logits = h @ params["fc2_weight"].T.astype("float64") + params["fc2_bias"]
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
