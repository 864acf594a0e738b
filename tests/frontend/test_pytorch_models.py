"""The PyTorch model zoo imported through ``from_pytorch``, each checked against eager
torch (float32, rtol 1e-4 / atol 1e-5) through the debug executor and, built at opt
level 3 for the cpu target, through the graph executor."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import relayir
from relayir.frontend import UnsupportedOperatorError, from_pytorch
from relayir.testing.models import torch_models as tm


def _randomize(model: nn.Module, seed: int = 0) -> nn.Module:
    """Deterministic weights with O(1) activations; batch-norm statistics not trivial."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.dtype.is_floating_point:
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            elif name.endswith("running_mean") or name.endswith("bias"):
                t.copy_(torch.randn(t.shape, generator=g) * 0.1)
            elif t.dim() <= 1:
                t.copy_(1 + torch.randn(t.shape, generator=g) * 0.1)
            else:
                fan_in = t[0].numel()
                t.copy_(torch.randn(t.shape, generator=g) / fan_in**0.5)
    return model.eval()


def check(model, infos, *inputs, rtol=1e-4, atol=1e-5, native=True):
    mod, params = from_pytorch(model, infos)
    arrays = [x.numpy() for x in inputs]
    run = relayir.create_executor("debug", mod).evaluate()
    got = run(*arrays, **params)
    with torch.no_grad():
        want = model(*inputs)
    wants = [w.numpy() for w in (want if isinstance(want, (tuple, list)) else [want])]
    gots = got if isinstance(want, (tuple, list)) else [got]
    for g, w in zip(gots, wants):
        np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=atol)
    if native:
        with relayir.transform.PassContext(opt_level=3):
            lib = relayir.build(mod, target="cpu", params=params)
        m = relayir.graph_executor.GraphModule(lib)
        m.run(**{name: a for (name, *_), a in zip(infos, arrays)})
        for i, w in enumerate(wants):
            np.testing.assert_allclose(m.get_output(i), w, rtol=rtol, atol=atol)
    return mod, params


