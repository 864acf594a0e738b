"""``dyn`` ops whose output shape is the value of a shape input (reshape, broadcast_to,
tile, zeros, ones, full) run as C kernels on the VM: the shape function reads the shape
inputs' values, the kernel takes the result's dims at run time. Equal to numpy at
several values, cached per value, a bad value a clear error."""

import numpy as np
import pytest

import relayir as relay
from relayir.codegen import has_compiler
from relayir.op import dynamic as dyn
from relayir.op import dynamic_params as dyn_params
from relayir.vm.shape_func import ShapeError

needs_cc = pytest.mark.skipif(not has_compiler(), reason="needs a C compiler")
R = np.random.default_rng(0)


def _model(body_fn, data_shape, shape_len):
    x = relay.var("x", shape=data_shape, dtype="float32")
    s = relay.var("s", shape=(shape_len,), dtype="int64")
    mod = relay.IRModule.from_expr(relay.Function([x, s], body_fn(x, s)))
    return relay.runtime.wrap(relay.vm.compile(mod, target="cpu"))


CASES = [  # name, body, data shape, shape-input length, [(data dims, shape value, numpy)]
    ("reshape", lambda x, s: dyn.reshape(x, s) * relay.const(2.0), (relay.Any(), 6), 2,
     [((4, 6), (3, 8), lambda a, v: a.reshape(v) * 2),
      ((2, 6), (-1, 4), lambda a, v: a.reshape(v) * 2),
      ((4, 6), (24, 1), lambda a, v: a.reshape(v) * 2)]),
    ("broadcast_to", lambda x, s: dyn.broadcast_to(x, s) + relay.const(1.0), (1, 3), 3,
     [((1, 3), (2, 4, 3), lambda a, v: np.broadcast_to(a, v) + 1),
      ((1, 3), (5, 1, 3), lambda a, v: np.broadcast_to(a, v) + 1)]),
    ("squeeze", lambda x, s: dyn_params.squeeze(x, s) - relay.const(1.0), (2, 1, 3, 1), 1,
     [((2, 1, 3, 1), (1,), lambda a, v: np.squeeze(a, tuple(v)) - 1),
      ((2, 1, 3, 1), (3,), lambda a, v: np.squeeze(a, tuple(v)) - 1)]),
    ("unsqueeze", lambda x, s: dyn_params.unsqueeze(x, s) * relay.const(3.0), (2, 3), 2,
     [((2, 3), (0, 3), lambda a, v: np.expand_dims(a, tuple(v)) * 3),
      ((2, 3), (1, 2), lambda a, v: np.expand_dims(a, tuple(v)) * 3)]),
    ("tile", lambda x, s: dyn.tile(x, s), (2, 3), 2,
     [((2, 3), (2, 2), lambda a, v: np.tile(a, v)), ((2, 3), (1, 3), lambda a, v: np.tile(a, v))]),
]


@needs_cc
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_value_shaped_dyn_ops_run_as_c_kernels(case):
    _, body, shape, n, runs = case
    model = _model(body, shape, n)
    assert model.kernel_summary().startswith("all"), model.kernel_summary()
    for dims, value, want in runs * 2:  # the second pass hits the shape cache
        a = R.standard_normal(dims).astype("float32")
        a.flat[:4] = [np.nan, np.inf, -np.inf, -0.0][:a.size]  # edge values move unchanged
        got = model.run({"x": a, "s": np.array(value, "int64")})[0]
        with np.errstate(invalid="ignore"):
            expected = want(a, value)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
        np.testing.assert_allclose(got, expected, rtol=1e-6)


@needs_cc
@pytest.mark.parametrize("fill", ["zeros", "ones", "full"])
def test_value_shaped_fills(fill):
    s = relay.var("s", shape=(2,), dtype="int64")
    v = relay.var("v", shape=(), dtype="float32")
    body = {"zeros": lambda: dyn.zeros(s), "ones": lambda: dyn.ones(s),
            "full": lambda: dyn.full(v, s)}[fill]()
    params = [s, v] if fill == "full" else [s]
    model = relay.runtime.wrap(relay.vm.compile(
        relay.IRModule.from_expr(relay.Function(params, body + relay.const(0.5))), "cpu"))
    assert model.kernel_summary().startswith("all"), model.kernel_summary()
    for shape in ((2, 3), (4, 1)):
        inputs = {"s": np.array(shape, "int64"), "v": np.float32(-2.0)}
        got = model.run({k: inputs[k] for k in ([p.name_hint for p in params])})[0]
        base = {"zeros": 0.0, "ones": 1.0, "full": -2.0}[fill]
        np.testing.assert_array_equal(got, np.full(shape, base + 0.5, "float32"))


@needs_cc
def test_a_shape_value_the_data_cannot_take_is_a_clear_error():
    model = _model(lambda x, s: dyn.reshape(x, s), (relay.Any(), 6), 2)
    with pytest.raises(ShapeError, match="reshape"):
        model.run({"x": np.zeros((4, 6), "float32"), "s": np.array([5, 5], "int64")})
