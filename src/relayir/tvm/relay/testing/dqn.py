"""``relay.testing.dqn``: the Nature DQN (Mnih et al., 2015) as Relay's workload.

Three biased convolutions with ReLU over a stack of ``image_shape[0]`` frames, then two
dense layers to one Q-value per action: ``@main(%data: (batch,) + image_shape,
weights...)`` → ``(batch, num_actions)``.
"""

from __future__ import annotations

from ..analysis import free_vars
from ..expr import var
from ..function import Function
from ..op import nn
from . import layers
from .init import create_workload

# (name, output channels, square kernel, stride); no padding
_CONVS = (("conv1", 32, 8, 4), ("conv2", 64, 4, 2), ("conv3", 64, 3, 1))


def get_net(batch_size: int, num_actions: int = 18, image_shape=(4, 84, 84),
            dtype: str = "float32", layout: str = "NCHW") -> Function:
    """The network as a function of ``data`` and its weights (free variables)."""
    kernel_layout = layers.conv_kernel_layout(layout)
    net = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    for name, channels, kernel, stride in _CONVS:
        net = layers.conv_bias_relu(net, name=name, bias_axis=layout.index("C"),
                                    channels=channels, kernel_size=(kernel, kernel),
                                    strides=(stride, stride), padding=(0, 0),
                                    data_layout=layout, kernel_layout=kernel_layout)
    net = nn.batch_flatten(net)
    net = nn.relu(layers.dense_add_bias(net, units=512, name="dense1"))
    net = layers.dense_add_bias(net, units=num_actions, name="dense2")
    return Function(free_vars(net), net)


def get_workload(batch_size: int = 1, num_actions: int = 18, image_shape=(4, 84, 84),
                 dtype: str = "float32", layout: str = "NCHW"):
    """``(mod, params)``: the typed module and a value for every weight."""
    return create_workload(get_net(batch_size, num_actions, image_shape, dtype, layout))


__all__ = ["get_net", "get_workload"]
