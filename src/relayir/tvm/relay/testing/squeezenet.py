"""``relay.testing.squeezenet``: SqueezeNet (Iandola et al., 2016) versions 1.0 and 1.1
as Relay's workload (NCHW).

A fire module squeezes its input with 1x1 convolutions, then expands it with 1x1 and 3x3
convolutions side by side and concatenates the two on the channel axis. Version 1.1
starts with a smaller convolution and pools earlier, for the same accuracy at less
compute. ``@main(%data: (batch,) + image_shape, weights...)`` → ``(batch, num_classes)``
softmax probabilities.
"""

from __future__ import annotations

from ..analysis import free_vars
from ..expr import var
from ..function import Function
from ..op import concatenate, nn
from . import layers
from .init import create_workload

_POOL = "pool"
# version → (first convolution: channels, kernel, stride, padding;
#            the stages after it: a max pool, or a fire module (squeeze, expand) channels)
_VERSIONS = {
    "1.0": ((96, 7, 2, 3), (_POOL, (16, 64), (16, 64), (32, 128), _POOL, (32, 128), (48, 192),
                            (48, 192), (64, 256), _POOL, (64, 256))),
    "1.1": ((64, 3, 2, 1), (_POOL, (16, 64), (16, 64), _POOL, (32, 128), (32, 128), _POOL,
                            (48, 192), (48, 192), (64, 256), (64, 256))),
}


def _conv(data, name: str, channels: int, kernel: int, stride: int = 1, padding: int = 0):
    return layers.conv_bias_relu(data, name=name, channels=channels,
                                 kernel_size=(kernel, kernel), strides=(stride, stride),
                                 padding=(padding, padding))


def _fire(data, squeeze: int, expand: int, prefix: str):
    net = _conv(data, f"{prefix}_input_conv", squeeze, 1)
    left = _conv(net, f"{prefix}_left_conv", expand, 1)
    right = _conv(net, f"{prefix}_right_conv", expand, 3, padding=1)
    return concatenate((left, right), axis=1)


def get_net(batch_size: int, image_shape=(3, 224, 224), num_classes: int = 1000,
            version: str = "1.0", dtype: str = "float32") -> Function:
    """The network as a function of ``data`` and its weights (free variables)."""
    if version not in _VERSIONS:
        raise ValueError(f"relay.testing.squeezenet: version must be one of "
                         f"{sorted(_VERSIONS)}, found {version!r}")
    (channels, kernel, stride, padding), stages = _VERSIONS[version]
    net = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    net = _conv(net, "conv1", channels, kernel, stride, padding)
    fires = 0
    for stage in stages:
        if stage == _POOL:
            net = nn.max_pool2d(net, pool_size=(3, 3), strides=(2, 2))
        else:
            fires += 1
            net = _fire(net, *stage, prefix=f"fire{fires}")
    net = nn.dropout(net, rate=0.5)
    net = _conv(net, "conv_final", num_classes, 1)
    net = nn.batch_flatten(nn.global_avg_pool2d(net))
    net = nn.softmax(net)
    return Function(free_vars(net), net)


def get_workload(batch_size: int = 1, num_classes: int = 1000, version: str = "1.0",
                 image_shape=(3, 224, 224), dtype: str = "float32"):
    """``(mod, params)``: the typed module and a value for every weight."""
    return create_workload(get_net(batch_size, image_shape, num_classes, version, dtype))


__all__ = ["get_net", "get_workload"]
