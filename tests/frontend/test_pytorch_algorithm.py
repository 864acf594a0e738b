"""PyTorch sorting, scans, einsum, one_hot, triangles, gather/scatter, arange and bitwise
ops: tiny modules compared with eager torch through the debug executor."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import relayir  # noqa: E402
from relayir.frontend import from_pytorch  # noqa: E402


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def check(fn, *inputs):
    model = Fn(fn)
    infos = [(f"x{i}", (tuple(x.shape), str(x.dtype).removeprefix("torch.")))
             for i, x in enumerate(inputs)]
    mod, params = from_pytorch(model, infos)
    got = relayir.create_executor("debug", mod).evaluate()(*[x.numpy() for x in inputs],
                                                           **params)
    with torch.no_grad():
        want = model(*inputs)
    wants = list(want) if isinstance(want, (tuple, list)) else [want]
    gots = list(got) if isinstance(want, (tuple, list)) else [got]
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        g = np.asarray(g)
        assert g.dtype.name == str(w.dtype).removeprefix("torch."), (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-5)
    return mod


torch.manual_seed(0)
X = torch.randn(4, 6)
X3 = torch.randn(2, 3, 4)
TIES = torch.tensor([[1.0, 3, 3, 2, 3, 0], [2, 1, 1, 2, 0, 0]])
IDX = torch.tensor([[0, 2, 1, 3, 3, 0], [3, 3, 0, 1, 2, 2]])
INTS = torch.randint(-60, 60, (3, 5), dtype=torch.int32)

CASES = {
    "sort": (lambda x: torch.sort(x, dim=1), X),
    "sort_desc_dim0": (lambda x: torch.sort(x, dim=0, descending=True), X),
    "sort_stable_ties": (lambda x: torch.sort(x, descending=True, stable=True), TIES),
    "argsort": (lambda x: torch.argsort(x, dim=-1), X),
    "argsort_stable_desc": (lambda x: torch.argsort(x, descending=True, stable=True), TIES),
    "topk": (lambda x: torch.topk(x, 3), X),
    "topk_smallest_dim0": (lambda x: torch.topk(x, 2, dim=0, largest=False), X),
    "topk_values_only": (lambda x: torch.topk(x, 2).values * 2, X),
    "cumsum": (lambda x: torch.cumsum(x, 1), X),
    "cumsum_int_to_long": (lambda i: torch.cumsum(i, 0), INTS),
    "cumsum_dtype": (lambda x: torch.cumsum(x, -1, dtype=torch.float64), X3),
    "cumprod": (lambda x: torch.cumprod(x, 0), X),
    "tril": (lambda x: torch.tril(x, 1), X),
    "triu": (lambda x: torch.triu(x, -1), X3),
    "einsum_matmul": (lambda a, b: torch.einsum("bij,bjk->bik", a, b), X3,
                      torch.randn(2, 4, 5)),
    "einsum_trace_diag": (lambda x: torch.einsum("ii->i", x) + torch.einsum("ii", x),
                          torch.randn(4, 4)),
    "einsum_ellipsis": (lambda x: torch.einsum("...ij->...ji", x), X3),
    "one_hot": (lambda i: nn.functional.one_hot(i, 5), IDX),
    "gather": (lambda x, i: torch.gather(x, 1, i), X[:2], IDX),
    "gather_dim0": (lambda x, i: torch.gather(x, 0, i[:, :4] % 4), X, IDX),
    "scatter_src": (lambda x, i: torch.zeros(3, 6).scatter(0, i[:, :3] % 3, x[:2, :3]), X, IDX),
    "scatter_value": (lambda x, i: x.scatter(1, i[:, :2], 2.5), X[:2], IDX),
    "scatter_add": (lambda x, i: x.scatter_add(1, i, x[:2] * 0 + 1), X[:2], IDX),
    "scatter_reduce_amax": (lambda x, i: x.scatter_reduce(1, i, -x, "amax"), X[:2], IDX),
    "scatter_reduce_prod": (lambda x, i: x.scatter_reduce(1, i, x, "prod"), X[:2], IDX),
    "scatter_reduce_amin_exclude_self": (
        lambda x, i: x.scatter_reduce(1, i, -x, "amin", include_self=False), X[:2], IDX),
    "scatter_reduce_sum_exclude_self": (
        lambda x, i: x.scatter_reduce(1, i[:, :3], x[:, 3:], "sum", include_self=False),
        X[:2], IDX),
    "scatter_reduce_mean": (lambda x, i: x.scatter_reduce(1, i, x * 3, "mean"), X[:2], IDX),
    "scatter_reduce_mean_exclude_self": (
        lambda x, i: x.scatter_reduce(1, i[:, :2], x[:, :2] * 3, "mean", include_self=False),
        X[:2], IDX),
    "scatter_reduce_int_amax_exclude_self": (
        lambda a, i: a[:2].scatter_reduce(1, i[:, :5], a[:2], "amax", include_self=False),
        INTS, IDX),
    "index_select": (lambda x, i: torch.index_select(x, 1, i[0]), X, IDX),
    "arange": (lambda x: x + torch.arange(6), X),
    "arange_float_step": (lambda x: x[0] * torch.arange(0.5, 3.5, 0.5), X),
    "bitwise_and_or_xor": (lambda a: (a & 6) | (a ^ a.flip(0)), INTS),
    "bitwise_not": (lambda a: ~a, INTS),
    "bool_ops": (lambda x: (x > 0) & (x < 1) | ~(x > 0.5), X),
    "shifts": (lambda a: (a << 2) + (a >> 1) + torch.bitwise_right_shift(a, 3), INTS),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op(name):
    fn, *inputs = CASES[name]
    check(fn, *inputs)


def test_static_arange_is_an_op_not_a_constant():
    mod = check(lambda x: x + torch.arange(6), X)
    assert "arange(" in mod.astext()