def test_mlp():
    model = _randomize(tm.build("mlp", in_features=32, hidden=16, num_classes=10))
    mod, params = check(model, [("x", (3, 32))], torch.randn(3, 32))
    assert [p.name_hint for p in mod["main"].params] == [
        "x", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert set(params) == {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}


def test_resnet18():
    model = _randomize(tm.build("resnet18", num_classes=10))
    mod, params = check(model, [("data", (1, 3, 32, 32))], torch.randn(1, 3, 32, 32))
    assert "layer1.0.conv1.weight" in params
    assert '%"layer1.0.conv1.weight"' in mod.astext()


def test_mobilenet_v2():
    model = _randomize(tm.build("mobilenet_v2", num_classes=10, width_mult=0.25))
    check(model, [("data", (1, 3, 32, 32))], torch.randn(1, 3, 32, 32))


def _bert():
    return _randomize(tm.build("bert", num_layers=2, hidden=32, heads=4, intermediate=64,
                               vocab=50, max_position=64))


def test_bert():
    ids = torch.randint(0, 50, (2, 8))
    check(_bert(), [("input_ids", ((2, 8), "int64"))], ids)


def test_bert_dynamic_sequence_length():
    model = _bert()
    mod, params = from_pytorch(model, [("input_ids", ((1, "seq"), "int64"))])
    ty = mod["main"].params[0].type_annotation
    assert ty.shape[0] == 1 and isinstance(ty.shape[1], relayir.SymbolicDim)
    run = relayir.create_executor("debug", mod).evaluate()
    for n in (5, 12):
        ids = torch.randint(0, 50, (1, n))
        with torch.no_grad():
            want = model(ids).numpy()
        got = np.asarray(run(ids.numpy(), **params))
        assert got.shape == (1, n, 32)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


class UNet(nn.Module):
    """Two levels: conv blocks, max-pool down, nearest/bilinear up, skip concat."""

    def __init__(self, c=4):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU())
        self.mid = nn.Conv2d(2 * c, 2 * c, 3, padding=1)
        self.dec2 = nn.Conv2d(4 * c, c, 3, padding=1)
        self.dec1 = nn.Conv2d(2 * c, 2, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = F.relu(self.mid(F.max_pool2d(e2, 2)))
        d2 = F.relu(self.dec2(torch.cat([F.interpolate(m, scale_factor=2.0), e2], dim=1)))
        up = F.interpolate(d2, scale_factor=2.0, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.dec1(torch.cat([up, e1], dim=1)))


def test_unet():
    check(_randomize(UNet()), [("image", (1, 3, 16, 16))], torch.randn(1, 3, 16, 16))


class ViT(nn.Module):
    """Patch embedding (strided conv), class token, position embedding, pre-norm encoder
    blocks with ``nn.MultiheadAttention``-free sdpa attention, and a head."""

    def __init__(self, dim=32, heads=4, patch=4, image=16, depth=2, classes=5):
        super().__init__()
        self.heads = heads
        self.patch = nn.Conv2d(3, dim, patch, stride=patch)
        n = (image // patch) ** 2
        self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim))
        self.blocks = nn.ModuleList(
            nn.ModuleDict({"ln1": nn.LayerNorm(dim), "qkv": nn.Linear(dim, 3 * dim),
                           "proj": nn.Linear(dim, dim), "ln2": nn.LayerNorm(dim),
                           "fc1": nn.Linear(dim, 2 * dim), "fc2": nn.Linear(2 * dim, dim)})
            for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        b, n, d = x.shape
        for blk in self.blocks:
            qkv = blk["qkv"](blk["ln1"](x)).reshape(b, n, 3, self.heads, d // self.heads)
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
            a = F.scaled_dot_product_attention(q, k, v)
            x = x + blk["proj"](a.transpose(1, 2).reshape(b, n, d))
            x = x + blk["fc2"](F.gelu(blk["fc1"](blk["ln2"](x)), approximate="tanh"))
        return self.head(self.norm(x)[:, 0])


def test_vit():
    check(_randomize(ViT()), [("pixels", (2, 3, 16, 16))], torch.randn(2, 3, 16, 16))


class Unsupported(nn.Module):
    def forward(self, x):
        y = torch.lgamma(x) + torch.lgamma(x + 1)
        return torch.special.i0(y) + torch.relu(x)


def test_unsupported_ops_listed_together():
    with pytest.raises(UnsupportedOperatorError) as info:
        from_pytorch(Unsupported(), [("x", (3, 4))])
    err = info.value
    assert err.missing == {"aten.lgamma.default": 2, "aten.special_i0.default": 1}
    assert "aten.lgamma.default: 2" in str(err) and "aten.special_i0.default: 1" in str(err)


class SequenceClassifier(nn.Module):
    """Token embedding, a two-layer recurrent encoder, a linear head. The LSTM variant is
    bidirectional and classifies from the last step's output; the GRU variant reads the
    top layer's final hidden state."""

    def __init__(self, cell="lstm", vocab=50, dim=16, hidden=24, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        bidirectional = cell == "lstm"
        layer = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = layer(dim, hidden, num_layers=2, batch_first=True,
                         bidirectional=bidirectional)
        self.head = nn.Linear(hidden * (2 if bidirectional else 1), classes)

    def forward(self, ids):
        out, state = self.rnn(self.embed(ids))
        if isinstance(self.rnn, nn.LSTM):
            return self.head(out[:, -1])
        return self.head(state[-1])


@pytest.mark.filterwarnings("ignore:The tensor attributes:UserWarning")
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_recurrent_sequence_classifier(cell):
    """Through the interpreter, then built for the cpu target and run by the graph
    executor."""
    model = _randomize(SequenceClassifier(cell))
    ids = torch.randint(0, 50, (2, 8))
    mod, params = check(model, [("tokens", ((2, 8), "int64"))], ids)
    with relayir.transform.PassContext(opt_level=3):
        lib = relayir.build(mod, target="cpu", params=params)
    m = relayir.graph_executor.GraphModule(lib)
    m.set_input("tokens", ids.numpy())
    m.run()
    with torch.no_grad():
        want = model(ids).numpy()
    np.testing.assert_allclose(m.get_output(0), want, rtol=1e-4, atol=1e-5)
