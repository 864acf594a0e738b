"""PyTorch frontend, spatial layers of issue 6 (transposed / 3-D convolutions, 1-D and
3-D pools, interpolation through ``image.resize*d``, pixel (un)shuffle), each compared
with eager torch through the debug executor; a sample is also built for the cpu target."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import relayir
from relayir.frontend import from_pytorch

torch.manual_seed(0)
SEQ = torch.randn(2, 4, 9)
IMG = torch.randn(1, 4, 6, 7)
VOL = torch.randn(1, 2, 5, 6, 4)


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def check(model, x, target=None):
    model = model if isinstance(model, nn.Module) else Fn(model)
    mod, params = from_pytorch(model.eval(), [("x", tuple(x.shape))])
    if target is None:
        got = relayir.create_executor("debug", mod).evaluate()(x.numpy(), **params)
    else:
        with relayir.transform.PassContext(opt_level=3):
            lib = relayir.build(mod, target=target, params=params)
        m = relayir.graph_executor.GraphModule(lib)
        m.set_input("x", x.numpy())
        m.run()
        got = m.get_output(0)
    with torch.no_grad():
        want = model(x)
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-4, atol=1e-5)
    return mod


LAYERS = {
    "conv_transpose1d": (nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1),
                         SEQ),
    "conv_transpose2d": (nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0),
                                            groups=2, dilation=(1, 2)), IMG),
    "conv3d": (nn.Conv3d(2, 4, 3, stride=(1, 2, 1), padding=1), VOL),
    "max_pool1d": (nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True), SEQ),
    "avg_pool1d": (nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False), SEQ),
    "max_pool3d": (nn.MaxPool3d((2, 3, 2), stride=(2, 1, 2), padding=(1, 1, 0)), VOL),
    "avg_pool3d": (nn.AvgPool3d(2, stride=2, ceil_mode=True), VOL),
    "pixel_shuffle": (nn.PixelShuffle(2), IMG),
    "pixel_unshuffle": (nn.PixelUnshuffle(2), torch.randn(1, 3, 4, 6)),
    "local_response_norm": (nn.LocalResponseNorm(3, alpha=0.1), IMG),  # via avg_pool3d
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer(name):
    layer, x = LAYERS[name]
    check(layer, x)


INTERPOLATE = [
    (IMG, dict(scale_factor=2, mode="nearest")),
    (IMG, dict(size=(4, 11), mode="nearest")),
    (IMG, dict(size=(9, 5), mode="nearest-exact")),
    (IMG, dict(scale_factor=1.5, mode="bilinear", align_corners=False)),
    (IMG, dict(size=(3, 10), mode="bilinear", align_corners=True)),
    (IMG, dict(size=(1, 4), mode="bilinear", align_corners=False)),
    (IMG, dict(scale_factor=(2, 0.5), mode="bicubic", align_corners=False)),
    (IMG, dict(size=(9, 9), mode="bicubic", align_corners=True)),
    (SEQ, dict(scale_factor=2.5, mode="linear", align_corners=False)),
    (SEQ, dict(size=4, mode="nearest")),
    (VOL, dict(size=(7, 3, 8), mode="trilinear", align_corners=False)),
    (VOL, dict(scale_factor=2, mode="nearest")),
]


@pytest.mark.parametrize("x,kw", INTERPOLATE, ids=[f"{k['mode']}-{i}" for i, (_, k)
                                                   in enumerate(INTERPOLATE)])
def test_interpolate(x, kw):
    mod = check(lambda t: F.interpolate(t, **kw), x)
    assert "image.resize" in mod.astext()


@pytest.mark.parametrize("model", [
    nn.Sequential(nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1), nn.ReLU()),
    Fn(lambda t: F.interpolate(t, scale_factor=2, mode="bilinear", align_corners=False)),
    nn.Sequential(nn.Conv3d(2, 3, 2), nn.MaxPool3d(2, ceil_mode=True)),
], ids=["conv_transpose", "bilinear", "conv3d_pool"])
def test_on_cpu(model):
    x = VOL if isinstance(model, nn.Sequential) and isinstance(model[0], nn.Conv3d) else IMG
    check(model, x, target="cpu")
