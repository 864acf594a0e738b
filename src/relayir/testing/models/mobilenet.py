"""MobileNetV2 (Sandler et al. 2018) as torchvision builds it.

Inverted residual blocks: 1x1 expansion conv + BN + ReLU6 (skipped when the expansion
ratio is 1), 3x3 depthwise conv (``groups`` = channels) + BN + ReLU6, 1x1 linear
projection + BN, and a residual add when stride is 1 and the width is unchanged.
ReLU6 is ``clip(x, 0, 6)``, as in TVM's imports. Parameter names are torchvision's
``state_dict()`` keys (``features.3.conv.1.0.weight``).
"""

from __future__ import annotations

from ...ir.expr import Expr
from ...op.transform import clip
from .layers import ParamSet, batch_norm, classifier_head, conv2d, image_input

# expansion t, output channels c, repeats n, first stride s
_SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
             (6, 160, 3, 2), (6, 320, 1, 1))


def make_divisible(v: float, divisor: int = 8) -> int:
    """torchvision's ``_make_divisible``: round to a multiple of 8, losing at most 10%."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _conv_bn_relu6(ps: ParamSet, x: Expr, name: str, cin: int, cout: int, kernel: int,
                   stride: int = 1, groups: int = 1) -> Expr:
    """torchvision's ``Conv2dNormActivation``: ``{name}.0`` conv, ``{name}.1`` BN, ReLU6."""
    y = conv2d(ps, x, f"{name}.0", cin, cout, kernel, stride, groups)
    return clip(batch_norm(ps, y, f"{name}.1", cout), 0.0, 6.0)


def _inverted_residual(ps: ParamSet, x: Expr, name: str, inp: int, oup: int, stride: int,
                       expand_ratio: int) -> Expr:
    hidden = int(round(inp * expand_ratio))
    y, i = x, 0
    if expand_ratio != 1:
        y = _conv_bn_relu6(ps, y, f"{name}.conv.0", inp, hidden, 1)
        i = 1
    y = _conv_bn_relu6(ps, y, f"{name}.conv.{i}", hidden, hidden, 3, stride, groups=hidden)
    y = conv2d(ps, y, f"{name}.conv.{i + 1}", hidden, oup, 1, gain=1.0)
    y = batch_norm(ps, y, f"{name}.conv.{i + 2}", oup)
    return x + y if stride == 1 and inp == oup else y


def mobilenet_v2(batch_size: int = 1, image_size: int = 224, num_classes: int = 1000,
                 width_mult: float = 1.0, seed: int = 0):
    """``(mod, params)`` of MobileNetV2 on NCHW float32 ``%data``; outputs logits."""
    ps = ParamSet(seed)
    data = image_input(batch_size, image_size)
    cin = make_divisible(32 * width_mult)
    last = make_divisible(1280 * max(1.0, width_mult))
    x = _conv_bn_relu6(ps, data, "features.0", 3, cin, 3, 2)
    index = 1
    for t, c, n, s in _SETTINGS:
        cout = make_divisible(c * width_mult)
        for j in range(n):
            x = _inverted_residual(ps, x, f"features.{index}", cin, cout, s if j == 0 else 1, t)
            cin, index = cout, index + 1
    x = _conv_bn_relu6(ps, x, f"features.{index}", cin, last, 1)
    # torchvision's classifier is Sequential(Dropout, Linear): the Linear is "classifier.1";
    # dropout is the identity at inference, so the graph leaves it out as TVM's imports do
    return ps.module([data], classifier_head(ps, x, "classifier.1", last, num_classes))
