"""The graph executor's per-call path reads a large input from the caller's array (its
kernels re-pointed at it, no copy) and falls back to copying wherever that would not be
safe: every path gives the same outputs, run after run, whatever came before."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.graph_executor import IN_PLACE_BYTES, GraphModule

R = np.random.default_rng(0)
BIG = (64, 1024)  # 256 KiB of float32: read in place
SMALL = (4, 1024)


def _model(rows: int):
    x = relay.var("x", shape=(rows, 1024))
    w = relay.const(R.standard_normal((32, 1024)).astype("float32") * 0.05)
    y = relay.nn.relu(relay.nn.dense(x, w)) + relay.const(np.float32(1))
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(relay.Function([x], y)), target="cpu")
    return lib, w.data


def _want(x, w):
    return np.maximum(x @ w.T, 0) + 1


def test_a_large_input_is_read_in_place_and_every_call_sees_its_own_array():
    lib, w = _model(BIG[0])
    model = relay.runtime.wrap(lib)
    xs = [R.standard_normal(BIG).astype("float32") for _ in range(3)]
    assert xs[0].nbytes >= IN_PLACE_BYTES
    for x in xs + xs[::-1]:
        np.testing.assert_allclose(model.run([x])[0], _want(x, w), rtol=1e-4, atol=1e-4)
    want = _want(xs[0], w)
    out = model.run([xs[0]])[0]
    xs[0][:] = 0  # the caller's array changes after the call: the result it got does not
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_inputs_that_cannot_be_read_in_place_are_copied():
    lib, w = _model(BIG[0])
    model = relay.runtime.wrap(lib)
    x = R.standard_normal(BIG).astype("float32")
    fortran = np.asfortranarray(x)  # not C-contiguous: copied, the same values
    np.testing.assert_allclose(model.run([x])[0], _want(x, w), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(model.run([fortran])[0], _want(x, w), rtol=1e-4, atol=1e-4)
    small_lib, _ = _model(SMALL[0])
    gm = GraphModule(small_lib)
    assert gm._in_place == {}  # 16 KiB: a copy is cheaper than re-pointing


def test_set_input_after_an_in_place_call_points_the_kernels_back():
    lib, w = _model(BIG[0])
    gm = GraphModule(lib)
    a, b = (R.standard_normal(BIG).astype("float32") for _ in range(2))
    out = gm.run_checked([a])[0]
    assert gm._bound["x"] is a  # read in place
    np.testing.assert_allclose(out, _want(a, w), rtol=1e-4, atol=1e-4)
    assert np.array_equal(gm.get_input("x"), a)
    gm.set_input("x", b)  # the TVM-style path copies into the executor's own buffer
    assert not gm._bound
    a[:] = np.nan  # ... and no kernel reads the caller's old array any more
    gm.run()
    np.testing.assert_allclose(gm.get_output(0), _want(b, w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("executor", ["graph", "aot", "vm"])
def test_every_executor_agrees_on_the_same_large_input(executor):
    lib, w = _model(BIG[0])
    x = R.standard_normal(BIG).astype("float32")
    x_mod = relay.IRModule.from_expr(relay.Function(
        [v := relay.var("x", shape=BIG)],
        relay.nn.relu(relay.nn.dense(v, relay.const(w))) + relay.const(np.float32(1))))
    got = relay.create_executor(executor, mod=x_mod, target="cpu").evaluate()(x)
    np.testing.assert_allclose(got, relay.runtime.wrap(lib).run([x])[0], rtol=1e-5,
                               atol=1e-5)
