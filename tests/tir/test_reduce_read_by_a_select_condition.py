"""A reduction inlined into a consumer that tests it in a select's condition and reads it
again in the other branch (``sign(max_pool2d(x))``: ``select(m > 0, 1, select(m < 0, ..))``)
must be accumulated before the condition. The lazy-branch rule (``loops._guard``), which
leaves a reduction read only in a select's untaken branch uncomputed, counted the
condition as not reading it: the condition kept the bare ``Reduce`` and the C printer
refused it (fuzz seed 33758, opt levels 2 and 3)."""

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


def _edges(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    flat = x.reshape(-1)
    flat[:6] = [np.nan, -np.inf, np.inf, -0.0, 0.0, -1e-40]
    return x


def _pool(kind, x, **kw):
    fn = relay.nn.max_pool2d if kind == "max" else relay.nn.avg_pool2d
    return fn(x, pool_size=(3, 2), strides=(3, 2), **kw)


@needs_cc
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("padding", [(0, 0, 0, 0), (1, 0, 1, 0), (1, 1, 2, 1)])
def test_sign_of_a_pool_matches_the_interpreter(kind, padding):
    x = relay.var("x", shape=(1, 2, 7, 6))
    y = relay.sign(_pool(kind, x, padding=padding, ceil_mode=True))
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    assert check(mod, [_edges((1, 2, 7, 6))], PAIRS) == []


@needs_cc
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_sign_of_a_pool_of_other_dtypes(dtype):
    """sign's integer form is a select nest too (``select(m > 0, 1, select(m < 0, ..))``)."""
    x = relay.var("x", shape=(1, 3, 4, 6), dtype=dtype)
    y = relay.sign(relay.nn.max_pool2d(x, pool_size=(2, 3), strides=(2, 3), padding=(1, 1)))
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    data = np.random.default_rng(1).integers(-3, 4, (1, 3, 4, 6)).astype(dtype)
    assert check(mod, [data], PAIRS) == []


@needs_cc
def test_the_reported_program_builds_and_agrees():
    mod, inputs, info = read_case(CORPUS / "fixed_sign_of_dilated_ceil_max_pool.relay")
    assert info["status"] == "fixed"
    assert check(mod, inputs, PAIRS) == []
