"""``FakeQuantizationToInteger``'s rules for the ops TVM's own tests rewrite beyond
conv / dense / add: elementwise float functions (a table of the 256 results), ``topk``
values and other ops that commute with the dequantize through chains (a transpose then
a reshape, a split's field, pads with a float value), both-quantized ``multiply`` /
``subtract`` / ``minimum`` / ``maximum``, per-channel ``relu`` / ``clip``, and
``transpose`` then ``conv2d`` / ``batch_matmul``.

Each rewritten graph must hold no float op (but constant parameter arithmetic) and give
what the float-QDQ graph gives: exactly on the reference interpreter for the tables and
the ops that move or select integers, within one unit where the integer arithmetic
rounds differently (requantized differences, products), and within one unit of the
float graph's C kernels (the pass disabled) on the cpu target.
"""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Call, Constant
from relayir.ir.functor import post_order
from relayir.ir.structural import assert_structural_equal, structural_equal
from relayir.ir.types import TensorType, is_float
from relayir.op import qnn

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(7)


def _c(v, dtype="float32"):
    return relay.const(np.asarray(v, dtype))


def _deq(x, scale, zp, axis=-1):
    return qnn.dequantize(x, _c(scale), _c(zp, "int32"), axis=axis)


def _q(e, scale, zp, out_dtype, axis=-1):
    return qnn.quantize(e, _c(scale), _c(zp, "int32"), axis=axis, out_dtype=out_dtype)


def _float_ops(mod) -> list[str]:
    """Calls with a float result, but constant arithmetic (a scale product)."""
    out = []
    for n in post_order(mod["main"].body):
        if type(n) is Call and isinstance(n.checked_type, TensorType) and is_float(
                n.checked_type.dtype) and not all(isinstance(a, Constant) for a in n.args):
            out.append(n.op.name)
    return out


def _check(params, body, values, exact=True):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, body)))
    got = relay.transform.DeadCodeElimination()(relay.transform.FakeQuantizationToInteger()(mod))
    assert not structural_equal(got, mod), "nothing was rewritten"
    assert _float_ops(got) == []
    want = relay.create_executor("debug", mod).evaluate()(*values)
    ints = relay.create_executor("debug", got).evaluate()(*values)
    assert ints.dtype == want.dtype and ints.shape == want.shape
    diff = np.abs(ints.astype("int32") - want.astype("int32"))
    assert diff.max(initial=0) <= (0 if exact else 1)
    with relay.transform.PassContext(disabled_pass=["FakeQuantizationToInteger"]):
        floats = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu")).invoke(
            "main", *values)
    native = relay.vm.VirtualMachine(relay.vm.compile(got, target="cpu")).invoke(
        "main", *values)
    np.testing.assert_array_equal(np.asarray(native), ints)
    assert np.abs(np.asarray(floats).astype("int32") - ints.astype("int32")).max(
        initial=0) <= 1
    return got


def _ints(shape, dtype, lo=None, hi=None):
    info = np.iinfo(dtype)
    return RNG.integers(info.min if lo is None else lo, (info.max if hi is None else hi) + 1,
                        size=shape).astype(dtype)


# ---------------------------------------------------------------- tables

UNARY = [
    ("sigmoid", relay.sigmoid, False), ("tanh", relay.tanh, False), ("exp", relay.exp, False),
    ("erf", relay.erf, False), ("log", relay.log, True), ("sqrt", relay.sqrt, True),
    ("rsqrt", relay.rsqrt, True), ("abs", relay.abs, False),
    ("leaky_relu", lambda x: relay.nn.leaky_relu(x, 0.1), False),
    ("clip", lambda x: relay.clip(x, 0.0, 6.0), False),
]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("name, fn, positive", UNARY, ids=[u[0] for u in UNARY])
def test_an_elementwise_function_becomes_a_table(name, fn, positive, dtype):
    lo = np.iinfo(dtype).min
    zp_in = lo if positive else lo + 100
    x = relay.var("x", shape=(2, 3, 5), dtype=dtype)
    body = _q(fn(_deq(x, 0.37, zp_in)), 0.05, lo + 20, dtype)
    got = _check([x], body, [_ints((2, 3, 5), dtype)])
    assert "take" in got.astext()


@pytest.mark.parametrize("op", ["add", "multiply", "subtract", "minimum", "maximum"])
def test_a_binary_op_with_a_scalar_constant_becomes_a_table(op):
    x = relay.var("x", shape=(3, 4), dtype="int8")
    body = _q(getattr(relay, op)(_deq(x, 0.1, 10), _c(1.0)), 0.1, 10, "int8")
    got = _check([x], body, [_ints((3, 4), "int8", -25, 25)])
    assert "take" in got.astext()


