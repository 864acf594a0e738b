"""``relay.testing.dcgan``: the DCGAN generator (Radford et al., 2015) as Relay's
workload.

A code vector of ``random_len`` numbers goes through a dense layer to a 4x4 map of
``8 * ngf`` channels; four transposed convolutions (4x4 kernels, stride 2) double the
map each time to 64x64 while halving the channels, the last one to ``oshape[0]``
channels; ``tanh`` ends it. ``@main(%data: (batch, random_len), weights...)`` →
``(batch,) + oshape`` (NCHW) or ``(batch, 64, 64, oshape[0])`` (NHWC).
"""

from __future__ import annotations

from ..analysis import free_vars
from ..expr import var
from ..function import Function
from ..op import nn, reshape, tanh
from . import layers
from .init import create_workload

_KERNEL = (4, 4)
_STRIDE = (2, 2)
# the transposed convolutions' kernel layout for each data layout
_KERNEL_LAYOUT = {"NCHW": "IOHW", "NHWC": "HWOI"}
# the batch norms' epsilon, Relay's value exactly
_BN_EPSILON = 1e-5 + 1e-12


def _check_layout(layout: str) -> None:
    if layout not in _KERNEL_LAYOUT:
        raise ValueError(f"relay.testing.dcgan: layout must be one of "
                         f"{sorted(_KERNEL_LAYOUT)}, found {layout!r}")


def _deconv2d(data, channels: int, size: int, layout: str, name: str):
    """A transposed convolution to a ``size`` x ``size`` map of ``channels`` channels:
    "same"-style padding, plus the output padding that reaches ``size`` exactly."""
    pad = tuple((k - 1) // 2 for k in _KERNEL)
    adjust = tuple((size + 2 * p - k) % s for p, k, s in zip(pad, _KERNEL, _STRIDE))
    return layers.conv2d_transpose(data, name=name, channels=channels, kernel_size=_KERNEL,
                                   strides=_STRIDE, padding=pad, output_padding=adjust,
                                   data_layout=layout, kernel_layout=_KERNEL_LAYOUT[layout])


def _deconv2d_bn_relu(data, channels: int, size: int, layout: str, prefix: str):
    """``_deconv2d``, a batch norm without scale, then ``relu``."""
    net = _deconv2d(data, channels, size, layout, f"{prefix}_deconv")
    net = layers.batch_norm_infer(net, name=f"{prefix}_batch_norm", epsilon=_BN_EPSILON,
                                  scale=False, axis=layout.index("C"))
    return nn.relu(net)


def get_net(batch_size: int, random_len: int = 100, oshape=(3, 64, 64), ngf: int = 128,
            code=None, layout: str = "NCHW", dtype: str = "float32") -> Function:
    """The generator as a function of ``data`` (or of the free variables of ``code``, an
    expression of shape ``(batch, random_len)`` to generate from) and its weights."""
    if tuple(oshape[-2:]) != (64, 64):
        raise ValueError(f"relay.testing.dcgan: the generator makes 64x64 images, "
                         f"found oshape {tuple(oshape)}")
    _check_layout(layout)
    if code is None:
        code = var("data", shape=(batch_size, random_len), dtype=dtype)
    net = nn.relu(nn.dense(code, var("dense_weight"), units=4 * 4 * ngf * 8))
    net = reshape(net, (-1, ngf * 8, 4, 4) if layout == "NCHW" else (-1, 4, 4, ngf * 8))
    for prefix, factor, size in (("g2", 4, 8), ("g3", 2, 16), ("g4", 1, 32)):
        net = _deconv2d_bn_relu(net, ngf * factor, size, layout, prefix)
    net = tanh(_deconv2d(net, oshape[-3], 64, layout, "g5_deconv"))
    return Function(free_vars(net), net)


def get_workload(batch_size: int = 1, oshape=(3, 64, 64), ngf: int = 128,
                 random_len: int = 100, layout: str = "NCHW", dtype: str = "float32"):
    """``(mod, params)``: the typed module and a value for every weight."""
    return create_workload(get_net(batch_size, random_len, oshape=oshape, ngf=ngf,
                                   layout=layout, dtype=dtype))


__all__ = ["get_net", "get_workload"]
