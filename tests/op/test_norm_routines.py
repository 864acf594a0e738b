"""softmax, log_softmax and layer_norm on the cpu target (issue 12: one C routine call
each, ``codegen/routines_norm.py``) against their numpy references: every axis
position, float32 and float64, rows holding NaN, inf and -inf (numpy's semantics:
NaN wherever the reference has it), and symbolic extents on the VM."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay

SHAPES = [((4, 37), -1), ((2, 5, 3), 1), ((3, 20, 33), 1), ((2, 3), 0), ((4, 128, 40), -1)]


def _ops(x, g, b, axis):
    return {
        "softmax": (relay.nn.softmax(x, axis), [x]),
        "log_softmax": (relay.nn.log_softmax(x, axis), [x]),
        "layer_norm": (relay.nn.layer_norm(x, g, b, axis=axis, epsilon=1e-5), [x, g, b]),
        "layer_norm_plain": (relay.nn.layer_norm(x, g, b, axis=axis, center=False,
                                                 scale=False), [x, g, b]),
    }


def _run(body, params, values, target):
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target)
    m = relay.graph_executor.GraphModule(lib)
    for p in params:
        m.set_input(p.name_hint, values[p.name_hint])
    m.run()
    return m.get_output(0), lib


def _values(shape, axis, dtype, special: bool):
    rng = np.random.default_rng(0)
    c = shape[axis]
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if special:  # one row with a NaN, one with +inf, one with -inf
        flat = np.moveaxis(x, axis, -1).reshape(-1, c)
        flat[0, c // 2] = np.nan
        flat[-1, 0] = np.inf
        if flat.shape[0] > 2:
            flat[1, -1] = -np.inf
        x = np.moveaxis(flat.reshape(np.moveaxis(x, axis, -1).shape), -1, axis).copy()
    return {"x": x, "g": rng.standard_normal(c).astype(dtype),
            "b": rng.standard_normal(c).astype(dtype)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", SHAPES)
@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan-inf"])
def test_cpu_matches_numpy_reference(shape, axis, dtype, special):
    x = relay.var("x", shape=shape, dtype=dtype)
    g = relay.var("g", shape=(shape[axis],), dtype=dtype)
    b = relay.var("b", shape=(shape[axis],), dtype=dtype)
    values = _values(shape, axis, dtype, special)
    tol = 2e-5 if dtype == "float32" else 1e-12
    for name, (body, params) in _ops(x, g, b, axis).items():
        with np.errstate(invalid="ignore"):
            want, _ = _run(body, params, values, "numpy")
        got, lib = _run(body, params, values, "cpu")
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=name)
        routine = "rl_layer_norm_" if name.startswith("layer_norm") else "rl_softmax_"
        assert f"if ({routine}" in lib.get_lib().get_source(), name


def test_float16_keeps_the_tensor_expression_compute():
    x = relay.var("x", shape=(3, 8), dtype="float16")
    values = {"x": np.random.default_rng(1).standard_normal((3, 8)).astype("float16")}
    got, lib = _run(relay.nn.softmax(x), [x], values, "cpu")
    want, _ = _run(relay.nn.softmax(x), [x], values, "numpy")
    assert "rl_softmax_" not in lib.get_lib().get_source()
    np.testing.assert_allclose(got.astype("float32"), want.astype("float32"), rtol=1e-3)


def test_symbolic_rows_on_the_vm():
    x = relay.var("x", shape=(relay.Any(), 24), dtype="float32")
    g = relay.var("g", shape=(24,), dtype="float32")
    b = relay.var("b", shape=(24,), dtype="float32")
    body = relay.Tuple([relay.nn.softmax(x), relay.nn.layer_norm(x, g, b)])
    mod = relay.IRModule.from_expr(relay.Function([x, g, b], body))
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu"))
    rng = np.random.default_rng(2)
    gv, bv = rng.standard_normal(24).astype("float32"), rng.standard_normal(24).astype("float32")
    for rows in (1, 7):
        xv = rng.standard_normal((rows, 24)).astype("float32")
        soft, norm = (np.asarray(v) for v in vm.invoke("main", xv, gv, bv))
        e = np.exp(xv - xv.max(1, keepdims=True))
        np.testing.assert_allclose(soft, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
        mean, var = xv.mean(1, keepdims=True), xv.var(1, keepdims=True)
        np.testing.assert_allclose(norm, (xv - mean) / np.sqrt(var + 1e-5) * gv + bv,
                                   rtol=1e-4, atol=1e-5)