# ---------------------------------------------------------------- ops on the integers


def test_topk_values_run_on_the_integers():
    got = relay.transform.FakeQuantizationToInteger()(relay.transform.InferType()(relay.parse(
        HEAD + """def @main(%x: Tensor[(4, 6), uint8]) {
  %0 = topk(qnn.dequantize(%x, 2f, 0), k=3, ret_type="values", is_ascend=True);
  qnn.quantize(%0, 2f, 0, out_dtype="uint8") }""")))
    want = relay.transform.InferType()(relay.parse(HEAD + """def @main(%x: Tensor[(4, 6), uint8]) {
  topk(%x, k=3, ret_type="values", is_ascend=True) }"""))
    assert_structural_equal(relay.transform.DeadCodeElimination()(got), want)


@pytest.mark.parametrize("k, axis, ascend", [(0, 0, True), (1, -1, False), (5, 1, True)])
def test_topk_values_match_the_float_graph(k, axis, ascend):
    x = relay.var("x", shape=(20, 10), dtype="int8")
    body = _q(relay.topk(_deq(x, 2.0, 0), k, axis, "values", ascend), 2.0, 0, "int8")
    _check([x], body, [_ints((20, 10), "int8", 0, 127)])


def test_a_negative_scale_keeps_order_using_ops_in_float():
    """topk of values dequantized with a negative scale picks the other end."""
    x = relay.var("x", shape=(4, 6), dtype="int8")
    body = _q(relay.topk(_deq(x, -2.0, 0), 2, -1, "values"), 2.0, 0, "int8")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], body)))
    assert_structural_equal(relay.transform.FakeQuantizationToInteger()(mod), mod)


def test_an_order_using_op_after_a_table_stays_float():
    """max(abs(x)) is no function of max(x): no table, no integer max."""
    x = relay.var("x", shape=(4, 6), dtype="int8")
    body = _q(relay.max(relay.abs(_deq(x, 0.5, 0)), axis=1), 0.5, 0, "int8")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], body)))
    assert_structural_equal(relay.transform.FakeQuantizationToInteger()(mod), mod)


def test_chains_of_moves_run_on_the_integers():
    x = relay.var("x", shape=(1, 3, 4, 6), dtype="int8")
    d = _deq(x, 2.0, 0)
    moved = relay.reshape(relay.transpose(d, (1, 0, 2, 3)), (3, -1))
    _check([x], _q(moved, 2.0, 0, "int8"), [_ints((1, 3, 4, 6), "int8")])
    part = relay.split(d, 2, axis=3)[1]
    _check([x], _q(part, 2.0, 0, "int8"), [_ints((1, 3, 4, 6), "int8")])
    taken = relay.take(d, _c([2, 0, 2, 1], "int32"), axis=2)
    _check([x], _q(taken, 1.0, 3, "int8"), [_ints((1, 3, 4, 6), "int8")])
    for reduce in (relay.max, relay.min):
        _check([x], _q(reduce(relay.transpose(d, (0, 2, 1, 3)), axis=1), 2.0, 0, "int8"),
               [_ints((1, 3, 4, 6), "int8")])


@pytest.mark.parametrize("value", [0.0, -3.40282e38])
def test_a_float_pad_value_is_quantized(value):
    x = relay.var("x", shape=(1, 5, 4), dtype="uint8")
    d = _deq(x, 1.0, 10)
    body = _q(relay.nn.pad(d, ((0, 0), (0, 1), (1, 0)), _c(value)), 1.0, 10, "uint8")
    _check([x], body, [_ints((1, 5, 4), "uint8")])


# ---------------------------------------------------------------- two quantized operands


@pytest.mark.parametrize("op, out_scale", [("multiply", 20.0), ("subtract", 0.1),
                                           ("minimum", 0.1), ("maximum", 0.1)])
def test_binary_ops_of_two_quantized_tensors(op, out_scale):
    x = relay.var("x", shape=(2, 3, 8), dtype="int8")
    y = relay.var("y", shape=(2, 3, 8), dtype="int8")
    body = _q(getattr(relay, op)(_deq(x, 0.1, 0), _deq(y, 0.2, 3)), out_scale, 2, "int8")
    got = _check([x, y], body, [_ints((2, 3, 8), "int8", -25, 25),
                                _ints((2, 3, 8), "int8", -25, 25)], exact=False)
    assert ("qnn.mul" if op == "multiply" else "qnn.requantize") in got.astext()


