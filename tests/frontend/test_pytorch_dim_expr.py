"""PyTorch models with a dynamic sequence dim import with dim expressions (``2 * seq``,
``seq + 1``), not ``Any``, and run on the VM equal to torch at several lengths."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import relayir as relay  # noqa: E402
from relayir.codegen import has_compiler  # noqa: E402
from relayir.frontend import from_pytorch  # noqa: E402
from relayir.ir.dim_expr import Any, DimExpr, SymbolicDim  # noqa: E402
from relayir.ir.functor import post_order  # noqa: E402
from relayir.ir.types import TensorType, TupleType  # noqa: E402


class Block(nn.Module):
    """Self-attention with ``view(b, s, heads, d // heads)``, a ``(b * s, d)`` feed-forward
    and a ``cat`` / slice that make ``s + 1`` and ``s`` rows."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.qkv, self.proj, self.heads = nn.Linear(d, 3 * d), nn.Linear(d, d), heads
        self.norm = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = self.norm(x + self.proj(y))
        x = x + self.ffn(x.reshape(b * s, d)).view(b, s, d)
        return torch.cat([x, x[:, :1]], dim=1)


def _dims(mod) -> list:
    typed = relay.transform.InferType()(mod)
    out = []
    for node in post_order(typed["main"].body):
        stack = [node.checked_type]
        while stack:
            t = stack.pop()
            if isinstance(t, TupleType):
                stack.extend(t.fields)
            elif isinstance(t, TensorType):
                out.extend(t.shape)
    return out


@pytest.mark.parametrize("target", ["numpy", pytest.param("cpu", marks=pytest.mark.skipif(
    not has_compiler(), reason="needs a C compiler"))])
def test_transformer_imports_with_dim_expressions_and_runs(target):
    torch.manual_seed(0)
    model = Block().eval()
    mod, params = from_pytorch(model, [("x", ((2, "seq", 32), "float32"))])
    dims = _dims(mod)
    seq = SymbolicDim("seq")
    assert not any(isinstance(d, Any) for d in dims)
    assert 2 * seq in dims  # the (b * s, d) feed-forward
    assert any(isinstance(d, DimExpr) and not isinstance(d, SymbolicDim) and "min(1, seq)"
               in str(d) for d in dims)  # the cat of x[:, :1]
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target=target, params=params))
    for s in (1, 5, 16):
        x = torch.randn(2, s, 32)
        with torch.no_grad():
            want = model(x).numpy()
        np.testing.assert_allclose(np.asarray(vm.invoke("main", x.numpy())), want,
                                   rtol=1e-4, atol=1e-4)


class Tied(nn.Module):
    def forward(self, x, y):
        return torch.cat([x, x]) + y


def test_an_input_size_torch_relates_to_another_is_an_expression():
    dyn = torch.export.Dim.DYNAMIC
    ep = torch.export.export(Tied(), (torch.randn(5, 4), torch.randn(10, 4)),
                             dynamic_shapes=({0: dyn}, {0: dyn}))
    mod, params = from_pytorch(ep, [("x", (("n", 4), "float32")), ("y", ((None, 4), "float32"))])
    n = SymbolicDim("n")
    assert [p.type_annotation.shape for p in mod["main"].params] == [(n, 4), (2 * n, 4)]
    assert relay.parse(mod.astext())["main"].params[1].type_annotation.shape == (2 * n, 4)
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="numpy", params=params))
    x, y = np.ones((3, 4), "float32"), np.ones((6, 4), "float32")
    np.testing.assert_allclose(np.asarray(vm.invoke("main", x, y)), np.full((6, 4), 2.0))
    with pytest.raises(relay.Error, match=r"dim 2 \* n \(axis 0\) is 5"):
        vm.invoke("main", x, np.ones((5, 4), "float32"))
