"""ResNet (He et al. 2016) as torchvision builds it: ``resnet18`` ... ``resnet152``.

Stem conv7x7/2 + BN + ReLU + maxpool3x3/2, four stages of BasicBlocks (18, 34) or
Bottlenecks (50, 101, 152; stride on the 3x3 conv, "ResNet v1.5"), a 1x1 conv + BN
downsample where the shape changes, global average pool, flatten, linear. Parameter
names are torchvision's ``state_dict()`` keys (``layer2.0.downsample.1.running_var``).
"""

from __future__ import annotations

from ...errors import Error
from ...ir.expr import Expr
from ...op import nn
from .layers import ParamSet, batch_norm, classifier_head, conv2d, image_input

# depth -> (block kind, blocks per stage)
_DEPTHS = {
    18: ("basic", (2, 2, 2, 2)),
    34: ("basic", (3, 4, 6, 3)),
    50: ("bottleneck", (3, 4, 6, 3)),
    101: ("bottleneck", (3, 4, 23, 3)),
    152: ("bottleneck", (3, 8, 36, 3)),
}
_EXPANSION = {"basic": 1, "bottleneck": 4}
# The last BN of a residual branch gets a small scale, as in trained ResNets (torchvision
# can even zero it): the moving statistics are random, so BN does not renormalise, and
# with unit-scale branches the activations would grow ~1.7x per block (~1e4 at the end of
# ResNet-50), which is neither realistic nor kind to float32 comparisons.
_BRANCH_GAMMA = (0.1, 0.3)


def _block(ps: ParamSet, x: Expr, name: str, kind: str, inplanes: int, planes: int,
           stride: int) -> Expr:
    out_ch = planes * _EXPANSION[kind]
    if kind == "basic":
        y = nn.relu(batch_norm(ps, conv2d(ps, x, f"{name}.conv1", inplanes, planes, 3, stride),
                               f"{name}.bn1", planes))
        y = batch_norm(ps, conv2d(ps, y, f"{name}.conv2", planes, planes, 3), f"{name}.bn2",
                       planes, _BRANCH_GAMMA)
    else:
        y = nn.relu(batch_norm(ps, conv2d(ps, x, f"{name}.conv1", inplanes, planes, 1),
                               f"{name}.bn1", planes))
        y = nn.relu(batch_norm(ps, conv2d(ps, y, f"{name}.conv2", planes, planes, 3, stride),
                               f"{name}.bn2", planes))
        y = batch_norm(ps, conv2d(ps, y, f"{name}.conv3", planes, out_ch, 1), f"{name}.bn3",
                       out_ch, _BRANCH_GAMMA)
    if stride != 1 or inplanes != out_ch:
        x = batch_norm(ps, conv2d(ps, x, f"{name}.downsample.0", inplanes, out_ch, 1, stride),
                       f"{name}.downsample.1", out_ch)
    return nn.relu(y + x)


def resnet(num_layers: int = 18, batch_size: int = 1, image_size: int = 224,
           num_classes: int = 1000, seed: int = 0):
    """``(mod, params)`` of ResNet-``num_layers`` on ``(batch, 3, image_size, image_size)``
    NCHW float32 ``%data``; the output is ``(batch, num_classes)`` logits."""
    try:
        kind, stages = _DEPTHS[num_layers]
    except KeyError:
        raise Error(f"num_layers must be one of {sorted(_DEPTHS)}, "
                         f"found {num_layers!r}") from None
    ps = ParamSet(seed)
    data = image_input(batch_size, image_size)
    x = nn.relu(batch_norm(ps, conv2d(ps, data, "conv1", 3, 64, 7, 2), "bn1", 64))
    x = nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    inplanes = 64
    for i, blocks in enumerate(stages):
        planes = 64 * 2 ** i
        for j in range(blocks):
            stride = 2 if i > 0 and j == 0 else 1
            x = _block(ps, x, f"layer{i + 1}.{j}", kind, inplanes, planes, stride)
            inplanes = planes * _EXPANSION[kind]
    return ps.module([data], classifier_head(ps, x, "fc", inplanes, num_classes))


def resnet18(batch_size: int = 1, image_size: int = 224, num_classes: int = 1000,
             seed: int = 0):
    """torchvision ``resnet18``: BasicBlocks, stages (2, 2, 2, 2)."""
    return resnet(18, batch_size, image_size, num_classes, seed)


def resnet50(batch_size: int = 1, image_size: int = 224, num_classes: int = 1000,
             seed: int = 0):
    """torchvision ``resnet50``: Bottlenecks, stages (3, 4, 6, 3)."""
    return resnet(50, batch_size, image_size, num_classes, seed)