def test_per_channel_relu_and_clip_in_the_same_parameters():
    x = relay.var("x", shape=(1, 3, 4, 4), dtype="uint8")
    scales, zps = [1.0, 2.0, 3.0], [96, 114, 128]
    for fn in (relay.nn.relu, lambda e: relay.clip(e, 0.0, 6.0)):
        body = qnn.quantize(fn(qnn.dequantize(x, _c(scales), _c(zps, "int32"), axis=1)),
                            _c(scales), _c(zps, "int32"), axis=1, out_dtype="uint8")
        _check([x], body, [_ints((1, 3, 4, 4), "uint8")])


def test_a_transposed_input_feeds_qnn_conv2d_and_batch_matmul():
    x = relay.var("x", shape=(1, 6, 6, 3), dtype="int8")
    w = relay.var("w", shape=(4, 3, 3, 3), dtype="int8")
    nchw = relay.transpose(_deq(x, 2.0, 0), (0, 3, 1, 2))
    conv = relay.nn.conv2d(nchw, _deq(w, 0.5, 0), kernel_size=(3, 3))
    got = _check([x, w], _q(conv, 8.0, 0, "int8"), [_ints((1, 6, 6, 3), "int8", -20, 20),
                                                    _ints((4, 3, 3, 3), "int8", -20, 20)],
                 exact=False)
    assert "qnn.conv2d" in got.astext()
    a = relay.var("a", shape=(1, 5, 4), dtype="int8")
    b = relay.var("b", shape=(1, 6, 4), dtype="int8")
    mm = relay.nn.batch_matmul(_deq(a, 0.5, 1), _deq(b, 0.25, -2))
    got = _check([a, b], _q(mm, 1.0, 0, "int8"), [_ints((1, 5, 4), "int8", -20, 20),
                                                  _ints((1, 6, 4), "int8", -20, 20)],
                 exact=False)
    assert "qnn.batch_matmul" in got.astext()


@pytest.mark.parametrize("attrs", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True}])
def test_mean_is_an_integer_sum_requantized(attrs):
    x = relay.var("x", shape=(2, 3, 5), dtype="uint8")
    body = _q(relay.mean(_deq(x, 2.0, 114), **attrs), 0.5, 7, "uint8")
    got = _check([x], body, [_ints((2, 3, 5), "uint8")], exact=False)
    assert "sum" in got.astext()


def test_fake_quantized_ops_counts_the_regions_ops():
    """Relay's list_fake_quantized_op_freqs: ops between a quantize and the dequantizes
    it reads; a region reading a float variable is none, an op after the last quantize
    is outside."""
    from relayir.transform.fake_quantization_inputs import fake_quantized_ops

    mod = relay.transform.InferType()(relay.parse(HEAD + """
def @main(%x: Tensor[(2, 4), int8], %w: Tensor[(3, 4), int8], %f: Tensor[(2, 3), float32]) {
  %0 = nn.dense(qnn.dequantize(%x, 2f, 0), qnn.dequantize(%w, 0.5f, 0));
  %1 = qnn.quantize(%0, 1f, 0);
  %2 = nn.relu(transpose(qnn.dequantize(%1, 1f, 0)));
  %3 = qnn.quantize(%2, 1f, 0);
  %4 = qnn.quantize(add(qnn.dequantize(%1, 1f, 0), %f), 1f, 0);
  (sigmoid(qnn.dequantize(%3, 1f, 0)), %4)
}"""))
    assert dict(fake_quantized_ops(mod["main"])) == {"nn.dense": 1, "nn.relu": 1,
                                                    "transpose": 1}


@pytest.mark.parametrize("op", ["add", "subtract", "minimum", "maximum"])
@pytest.mark.parametrize("axes", [(1, 1), (2, 3)])
def test_binary_ops_of_per_channel_operands(op, axes):
    """Each side requantized per channel to the output's per-tensor parameters."""
    x = relay.var("x", shape=(1, 3, 4, 4), dtype="int8")
    y = relay.var("y", shape=(1, 3, 4, 4), dtype="int8")
    n = (3, 4, 4)[axes[0] - 1], (3, 4, 4)[axes[1] - 1]
    lhs = _deq(x, RNG.uniform(1, 5, n[0]), RNG.integers(1, 3, n[0]), axis=axes[0])
    rhs = _deq(y, RNG.uniform(1, 5, n[1]), RNG.integers(1, 3, n[1]), axis=axes[1])
    body = _q(getattr(relay, op)(lhs, rhs), 0.1, 2, "int8")
    got = _check([x, y], body, [_ints((1, 3, 4, 4), "int8", -25, 25),
                                _ints((1, 3, 4, 4), "int8", -25, 25)], exact=False)
    assert "qnn.requantize" in got.astext()
