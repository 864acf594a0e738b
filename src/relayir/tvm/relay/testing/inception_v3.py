"""``relay.testing.inception_v3``: Inception v3 (Szegedy et al., 2015) as Relay's
workload (NCHW, for images of about 299x299), after MXNet's example symbol.

Every convolution is unbiased and followed by a batch norm without scale and ReLU. A
module runs towers of such convolutions side by side on its input, plus a 3x3 pooling
tower, and concatenates them on the channel axis. The modules are written as tables
(``_block_a`` ... ``_block_e``) that one builder, ``_module``, reads.
``@main(%data: (batch,) + image_shape, weights...)`` → ``(batch, num_classes)``
softmax probabilities.
"""

from __future__ import annotations

from ..analysis import free_vars
from ..expr import var
from ..function import Function
from ..op import concatenate, nn
from . import layers
from .init import create_workload

_BN_EPSILON = 2e-5


def _c(suffix: str, filters: int, kernel=1, pad=0, stride=1) -> tuple:
    """One convolution of a tower: its name suffix and attributes (an int is square)."""
    def pair(v):
        return (v, v) if isinstance(v, int) else tuple(v)
    return suffix, filters, pair(kernel), pair(pad), pair(stride)


def _conv(data, prefix: str, spec: tuple):
    suffix, filters, kernel, pad, stride = spec
    name = f"{prefix}{suffix}"
    return layers.conv_bn_relu(data, conv_name=f"{name}_conv1", bn_name=f"{name}_bn",
                               epsilon=_BN_EPSILON, scale=False, channels=filters,
                               kernel_size=kernel, strides=stride, padding=pad)


def _pool(data, kind: str, size: int, stride: int, pad: int):
    attrs = {"pool_size": (size, size), "strides": (stride, stride), "padding": (pad, pad)}
    if kind == "max":
        return nn.max_pool2d(data, **attrs)
    if kind == "avg":
        return nn.avg_pool2d(data, count_include_pad=True, **attrs)
    raise ValueError(f"relay.testing.inception_v3: pool must be 'max' or 'avg', found {kind!r}")


# A module table: (towers, pool). A tower is (name suffix, convolutions in a chain,
# convolutions that each read the chain's end and are all outputs, or () when the
# chain's end is the output). The pool is (kind, stride, padding, 1x1 projection
# channels or 0); its tower comes last in the concatenation.

def _block_a(n1x1, n3x3_red, n3x3_1, n3x3_2, n5x5_red, n5x5, pool, proj):
    return ((("_conv", (_c("", n1x1),), ()),
             ("_tower", (_c("_conv", n5x5_red), _c("_conv_1", n5x5, 5, 2)), ()),
             ("_tower_1", (_c("_conv", n3x3_red), _c("_conv_1", n3x3_1, 3, 1),
                           _c("_conv_2", n3x3_2, 3, 1)), ())),
            (pool, 1, 1, proj))


def _block_b(n3x3, nd3x3_red, nd3x3_1, nd3x3_2):
    return ((("_conv", (_c("", n3x3, 3, 0, 2),), ()),
             ("_tower", (_c("_conv", nd3x3_red), _c("_conv_1", nd3x3_1, 3, 1),
                         _c("_conv_2", nd3x3_2, 3, 0, 2)), ())),
            ("max", 2, 0, 0))


def _block_c(n1x1, nd7_red, nd7_1, nd7_2, nq7_red, nq7_1, nq7_2, nq7_3, nq7_4, pool, proj):
    row, col = ((1, 7), (0, 3)), ((7, 1), (3, 0))
    return ((("_conv", (_c("", n1x1),), ()),
             ("_tower", (_c("_conv", nd7_red), _c("_conv_1", nd7_1, *row),
                         _c("_conv_2", nd7_2, *col)), ()),
             ("_tower_1", (_c("_conv", nq7_red), _c("_conv_1", nq7_1, *col),
                           _c("_conv_2", nq7_2, *row), _c("_conv_3", nq7_3, *col),
                           _c("_conv_4", nq7_4, *row)), ())),
            (pool, 1, 1, proj))


