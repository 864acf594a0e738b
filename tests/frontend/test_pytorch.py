"""Per-op tests of the PyTorch frontend: tiny modules, each compared with eager torch
through the debug executor (rtol 1e-4 / atol 1e-5)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import relayir
from relayir.frontend import UnsupportedOperatorError, from_pytorch, sanitize_name
from relayir.frontend.pytorch_ops import TABLE


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def check(model, *inputs):
    if not isinstance(model, nn.Module):
        model = Fn(model)
    infos = [(f"x{i}", (tuple(x.shape), str(x.dtype).removeprefix("torch.")))
             for i, x in enumerate(inputs)]
    mod, params = from_pytorch(model, infos)
    got = relayir.create_executor("debug", mod).evaluate()(*[x.numpy() for x in inputs],
                                                           **params)
    with torch.no_grad():
        want = model(*inputs)
    wants = want if isinstance(want, (tuple, list)) else [want]
    gots = got if isinstance(want, (tuple, list)) else [got]
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        g = np.asarray(g)
        assert g.dtype.name == str(w.dtype).removeprefix("torch.")
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-5)
    return mod


torch.manual_seed(0)
A = torch.randn(2, 3, 4)
B = torch.randn(2, 3, 4)
P = torch.rand(2, 3, 4) + 0.1
IMG = torch.randn(1, 3, 8, 8)
IDX = torch.tensor([[0, 2, 1], [3, 3, 0]])

ELEMENTWISE = {
    "add": (lambda a, b: a + b, A, B), "add_alpha": (lambda a, b: torch.add(a, b, alpha=2), A, B),
    "sub_scalar": (lambda a: a - 1.5, A), "rsub": (lambda a: 2 - a, A),
    "mul": (lambda a, b: a * b, A, B), "div": (lambda a, b: a / b, A, P),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"), A, P),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), A, P),
    "int_promote": (lambda i: i * 0.5 + 1, IDX), "int_true_div": (lambda i: i / 2, IDX),
    "pow": (lambda a: a ** 2, A), "pow_tensor": (lambda p, b: p ** b, P, B),
    "rpow": (lambda b: 2 ** b, B),
    "max_min": (lambda a, b: torch.maximum(a, b) - torch.minimum(a, b), A, B),
    "remainder": (lambda a: torch.remainder(a, 0.7), A), "fmod": (lambda a: torch.fmod(a, 0.7), A),
    "compare": (lambda a, b: (a < b) | (a >= 0.5) & ~(a == b), A, B),
    "ne_gt_le": (lambda a, b: torch.logical_xor(a != b, (a > b) & (a <= 0)), A, B),
    "where": (lambda a, b: torch.where(a > 0, a, b), A, B),
    "where_scalar": (lambda a: torch.where(a > 0, a, 0.0), A),
    "masked_fill": (lambda a: a.masked_fill(a < 0, -1.0), A),
    "clamp": (lambda a: a.clamp(-0.5, 0.5) + a.clamp(min=0) + a.clamp(max=0), A),
    "unary": (lambda a, p: a.abs() + a.neg() + p.log() + p.log2() + p.log10() + p.sqrt()
              + p.rsqrt() + a.exp() + a.sin() + a.cos() + a.tanh() + a.sigmoid() + a.erf()
              + a.floor() + a.ceil() + a.round() + a.trunc() + a.sign() + p.reciprocal()
              + a.square() + a.expm1() + p.log1p() + a.sinh() + a.cosh() + a.erfc(), A, P),
    "isnan": (lambda a: torch.isnan(a) | torch.isinf(a) | ~torch.isfinite(a), A),
    "lerp_addcmul": (lambda a, b: torch.lerp(a, b, 0.3) + torch.addcmul(a, a, b, value=0.5)
                     + torch.addcdiv(a, a, b.abs() + 1), A, B),
}
ACTIVATIONS = {
    name: (fn, A) for name, fn in {
        "relu": F.relu, "relu6": F.relu6, "hardtanh": lambda a: F.hardtanh(a, -0.5, 0.5),
        "leaky": lambda a: F.leaky_relu(a, 0.2), "gelu": F.gelu,
        "gelu_tanh": lambda a: F.gelu(a, approximate="tanh"), "silu": F.silu,
        "hardsigmoid": F.hardsigmoid, "hardswish": F.hardswish,
        "softplus": lambda a: F.softplus(a * 10, beta=2, threshold=5), "mish": F.mish,
        "elu": F.elu, "selu": F.selu, "celu": lambda a: F.celu(a, 0.5),
        "logsigmoid": F.logsigmoid, "softsign": F.softsign, "tanhshrink": F.tanhshrink,
        "threshold": lambda a: F.threshold(a, 0.1, 20.0),
        "softmax": lambda a: F.softmax(a, dim=1), "log_softmax": lambda a: F.log_softmax(a, -1),
    }.items()
}
SHAPES = {
    "view": (lambda a: a.view(6, 4) + 1, A), "reshape": (lambda a: a.reshape(-1, 2), A),
    "flatten": (lambda a: a.flatten(1), A), "unflatten": (lambda a: a.unflatten(2, (2, 2)), A),
    "permute": (lambda a: a.permute(2, 0, 1), A), "transpose": (lambda a: a.transpose(0, 2), A),
    "t": (lambda a: a[0].t(), A), "contiguous": (lambda a: a.transpose(1, 2).contiguous(), A),
    "unsqueeze": (lambda a: a.unsqueeze(-1), A),
    "squeeze": (lambda a: a[:, :1].squeeze(1) + a[:, :1].squeeze(), A),
    "expand": (lambda a: a[:, :1].expand(2, 5, 4), A),
    "slice": (lambda a: a[:, 1:, ::2] * 2, A), "slice_neg": (lambda a: a[..., -3:-1], A),
    "select": (lambda a: a[:, -1] + a[1, 0], A), "narrow": (lambda a: a.narrow(2, 1, 2), A),
    "index_select": (lambda a: a.index_select(2, torch.tensor([3, 0])), A),
    "index": (lambda a, i: a[:, i[0]], A, torch.tensor([[2, 0, -1]])),
    "flip": (lambda a: a.flip(0, 2), A), "roll": (lambda a: a.roll(1, 2), A),
    "cat": (lambda a, b: torch.cat([a, b], dim=-1), A, B),
    "stack": (lambda a, b: torch.stack([a, b], 1), A, B),
    "split": (lambda a: a.split(3, dim=2), A),
    "split_sizes": (lambda a: a.split([1, 3], dim=2), A),
    "chunk": (lambda a: a.chunk(2, dim=-1)[1], A), "unbind": (lambda a: a.unbind(1), A),
    "repeat": (lambda a: a.repeat(1, 2, 1), A),
    "repeat_interleave": (lambda a: a.repeat_interleave(2, dim=1), A),
    "tril_triu": (lambda a: a.tril() + a.triu(1), A),
    "pad": (lambda a: F.pad(a, (1, 2, 0, 1), value=0.5), A),
    "pad_reflect": (lambda x: F.pad(x, (1, 1, 2, 2), mode="reflect"), IMG),
    "pad_replicate": (lambda x: F.pad(x, (1, 1, 2, 2), mode="replicate"), IMG),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x.repeat(1, 4, 1, 1), 2), IMG),
}
REDUCE = {
    "sum": (lambda a: a.sum(1) + a.sum(), A), "mean": (lambda a: a.mean((0, 2), keepdim=True), A),
    "amax": (lambda a: a.amax(-1) - a.amin(-1) + a.amax((0, 1)).sum(), A),
    "max_dim": (lambda a: a.max(1), A), "min_dim": (lambda a: a.min(2, keepdim=True)[0], A),
    "max_all": (lambda a: a.max() - a.min(), A),
    "argmax": (lambda a: (a.argmax(1), a.argmin(-1, keepdim=True), a.argmax()), A),
    "prod": (lambda p: p.prod(1), P), "var_std": (lambda a: a.var(1) + a.std(1, unbiased=False), A),
    "logsumexp": (lambda a: a.logsumexp(-1), A),
    "all_any": (lambda a: (a > 0).all(1) | (a > 1).any(1), A),
    "norm": (lambda a: torch.linalg.vector_norm(a, dim=-1) + a.norm(p=1), A),
    "sum_int": (lambda i: i.sum(0), IDX),
}
LINALG = {
    "matmul_nd": (lambda a, b: a @ b.transpose(-1, -2), A, B),
    "matmul_2d": (lambda a, b: a[0] @ b[0].t(), A, B),
    "matmul_nd_2d": (lambda a, b: a @ b[0].t(), A, B),
    "matmul_vec": (lambda a, b: a @ b[0, 0] + b[0, 0] @ a[0].t(), A, B),
    "matmul_4d_broadcast": (lambda a, b: a.unsqueeze(0) @ b.transpose(1, 2).unsqueeze(1), A, B),
    "bmm": (lambda a, b: torch.bmm(a, b.transpose(1, 2)), A, B),
    "mm_addmm": (lambda a, b: torch.addmm(a[0, :, :3], a[0], b[0].t(), beta=0.5, alpha=2)
                 + torch.mm(a[1], b[1].t()), A, B),
    "baddbmm": (lambda a, b: torch.baddbmm(a[:, :, :3], a, b.transpose(1, 2)), A, B),
    "dot_outer": (lambda a, b: torch.outer(a[0, 0], b[0, 0]) * torch.dot(a[0, 0], b[0, 0]), A, B),
    "sdpa": (lambda q, k: F.scaled_dot_product_attention(q, k, k), A.reshape(1, 2, 3, 4),
             B.reshape(1, 2, 3, 4)),
    "sdpa_causal_mask": (lambda q, k: F.scaled_dot_product_attention(q, k, k, is_causal=True)
                         + F.scaled_dot_product_attention(q, k, q, attn_mask=q[..., :3] > 0,
                                                          scale=0.3), A, B),
    "sdpa_float_mask": (lambda q, k: F.scaled_dot_product_attention(
        q, k, k, attn_mask=q[0, :, :3]), A, B),
}
CREATION = {
    "arange": (lambda a: a + torch.arange(4), A),
    "arange_start": (lambda a: a * torch.arange(1, 9, 2, dtype=torch.float32), A),
    "zeros_ones_full": (lambda a: a + torch.zeros(3, 4) + torch.ones(4)
                        + torch.full((1, 4), 2.0), A),
    "like": (lambda a: torch.zeros_like(a) + torch.ones_like(a) + torch.full_like(a, 3), A),
    "new_full": (lambda a: a.new_full((3, 4), 7.0) + a.new_zeros(4), A),
    "to": (lambda a: a.to(torch.int64) + a.long() * 2, A),
    "to_float": (lambda i: i.float() / 3, IDX), "type_as": (lambda i, a: i.type_as(a), IDX, A),
}


@pytest.mark.parametrize("case", [pytest.param(c, id=n) for t in
                                  (ELEMENTWISE, ACTIVATIONS, SHAPES, REDUCE, LINALG, CREATION)
                                  for n, c in t.items()])
def test_op(case):
    fn, *xs = case
    check(fn, *xs)


class Layers(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, stride=2, padding=1, bias=False)
        self.dw = nn.Conv2d(6, 6, 3, padding="same", groups=3, dilation=2)
        self.bn = nn.BatchNorm2d(6)
        self.gn = nn.GroupNorm(2, 6)
        self.inorm = nn.InstanceNorm2d(6, affine=True)
        self.ln = nn.LayerNorm([4, 4])
        self.conv1d = nn.Conv1d(6, 4, 3, padding=1)
        self.prelu = nn.PReLU(6)

    def forward(self, x):
        y = self.bn(self.conv(x))
        y = self.prelu(self.dw(y)) + self.gn(y) + self.inorm(y)
        y = self.ln(y)
        a = F.avg_pool2d(y, 2, 2, padding=1, ceil_mode=True).repeat(1, 1, 2, 2)[..., :4, :4]
        a = a + F.max_pool2d(y, 3, stride=1, padding=1)
        a = a + F.avg_pool2d(y, 3, 1, 1, count_include_pad=False)
        z = self.conv1d(a.flatten(2))
        return (F.adaptive_avg_pool2d(a, 2), F.adaptive_avg_pool2d(a, 1),
                F.adaptive_max_pool2d(a, 1), F.max_pool1d(z, 2), F.avg_pool1d(z, 2),
                F.adaptive_avg_pool1d(z, 4), F.dropout(z, 0.5, training=False))


def test_layers():
    model = Layers().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    check(model, IMG)


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3)
        self.lin = nn.Linear(3, 2)

    def forward(self, i):
        return self.lin(self.emb(i))


def test_embedding_linear():
    check(Embed(), IDX)


@pytest.mark.parametrize("mode, kw", [("nearest", {"scale_factor": 2}),
                                      ("nearest", {"size": (5, 7)}),
                                      ("bilinear", {"scale_factor": 2, "align_corners": False}),
                                      ("bilinear", {"size": (5, 11), "align_corners": True})])
def test_interpolate(mode, kw):
    check(lambda x: F.interpolate(x, mode=mode, **kw), IMG)


def test_names_and_text_round_trip():
    seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    mod = check(seq, A)
    names = [p.name_hint for p in mod["main"].params]
    assert names == ["x0", "0.weight", "0.bias", "2.weight", "2.bias"]
    text = mod.astext()
    assert '%"0.weight"' in text
    relayir.ir.assert_structural_equal(relayir.parse(text), mod)


def test_keep_params_as_inputs_false():
    mod, params = from_pytorch(nn.Linear(4, 2), [("x", (3, 4))], keep_params_as_inputs=False)
    assert params == {} and [p.name_hint for p in mod["main"].params] == ["x"]


def test_exported_program_and_dtype_spec():
    ep = torch.export.export(Embed().eval(), (IDX,))
    mod, params = from_pytorch(ep, [("ids", ((2, 3), "int64"))])
    assert mod["main"].params[0].type_annotation.dtype == "int64"
    assert "emb.weight" in params


def test_unsupported_error_counts():
    def fn(x):
        return torch.lgamma(x) + torch.lgamma(x * 2) + torch.special.i0(x)

    with pytest.raises(UnsupportedOperatorError) as info:
        from_pytorch(Fn(fn), [("x", (2, 3))])
    assert info.value.missing["aten.lgamma.default"] == 2
    assert len(info.value.missing) == 2


def test_sanitize_name():
    assert sanitize_name("layer1.0.conv1.weight") == "layer1.0.conv1.weight"
    assert sanitize_name("0.weight") == "0.weight"
    assert sanitize_name("a b/c") == "a_b_c"


def test_table_size():
    assert len(TABLE) >= 150
