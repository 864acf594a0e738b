"""PyTorch dynamic dimensions: the range torch derives (``Dim.DYNAMIC``) is the range the
compiled model takes (printed in the text, checked by the VM), symbolic sizes never bake
in the example's value, and the ops a YOLO head needs (``meshgrid``) import."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import relayir as relay  # noqa: E402
from relayir.frontend import from_pytorch  # noqa: E402


class EncoderLayer(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(),
                                 nn.Linear(4 * hidden, hidden))

    def forward(self, x):
        x = self.norm1(x + self.attention(x, x, x, need_weights=False)[0])
        return self.norm2(x + self.ffn(x))


class BertStyleEncoder(nn.Module):
    """Token + position embeddings, positions sliced from a fixed table as BERT does
    (``position_ids[:, :seq]``): torch derives ``seq <= max_positions`` from it."""

    def __init__(self, layers=2, hidden=64, heads=4, vocab=100, max_positions=512):
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(max_positions, hidden)
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0),
                             persistent=False)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(hidden)

    def forward(self, ids):
        seq = ids.shape[1]
        x = self.norm(self.tokens(ids) + self.positions(self.position_ids[:, :seq]))
        for layer in self.layers:
            x = layer(x)
        return x


def _bert_vm(layers, hidden, vocab=100):
    torch.manual_seed(0)
    model = BertStyleEncoder(layers, hidden, vocab=vocab).eval()
    mod, params = from_pytorch(model, [("ids", ((1, "seq"), "int64"))])
    exe = relay.vm.compile(mod, target="cpu", params=params)
    return model, mod, relay.vm.VirtualMachine(exe)


def _check_lengths(model, vm, lengths, vocab=100):
    for n in lengths:
        ids = torch.randint(0, vocab, (1, n))
        with torch.no_grad():
            want = model(ids).numpy()
        np.testing.assert_allclose(vm.invoke("main", ids.numpy()), want, rtol=1e-4, atol=1e-4)


def test_a_position_table_gives_the_range_and_one_vm_compile_serves_every_length():
    model, mod, vm = _bert_vm(layers=2, hidden=64)
    text = mod.astext()
    assert 'dim_ranges="seq=1..512"' in text  # torch's derived range, in the text
    assert "%ids: Tensor[(1, seq), int64]" in text
    assert "dyn.strided_slice" in text  # position_ids[:, :seq] at run time, not [:, :7]
    _check_lengths(model, vm, (8, 32, 128))
    for n in (513, 600):
        with pytest.raises(relay.Error, match=rf"dim seq \(axis 1\) is {n}, outside the range "
                                              r"1 <= seq <= 512"):
            vm.invoke("main", np.zeros((1, n), "int64"))


@pytest.mark.slow
def test_the_must_show_encoder_4_layers_hidden_256():
    model, _, vm = _bert_vm(layers=4, hidden=256, vocab=1000)
    _check_lengths(model, vm, (8, 32, 128), vocab=1000)
    with pytest.raises(relay.Error, match="outside the range 1 <= seq <= 512"):
        vm.invoke("main", np.zeros((1, 1024), "int64"))


def test_the_range_survives_save_and_load(tmp_path):
    model, _, vm = _bert_vm(layers=1, hidden=32)
    path = tmp_path / "bert.relayvm"
    vm.exe.save(path)
    loaded = relay.vm.VirtualMachine(relay.vm.Executable.load(path))
    _check_lengths(model, loaded, (5,))
    with pytest.raises(relay.Error, match="outside the range"):
        loaded.invoke("main", np.zeros((1, 700), "int64"))


class TableSlice(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(40.0).reshape(10, 4))

    def forward(self, x):
        return x + self.table[:x.shape[1]]


def test_a_slice_by_a_symbolic_size_is_not_the_example_size():
    s = torch.export.Dim("s", min=2, max=10)
    ep = torch.export.export(TableSlice(), (torch.ones(1, 5, 4),), dynamic_shapes=({1: s},))
    mod, params = from_pytorch(ep, [("x", ((1, "s", 4), "float32"))])
    text = mod.astext()
    assert "end=[5]" not in text and "dyn.strided_slice" in text
    assert 'dim_ranges="s=2..10"' in text  # the user's own Dim range
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu", params=params))
    for n in (2, 7, 10):
        x = torch.randn(1, n, 4)
        np.testing.assert_allclose(vm.invoke("main", x.numpy()),
                                   TableSlice()(x).numpy(), rtol=1e-6)


class SizeArithmetic(nn.Module):
    def forward(self, x):
        n = x.shape[1]
        pairs = x[:, : n - n % 2].reshape(x.shape[0], n // 2, 2)
        return pairs.sum(-1) + torch.arange(n // 2).float()


def test_sizes_computed_from_symbols_stay_symbolic():
    mod, params = from_pytorch(SizeArithmetic(), [("x", ((2, "n"), "float32"))])
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu", params=params))
    for n in (4, 7, 12):
        x = torch.randn(2, n)
        np.testing.assert_allclose(vm.invoke("main", x.numpy()), SizeArithmetic()(x).numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_an_export_failure_is_one_clear_line():
    class NeedsEven(nn.Module):
        def forward(self, x):
            return x.reshape(3, -1)

    with pytest.raises(relay.Error, match=r"torch.export failed for inputs x \(7,\)"):
        from_pytorch(NeedsEven(), [("x", (7,))])


# ---------------------------------------------------------------- meshgrid, a YOLO head


def test_meshgrid_ij_and_xy():
    class Grid(nn.Module):
        def forward(self, a, b, c):
            return (*torch.meshgrid(a, b, c, indexing="ij"),
                    *torch.meshgrid(a, b, c, indexing="xy"))

    args = (torch.arange(3.0), torch.arange(4.0) * 2, torch.arange(5.0) - 1)
    mod, _ = from_pytorch(Grid(), [("a", (3,)), ("b", (4,)), ("c", (5,))])
    got = relay.create_executor("graph", mod, target="cpu").evaluate()(
        *[a.numpy() for a in args])
    for g, w in zip(got, Grid()(*args)):
        np.testing.assert_array_equal(g, w.numpy())


class YoloHead(nn.Module):
    """A YOLOv5-style detect layer: a 1x1 conv per scale, then grid decoding."""

    def __init__(self, ch=(16, 32), classes=4, anchors=3, strides=(8, 16)):
        super().__init__()
        self.no, self.na, self.strides = classes + 5, anchors, strides
        self.convs = nn.ModuleList(nn.Conv2d(c, anchors * self.no, 1) for c in ch)
        self.register_buffer("anchors", torch.tensor(
            [[10.0, 13, 16, 30, 33, 23], [30.0, 61, 62, 45, 59, 119]]).view(2, 3, 2))

    def forward(self, a, b):
        out = []
        for i, x in enumerate((a, b)):
            x = self.convs[i](x)
            bs, _, ny, nx = x.shape
            x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
            grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()
            y = x.sigmoid()
            xy = (y[..., :2] * 2 - 0.5 + grid) * self.strides[i]
            wh = (y[..., 2:4] * 2) ** 2 * self.anchors[i].view(1, self.na, 1, 1, 2)
            out.append(torch.cat((xy, wh, y[..., 4:]), -1).view(bs, -1, self.no))
        return torch.cat(out, 1)


def test_a_yolo_head_static_on_the_graph_executor_and_dynamic_on_the_vm():
    torch.manual_seed(0)
    head = YoloHead().eval()
    a, b = torch.randn(1, 16, 8, 8), torch.randn(1, 32, 4, 4)
    mod, params = from_pytorch(head, [("a", (1, 16, 8, 8)), ("b", (1, 32, 4, 4))])
    g = relay.graph_executor.GraphModule(relay.build(mod, target="cpu", params=params))
    g.run(a=a.numpy(), b=b.numpy())
    np.testing.assert_allclose(g.get_output(0), head(a, b).detach().numpy(), rtol=1e-5,
                               atol=1e-4)
    mod, params = from_pytorch(head, [("a", (1, 16, "h", "w")), ("b", (1, 32, "h2", "w2"))])
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu", params=params))
    for h, w in ((8, 10), (12, 6)):
        a, b = torch.randn(1, 16, h, w), torch.randn(1, 32, h // 2, w // 2)
        np.testing.assert_allclose(vm.invoke("main", a.numpy(), b.numpy()),
                                   head(a, b).detach().numpy(), rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------------- what model families need


def test_a_no_grad_block_inside_forward_is_inlined():
    class Rotary(nn.Module):  # a Llama rotary embedding computes under no_grad
        def forward(self, x):
            with torch.no_grad():
                freq = torch.arange(x.shape[-1]).float() * 0.5
            return x * freq.cos() + 1

    mod, _ = from_pytorch(Rotary(), [("x", (2, 6))])
    x = torch.randn(2, 6)
    np.testing.assert_allclose(relay.create_executor("graph", mod).evaluate()(x.numpy()),
                               Rotary()(x).numpy(), rtol=1e-6)


def test_weight_norm():
    torch.manual_seed(0)
    conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 6, 3), dim=2)
    mod, params = from_pytorch(conv.eval(), [("x", (1, 4, 9))])
    x = torch.randn(1, 4, 9)
    got = relay.create_executor("graph", mod).evaluate()(x.numpy(), *params.values())
    np.testing.assert_allclose(got, conv(x).detach().numpy(), rtol=1e-5, atol=1e-5)