def _block_d(n3x3_red, n3x3, nd7_red, nd7_1, nd7_2, nd7_3x3, pool):
    return ((("_tower", (_c("_conv", n3x3_red), _c("_conv_1", n3x3, 3, 0, 2)), ()),
             ("_tower_1", (_c("_conv", nd7_red), _c("_conv_1", nd7_1, (1, 7), (0, 3)),
                           _c("_conv_2", nd7_2, (7, 1), (3, 0)),
                           _c("_conv_3", nd7_3x3, 3, 0, 2)), ())),
            (pool, 2, 0, 0))


def _block_e(n1x1, nd3_red, nd3_1, nd3_2, n3x3_d3_red, n3x3, n3x3_d3_1, n3x3_d3_2, pool,
             proj):
    def split(a, b):
        return (_c("_mixed_conv", a, (1, 3), (0, 1)), _c("_mixed_conv_1", b, (3, 1), (1, 0)))
    return ((("_conv", (_c("", n1x1),), ()),
             ("_tower", (_c("_conv", nd3_red),), split(nd3_1, nd3_2)),
             ("_tower_1", (_c("_conv", n3x3_d3_red), _c("_conv_1", n3x3, 3, 1)),
              split(n3x3_d3_1, n3x3_d3_2))),
            (pool, 1, 1, proj))


def _module(data, name: str, table):
    towers, (kind, stride, pad, proj) = table
    outs = []
    for suffix, chain, split in towers:
        net = data
        for spec in chain:
            net = _conv(net, f"{name}{suffix}", spec)
        outs.extend([_conv(net, f"{name}{suffix}", spec) for spec in split] or [net])
    net = _pool(data, kind, 3, stride, pad)
    if proj:
        net = _conv(net, f"{name}_tower_2", _c("_conv", proj))
    outs.append(net)
    return concatenate(outs, axis=1)


# (module name, table): mixed..mixed_2 at 35x35, mixed_3 reduces to 17x17, mixed_4..7
# at 17x17, mixed_8 reduces to 8x8, mixed_9 and mixed_10 at 8x8
_MODULES = (
    ("mixed", _block_a(64, 64, 96, 96, 48, 64, "avg", 32)),
    ("mixed_1", _block_a(64, 64, 96, 96, 48, 64, "avg", 64)),
    ("mixed_2", _block_a(64, 64, 96, 96, 48, 64, "avg", 64)),
    ("mixed_3", _block_b(384, 64, 96, 96)),
    ("mixed_4", _block_c(192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192)),
    ("mixed_5", _block_c(192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192)),
    ("mixed_6", _block_c(192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192)),
    ("mixed_7", _block_c(192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192)),
    ("mixed_8", _block_d(192, 320, 192, 192, 192, 192, "max")),
    ("mixed_9", _block_e(320, 384, 384, 384, 448, 384, 384, 384, "avg", 192)),
    ("mixed_10", _block_e(320, 384, 384, 384, 448, 384, 384, 384, "max", 192)),
)

# the stem: (name, convolution) or a 3x3 stride-2 max pool (None)
_STEM = (("conv", _c("", 32, 3, 0, 2)), ("conv_1", _c("", 32, 3)),
         ("conv_2", _c("", 64, 3, 1)), None, ("conv_3", _c("", 80, 1)),
         ("conv_4", _c("", 192, 3)), None)


def get_net(batch_size: int, num_classes: int = 1000, image_shape=(3, 299, 299),
            dtype: str = "float32") -> Function:
    """The network as a function of ``data`` and its weights (free variables)."""
    net = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    for step in _STEM:
        net = _pool(net, "max", 3, 2, 0) if step is None else _conv(net, *step)
    for name, table in _MODULES:
        net = _module(net, name, table)
    net = nn.batch_flatten(_pool(net, "avg", 8, 1, 0))
    net = nn.dense(net, var("fc1_weight"), units=num_classes)
    # Relay names this bias fc2_bias, beside fc1_weight
    net = nn.softmax(nn.bias_add(net, var("fc2_bias"), axis=-1))
    return Function(free_vars(net), net)


def get_workload(batch_size: int = 1, num_classes: int = 1000, image_shape=(3, 299, 299),
                 dtype: str = "float32"):
    """``(mod, params)``: the typed module and a value for every weight."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))


__all__ = ["get_net", "get_workload"]
