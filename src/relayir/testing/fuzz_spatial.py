"""Convolution-network programs for the fuzzer: what opt level 3 rewrites most.

Drawn uniformly from ~180 ops, a program rarely holds an ``NCHW`` float32 convolution
big enough for ``AlterOpLayout`` to block it, choose Winograd or pad its channels, nor a
constant dense weight that ``contrib_dense_pack`` packs. A *spatial* program
(``Options.spatial`` of them) draws from ``SPATIAL``: the samplers here — convolutions
with 4..32 channels (3×3 and 1×1 kernels, strided, grouped and depthwise), dense layers
with constant weights — and the ordinary samplers of the ops a network puts between them
(activations, bias, residual adds, pools, concatenation, softmax, flatten).
"""

from __future__ import annotations

from .fuzz_build import Builder
from .fuzz_ops import SAMPLERS

_CHANNELS = (3, 4, 8, 8, 16, 16, 24, 32)


def _fits(shape, dtype) -> bool:
    return (len(shape) == 4 and dtype == "float32" and shape[1] in _CHANNELS
            and min(shape[2:]) >= 3 and shape[0] <= 2)


def _feature_map(b: Builder) -> int:
    """Mostly the latest ``NCHW`` float32 map (so the layers chain and compaction keeps
    them), else an earlier one or a new one."""
    if b.coin(0.75):
        for i in range(len(b.block.steps) - 1, -1, -1):
            step = b.block.steps[i]
            if step.kind != "param" and hasattr(step.value, "shape") and _fits(
                    step.value.shape, step.value.dtype.name):
                return i
    if b.coin(0.5):
        i = b.pick(_fits)
        if i is not None:
            return i
    shape = (b.randint(1, 2), b.choice(_CHANNELS), b.randint(3, 12), b.randint(3, 12))
    return b.new(shape, "float32", const=False)


def _conv(b: Builder) -> tuple:
    x = _feature_map(b)
    n, c, h, w = b.shape(x)
    depthwise = b.coin(0.25)
    groups = c if depthwise else b.choice((1, 1, 1, 1, 2)) if c % 2 == 0 else 1
    out = c if depthwise else b.choice(_CHANNELS)
    if out % groups:
        out = groups
    k = b.choice((1, 3, 3, 3, 5)) if not depthwise else 3
    stride = b.choice((1, 1, 1, 2))
    pad = b.choice((0, k // 2, k // 2))
    weight = b.new((out, c // groups, k, k), "float32", const=b.coin(0.7), low=-0.5, high=0.5)
    return [x, weight], {"strides": (stride, stride), "padding": (pad,) * 4,
                         "groups": groups, "channels": out, "kernel_size": (k, k)}


def _pool(b: Builder, name: str) -> tuple:
    x = _feature_map(b)
    k = b.choice((2, 3))
    attrs = {"pool_size": (k, k), "strides": (b.choice((1, 2)),) * 2,
             "padding": (b.randint(0, k - 1),) * 4, "ceil_mode": b.coin(0.2)}
    if name == "nn.avg_pool2d":
        attrs["count_include_pad"] = b.coin(0.5)
    return [x], attrs


def _global_pool(b: Builder) -> tuple:
    return [_feature_map(b)], {}


def _dense(b: Builder) -> tuple:
    x = b.data(2, ("float32",), lo=1, hi=64, reuse=0.8)
    units = b.choice((4, 10, 16, 32, 48))
    w = b.new((units, b.shape(x)[1]), "float32", const=True, low=-0.5, high=0.5)
    return [x, w], {}


def _bias(b: Builder) -> tuple:
    x = _feature_map(b)
    return [x, b.new((b.shape(x)[1],), "float32", const=True)], {"axis": 1}


SPATIAL: dict = {
    "nn.conv2d": _conv,
    "nn.max_pool2d": lambda b: _pool(b, "nn.max_pool2d"),
    "nn.avg_pool2d": lambda b: _pool(b, "nn.avg_pool2d"),
    "nn.global_avg_pool2d": _global_pool,
    "nn.global_max_pool2d": _global_pool,
    "nn.dense": _dense,
    "nn.bias_add": _bias,
    **{name: SAMPLERS[name] for name in (
        "nn.relu", "clip", "add", "multiply", "concatenate", "nn.batch_flatten",
        "nn.softmax", "sigmoid", "nn.leaky_relu", "nn.batch_norm", "layout_transform")
       if name in SAMPLERS},
}
# conv weighs more than the rest: a spatial program should hold a few
WEIGHTS = {"nn.conv2d": 6, "nn.relu": 2, "add": 2, "nn.bias_add": 2}

__all__ = ["SPATIAL", "WEIGHTS"]
