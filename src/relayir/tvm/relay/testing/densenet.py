"""``relay.testing.densenet``: Relay's DenseNet workload (NCHW), after MXNet Gluon's
model zoo.

Four dense blocks of ``bn → relu → 1x1 conv → bn → relu → 3x3 conv`` layers, with
``bn → relu → 1x1 conv → 2x2 average pool`` transitions between them that halve the
feature count. As in Relay's workload (and unlike the paper's DenseNet), a layer reads
only the previous layer's output and a block's output concatenates its layers' outputs,
without the block's input: the parameters have Relay's shapes.
``@main(%data: (batch,) + image_shape, weights...)`` → ``(batch, classes)`` logits.
"""

from __future__ import annotations

from ..analysis import free_vars
from ..expr import var
from ..function import Function
from ..op import concatenate, nn
from . import layers
from .init import create_workload

# size → (initial features, growth rate, layers per block). Relay's table says 69
# initial features for DenseNet-169 (the paper: 64); kept, so the shapes are Relay's.
SPECS = {
    121: (64, 32, (6, 12, 24, 16)),
    161: (96, 48, (6, 12, 36, 24)),
    169: (69, 32, (6, 12, 32, 32)),
    201: (64, 32, (6, 12, 48, 32)),
}


def _bn_relu_conv(data, bn_name: str, conv_name: str, channels: int, kernel: int):
    net = nn.relu(layers.batch_norm_infer(data, name=bn_name))
    return layers.conv2d(net, name=conv_name, channels=channels, kernel_size=(kernel, kernel),
                         padding=(kernel // 2, kernel // 2))


def _dense_block(data, num_layers: int, bn_size: int, growth_rate: int, block: int):
    outs = []
    for i in range(num_layers):
        index = f"{block}_{i}"
        data = _bn_relu_conv(data, f"batch_1_{index}", f"conv2d_1_{index}",
                             bn_size * growth_rate, 1)
        data = _bn_relu_conv(data, f"batch_2_{index}", f"conv2d_2_{index}", growth_rate, 3)
        outs.append(data)
    return concatenate(outs, 1)


def _transition(data, features: int, block: int):
    net = _bn_relu_conv(data, f"batch_t_{block}", f"conv_t_{block}", features, 1)
    return nn.avg_pool2d(net, pool_size=(2, 2), strides=(2, 2))


def get_net(num_init_features: int, growth_rate: int, block_config, data_shape,
            dtype: str = "float32", bn_size: int = 4, classes: int = 1000) -> Function:
    """The network as a function of ``data`` (of ``data_shape``) and its weights."""
    data = var("data", shape=tuple(data_shape), dtype=dtype)
    net = layers.conv2d(data, name="conv1", channels=num_init_features, kernel_size=(7, 7),
                        strides=(2, 2), padding=(3, 3))
    net = nn.relu(layers.batch_norm_infer(net, name="batch1"))
    net = nn.max_pool2d(net, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    features = num_init_features
    for block, num_layers in enumerate(block_config):
        net = _dense_block(net, num_layers, bn_size, growth_rate, block)
        features += num_layers * growth_rate
        if block + 1 < len(block_config):
            features //= 2
            net = _transition(net, features, block)
    net = nn.relu(layers.batch_norm_infer(net, name="batch2"))
    net = nn.batch_flatten(nn.avg_pool2d(net, pool_size=(7, 7)))
    net = layers.dense_add_bias(net, units=classes, name="dense")
    return Function(free_vars(net), net)


def get_workload(densenet_size: int = 121, classes: int = 1000, batch_size: int = 4,
                 image_shape=(3, 224, 224), dtype: str = "float32"):
    """``(mod, params)``: the typed module and a value for every weight. The batch size
    defaults to 4, as in Relay."""
    if densenet_size not in SPECS:
        raise ValueError(f"relay.testing.densenet: densenet_size must be one of "
                         f"{sorted(SPECS)}, found {densenet_size!r}")
    num_init_features, growth_rate, block_config = SPECS[densenet_size]
    net = get_net(num_init_features, growth_rate, block_config,
                  (batch_size, *image_shape), dtype, classes=classes)
    return create_workload(net)


__all__ = ["SPECS", "get_net", "get_workload"]
