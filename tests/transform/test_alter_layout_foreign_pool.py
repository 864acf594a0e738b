"""A pool whose layout names the axes differently from its input's producer (an
``NHWC`` max_pool of an ``NCHW`` conv's output) pools over other axes than the letters
say: the blocked layout must not follow into it. Before the fix AlterOpLayout moved
such a pool into ``NCHW16c``, pooled over H and W, and type inference then refused a
later ``split`` (``../shared/repro/alter_layout_split.relay``, found by an independent
fuzzer at opt level 3)."""

import shutil
from pathlib import Path

import numpy as np
import pytest

import relayir as relay
from relayir.testing.fuzz_corpus import read_case
from relayir.testing.fuzz_exec import check, evaluate
from relayir.transform.alter_op_layout import AlterOpLayout

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="needs a C compiler")
CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"

TEXT = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.max_pool2d(%0, pool_size=[3, 3], strides=[1, 2], layout="NHWC", ceil_mode=True);
  split(%1, indices_or_sections=[3, 5], axis=3)
}"""


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((1, 4, 6, 6)).astype("float32"),
            rng.standard_normal((8, 4, 3, 3)).astype("float32")]


def test_the_nhwc_pool_keeps_its_own_layout_at_level_3():
    mod = relay.parse(TEXT)
    with relay.transform.PassContext(opt_level=3):
        opt = AlterOpLayout()(relay.transform.InferType()(mod))
    text = opt.astext()
    assert 'layout="NHWC"' in text and "NCHW16c" not in text.split("max_pool2d")[1][:120]


@needs_cc
@pytest.mark.parametrize("level", [0, 3])
def test_it_builds_and_agrees_with_the_interpreter(level):
    mod = relay.parse(TEXT)
    pairs = [(e, "cpu", level) for e in ("graph", "vm", "aot")]
    assert check(mod, _inputs(), pairs) == []


@needs_cc
def test_the_reported_program_builds_at_level_3():
    mod, inputs, _ = read_case(CORPUS / "fixed_alter_layout_nhwc_pool_split.relay")
    want = evaluate(mod, inputs)
    got = evaluate(mod, inputs, "graph", "cpu", 3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
