"""Relay's ``CallGraph`` analysis and the ``EtaExpand`` / ``DivToMul`` passes through
``relayir.tvm``: edges, counts and recursion as Relay reports them, expansions that still
type-check, and division rewritten only where the reciprocal is a finite normal number."""

from __future__ import annotations

import numpy as np
import pytest

from relayir.tvm import IRModule, relay


def _module_with_calls():
    mod = IRModule({})
    x = relay.var("x", shape=(2,))
    f, g, h = relay.GlobalVar("f"), relay.GlobalVar("g"), relay.GlobalVar("h")
    mod[f] = relay.Function([x], x + x)
    y = relay.var("y", shape=(2,))
    mod[g] = relay.Function([y], f(y) * f(y))            # one edge, two call sites
    n = relay.var("n", shape=(), dtype="int32")
    mod[h] = relay.Function([n], relay.If(relay.equal(n, relay.const(0)), n,
                                          h(relay.subtract(n, relay.const(1)))),
                            ret_type=relay.TensorType((), "int32"))
    p = relay.var("p", shape=(2,))
    mod["main"] = relay.Function([p], g(p) + f(p))
    return mod, f, g, h


def test_call_graph_counts_edges_callers_and_self_recursion():
    mod, f, g, h = _module_with_calls()
    cg = relay.analysis.CallGraph(mod)
    assert cg.module is mod
    assert (cg.global_call_count(f), cg.global_call_count(g), cg.global_call_count("main")) \
        == (0, 1, 2)
    assert (cg.ref_count(f), cg.ref_count("g"), cg.ref_count("main")) == (2, 1, 0)
    assert cg.is_recursive(h) and cg.ref_count(h) == 1 and not cg.is_recursive(g)
    assert "#refs = 2" in cg.print_var("f") and "calls @f" in cg.print_var(g)
    assert all(name in str(cg) for name in ("@f", "@g", "@h", "@main"))


def test_eta_expand_wraps_an_uncalled_global_and_leaves_calls_alone():
    mod, f, g, _ = _module_with_calls()
    q = relay.var("q", shape=(2,))
    mod["pick"] = relay.Function([], f)
    mod["user"] = relay.Function([q], f(q))
    out = relay.transform.EtaExpand(expand_global_var=True)(mod)
    body = out["pick"].body
    assert isinstance(body, relay.Function) and len(body.params) == 1
    assert isinstance(body.body, relay.Call) and body.body.op.name_hint == "f"
    assert out["user"].body.op.name_hint == "f"                 # a callee stays a callee
    unchanged = relay.transform.EtaExpand()(mod)                # both flags off
    assert unchanged["pick"].body.name_hint == "f"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_div_to_mul_uses_the_reciprocal_in_the_divisors_dtype(dtype):
    x = relay.var("x", relay.TensorType((3,), dtype))
    c = relay.const(np.array([1.5, 4.0, -0.25], dtype))
    out = relay.transform.DivToMul()(IRModule.from_expr(x / c))
    body = out["main"].body
    assert body.op.name == "multiply"
    np.testing.assert_array_equal(body.args[1].data, (1 / c.data).astype(dtype))
    assert body.args[1].data.dtype == np.dtype(dtype)


@pytest.mark.parametrize("divisor", [0.0, np.inf, np.nan, 1e38])
def test_div_to_mul_keeps_a_division_whose_reciprocal_is_not_a_finite_normal(divisor):
    x = relay.var("x", relay.TensorType((2,), "float32"))
    c = relay.const(np.array([2.0, divisor], "float32"))
    body = relay.transform.DivToMul()(IRModule.from_expr(x / c))["main"].body
    assert body.op.name == "divide"


def test_div_to_mul_leaves_integer_division():
    x = relay.var("x", relay.TensorType((2,), "int32"))
    body = relay.transform.DivToMul()(IRModule.from_expr(x / relay.const(3)))["main"].body
    assert body.op.name == "divide"
