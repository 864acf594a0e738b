"""``ToMixedPrecision``: which ops run in the mixed type, shared casts, retyped lets,
float32 kept where the mixed type is unsafe, and results against the float32 program."""

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error
from relayir.ir import TensorType
from relayir.ir.expr import If, Let
from relayir.ir.functor import post_order
from relayir.transform import InferType, PassContext, ToMixedPrecision


def _main(expr, params):
    return InferType()(relay.IRModule.from_expr(relay.Function(params, expr)))


def _ops(mod):
    return [(n.op.name, getattr(n.checked_type, "dtype", None))
            for n in post_order(mod["main"]) if isinstance(n, relay.Call)]


def _run(mod, *args):
    return relay.create_executor("debug", mod).evaluate()(*args)


def test_conv_runs_in_float16_and_softmax_in_float32_with_one_cast_between():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    conv = relay.nn.conv2d(x, w, padding=(1, 1))
    mod = _main(relay.nn.softmax(relay.add(conv, conv)), [x, w])
    amp = ToMixedPrecision("float16")(mod)
    assert _ops(amp) == [("cast", "float16"), ("cast", "float16"), ("nn.conv2d", "float16"),
                         ("add", "float16"), ("cast", "float32"), ("nn.softmax", "float32")]
    conv_call = amp["main"].body.args[0].args[0].args[0]
    assert conv_call.op.name == "nn.conv2d" and conv_call.attrs.out_dtype == "float16"
    xs = np.random.rand(1, 3, 8, 8).astype("float32")
    ws = np.random.rand(4, 3, 3, 3).astype("float32")
    np.testing.assert_allclose(_run(amp, xs, ws), _run(mod, xs, ws), rtol=2e-2, atol=1e-3)


def test_a_cast_and_its_inverse_cancel():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(4, 4))
    d = relay.nn.dense(x, w)
    mod = _main(relay.Tuple([relay.exp(d), relay.nn.dense(relay.exp(d), w)]), [x, w])
    amp = ToMixedPrecision()(mod)
    names = [n for n, _ in _ops(amp)]
    # x, w, then dense; exp needs float32: one cast back; the second dense casts exp's
    # result and reuses the cast of w
    assert names.count("cast") == 4 and names.count("nn.dense") == 2


def test_follow_ops_use_float32_after_a_never_op_and_free_casts_of_vars():
    a = relay.var("a", shape=(3,))
    s = relay.nn.softmax(a)
    mod = _main(relay.add(s, s), [a])
    assert _ops(ToMixedPrecision()(mod)) == [("nn.softmax", "float32"), ("add", "float32")]
    mod = _main(relay.divide(a, relay.const(4.0)), [a])
    assert _ops(ToMixedPrecision()(mod))[-1] == ("divide", "float16")


def test_clip_bounds_outside_float16_keep_float32():
    a = relay.var("a", shape=(3,))
    mod = _main(relay.clip(a, -128000.0, 128000.0), [a])
    assert _ops(ToMixedPrecision("float16")(mod)) == [("clip", "float32")]
    assert _ops(ToMixedPrecision("bfloat16")(mod))[-1] == ("clip", "bfloat16")
    mod = _main(relay.clip(a, -6.0, 6.0), [a])
    assert _ops(ToMixedPrecision("float16")(mod))[-1] == ("clip", "float16")


def test_let_bound_values_get_variables_of_the_new_type():
    x, w = relay.var("x", shape=(1, 4)), relay.var("w", shape=(4, 4))
    v = relay.var("v", shape=(1, 4))
    mod = _main(Let(v, relay.nn.dense(x, w), relay.add(v, v)), [x, w])
    amp = ToMixedPrecision()(mod)
    body = amp["main"].body
    assert body.var.type_annotation == TensorType((1, 4), "float16")
    assert amp["main"].checked_type.ret_type == TensorType((1, 4), "float16")


def test_keep_orig_output_dtype_and_branches_keep_their_type():
    x, w = relay.var("x", shape=(1, 4)), relay.var("w", shape=(4, 4))
    c = relay.var("c", shape=(), dtype="bool")
    body = If(c, relay.nn.dense(x, w), relay.exp(x))
    mod = _main(body, [x, w, c])
    amp = ToMixedPrecision()(mod)
    assert amp["main"].checked_type.ret_type == TensorType((1, 4), "float32")  # the if's type
    mod = _main(relay.nn.dense(x, w), [x, w])
    with PassContext(config={"relay.ToMixedPrecision.keep_orig_output_dtype": True}):
        amp = ToMixedPrecision()(mod)
    assert amp["main"].checked_type.ret_type == TensorType((1, 4), "float32")
    assert _ops(amp)[-1] == ("cast", "float32")


def test_non_finite_values_go_through_float16():
    a = relay.var("a", shape=(5,))
    mod = _main(relay.add(a, relay.const(1.0)), [a])
    amp = ToMixedPrecision()(mod)
    xs = np.array([np.nan, np.inf, -np.inf, -0.0, 70000.0], "float32")
    got = np.asarray(_run(amp, xs))
    want = xs.astype("float16") + np.float16(1.0)
    np.testing.assert_array_equal(got, want)  # 70000 overflows float16 to inf


def test_integer_programs_and_missing_ops():
    i = relay.var("i", shape=(3,), dtype="int32")
    mod = _main(relay.add(i, i), [i])
    assert relay.ir.structural_equal(ToMixedPrecision()(mod), mod)
    a = relay.var("a", shape=(3,))
    mod = _main(relay.nn.log_softmax(a), [a])
    with pytest.raises(Error, match="nn.log_softmax has no mixed-precision category"):
        ToMixedPrecision(missing_op_mode=0)(mod)
    with pytest.warns(UserWarning, match="nn.log_softmax"):
        assert _ops(ToMixedPrecision()(mod)) == [("nn.log_softmax", "float32")]
    with pytest.raises(Error, match="missing_op_mode"):
        ToMixedPrecision(missing_op_mode=3)
