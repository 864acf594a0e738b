"""A float product is accumulated as numpy does: one accumulator, memory order. The
reduction loop of ``prod`` was a ``#pragma omp simd reduction(*)`` (and a whole-tensor
one split across threads): partial products of tiny values underflowed to 0 in one lane
while another held inf, and inf * 0 gave NaN where numpy gives inf (fuzz seed 33071)."""

import shutil
from pathlib import Path

import numpy as np
import pytest

import relayir as relay
from relayir.testing.fuzz_corpus import read_case
from relayir.testing.fuzz_exec import check

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="needs a C compiler")
CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
PAIRS = [(e, "cpu", level) for e in ("graph", "vm", "aot") for level in (0, 3)]


def _inf_then_tiny(n, dtype="float32", stride=8):
    """inf first, then tiny values every ``stride`` elements (one simd lane's worth, and
    all of them in a second thread's half), the rest near 1: numpy's product is inf."""
    x = np.random.default_rng(0).uniform(0.5, 1.5, n).astype(dtype)
    x[0] = np.inf
    x[stride::stride] = np.finfo(dtype).tiny
    return x


@needs_cc
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [64, 1 << 18])  # a simd reduction; one split across threads
def test_a_whole_tensor_product_keeps_inf(dtype, n):
    data = _inf_then_tiny(n, dtype)
    assert np.prod(data) == np.inf
    x = relay.var("x", shape=(n,), dtype=dtype)
    mod = relay.IRModule.from_expr(relay.Function([x], relay.prod(x)))
    assert check(mod, [data], PAIRS) == []


@needs_cc
@pytest.mark.parametrize("axis", [None, (0, 2), (1, 2), 2])
def test_a_product_over_several_axes_keeps_inf(axis):
    data = _inf_then_tiny(4 * 6 * 32, stride=4).reshape(4, 6, 32)
    data[:, :, 0] = -np.inf
    x = relay.var("x", shape=data.shape)
    mod = relay.IRModule.from_expr(relay.Function([x], relay.prod(x, axis=axis)))
    assert check(mod, [data], PAIRS) == []


@needs_cc
def test_the_generated_product_has_one_accumulator():
    x = relay.var("x", shape=(64,))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.prod(x))), "cpu")
    source = lib.get_lib().get_source()
    assert "reduction(*" not in source.replace(" ", "")


@needs_cc
def test_the_reported_program_agrees():
    mod, inputs, info = read_case(CORPUS / "fixed_dyn_prod_inf_times_underflow.relay")
    assert info["status"] == "fixed"
    # dyn.prod: AOT refuses a kernel with a dynamic reduction, the VM runs it
    assert check(mod, inputs, [p for p in PAIRS if p[0] != "aot"]) == []
