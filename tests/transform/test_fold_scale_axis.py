"""FoldScaleAxis: text before → text after, declined cases, and ResNet-18's batch norms.

Programs are written in the text format with the constants as parameters (``%s``,
``%b``); ``bind`` turns the named ones into constants before the pass runs, and the
expected text is bound the same way, so the scales folded into the weights are checked
value for value. Every positive case is also run before and after.
"""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Call
from relayir.ir.functor import post_order
from relayir.testing.models import get_workload, make_inputs
from relayir.testing.pass_check import assert_same_results, random_inputs, results
from relayir.transform import PassContext, Sequential, bind_params
from relayir.transform.fold_scale_axis import (
    BackwardFoldScaleAxis,
    FoldScaleAxis,
    ForwardFoldScaleAxis,
)

RNG = np.random.default_rng(0)
POS8 = RNG.uniform(0.5, 2.0, (8, 1, 1)).astype("float32")  # a batch-norm-like scale
POS4 = RNG.uniform(0.5, 2.0, (4, 1, 1)).astype("float32")
BIAS8 = RNG.normal(size=(8, 1, 1)).astype("float32")
BIAS4 = RNG.normal(size=(4, 1, 1)).astype("float32")


def bind(text: str, consts: dict) -> relay.IRModule:
    mod = relay.parse(text)
    return bind_params(mod, {k: relay.const(v) for k, v in consts.items()})


def check(before, consts, after_text, after_consts, pass_=FoldScaleAxis):
    mod = bind(before, consts)
    out = pass_()(mod)
    expected = bind(after_text, after_consts)
    relay.assert_structural_equal(out["main"], expected["main"])
    args = random_inputs(mod)
    assert_same_results(results(out, args), results(mod, args), atol=1e-5)
    return out


def check_unchanged(before, consts, pass_=FoldScaleAxis):
    mod = bind(before, consts)
    out = pass_()(mod)
    relay.assert_structural_equal(out["main"], mod["main"])


# ---------------------------------------------------------------- backward

CONV = """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %s: Tensor[(8, 1, 1), float32], %b: Tensor[(8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = add(%0, %b);
  multiply(%1, %s)
}
"""


def test_backward_through_add_bias():
    check(CONV, {"s": POS8, "b": BIAS8}, """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %ws: Tensor[(8, 1, 1, 1), float32], %b: Tensor[(8, 1, 1), float32],
          %s: Tensor[(8, 1, 1), float32]) {
  %0 = multiply(%w, %ws);
  %1 = nn.conv2d(%x, %0, padding=[1, 1, 1, 1]);
  %2 = multiply(%b, %s);
  add(%1, %2)
}
""", {"ws": POS8.reshape(8, 1, 1, 1), "b": BIAS8, "s": POS8})


def test_backward_scale_on_the_left_and_batch_axis_kept():
    s = POS8.reshape(1, 8, 1, 1)
    check("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %s: Tensor[(1, 8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  multiply(%s, %0)
}
""", {"s": s}, """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %ws: Tensor[(8, 1, 1, 1), float32]) {
  nn.conv2d(%x, multiply(%w, %ws))
}
""", {"ws": POS8.reshape(8, 1, 1, 1)})


def test_backward_nhwc_bias_add_and_relu():
    s = POS8.reshape(8)
    b = BIAS8.reshape(8)
    check("""
def @main(%x: Tensor[(1, 6, 6, 4), float32], %w: Tensor[(3, 3, 4, 8), float32],
          %s: Tensor[(8), float32], %b: Tensor[(8), float32]) {
  %0 = nn.conv2d(%x, %w, data_layout="NHWC");
  %1 = nn.bias_add(%0, %b, axis=3);
  %2 = nn.relu(%1);
  multiply(%2, %s)
}
""", {"s": s, "b": b}, """
def @main(%x: Tensor[(1, 6, 6, 4), float32], %w: Tensor[(3, 3, 4, 8), float32],
          %ws: Tensor[(1, 1, 1, 8), float32], %b: Tensor[(8), float32],
          %s: Tensor[(8), float32]) {
  %0 = nn.conv2d(%x, multiply(%w, %ws), data_layout="NHWC");
  %1 = nn.bias_add(%0, multiply(%b, %s), axis=3);
  nn.relu(%1)
}
""", {"ws": s.reshape(1, 1, 1, 8), "b": b, "s": s})


def test_backward_dense():
    s = POS8.reshape(8)
    b = BIAS8.reshape(8)
    check("""
def @main(%x: Tensor[(2, 5), float32], %w: Tensor[(8, 5), float32],
          %s: Tensor[(8), float32], %b: Tensor[(8), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = add(%0, %b);
  multiply(%1, %s)
}
""", {"s": s, "b": b}, """
def @main(%x: Tensor[(2, 5), float32], %w: Tensor[(8, 5), float32],
          %ws: Tensor[(8, 1), float32], %b: Tensor[(8), float32],
          %s: Tensor[(8), float32]) {
  %0 = nn.dense(%x, multiply(%w, %ws));
  add(%0, multiply(%b, %s))
}
""", {"ws": s.reshape(8, 1), "b": b, "s": s})


def test_backward_into_both_sides_of_a_residual_add_and_depthwise():
    check("""
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(8, 8, 1, 1), float32],
          %w2: Tensor[(8, 1, 3, 3), float32], %s: Tensor[(8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1);
  %1 = nn.conv2d(%x, %w2, padding=[1, 1, 1, 1], groups=8);
  %2 = add(%0, %1);
  multiply(%2, %s)
}
""", {"s": POS8}, """
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w1: Tensor[(8, 8, 1, 1), float32],
          %w2: Tensor[(8, 1, 3, 3), float32], %ws: Tensor[(8, 1, 1, 1), float32]) {
  %0 = nn.conv2d(%x, multiply(%w1, %ws));
  %1 = nn.conv2d(%x, multiply(%w2, %ws), padding=[1, 1, 1, 1], groups=8);
  add(%0, %1)
}
""", {"ws": POS8.reshape(8, 1, 1, 1)})


def test_backward_divide_is_a_scale():
    mod = bind("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %s: Tensor[(8, 1, 1), float32]) {
  divide(nn.conv2d(%x, %w), %s)
}
""", {"s": POS8})
    out = FoldScaleAxis()(mod)
    assert "divide" not in out.astext(show_meta_data=False)
    args = random_inputs(mod)
    assert_same_results(results(out, args), results(mod, args), atol=1e-5)


# ---------------------------------------------------------------- forward

def test_forward_through_relu():
    check("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %s: Tensor[(4, 1, 1), float32]) {
  %0 = multiply(%x, %s);
  %1 = nn.relu(%0);
  nn.conv2d(%1, %w, padding=[1, 1, 1, 1])
}
""", {"s": POS4}, """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %ws: Tensor[(1, 4, 1, 1), float32]) {
  %0 = nn.relu(%x);
  nn.conv2d(%0, multiply(%w, %ws), padding=[1, 1, 1, 1])
}
""", {"ws": POS4.reshape(1, 4, 1, 1)})


def test_forward_through_relu_and_bias():
    inv = (1.0 / POS4.astype("float64")).astype("float32")
    check("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %s: Tensor[(4, 1, 1), float32], %b: Tensor[(4, 1, 1), float32]) {
  %0 = multiply(%x, %s);
  %1 = nn.relu(%0);
  %2 = add(%b, %1);
  nn.conv2d(%2, %w)
}
""", {"s": POS4, "b": BIAS4}, """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %b: Tensor[(4, 1, 1), float32], %inv: Tensor[(4, 1, 1), float32],
          %ws: Tensor[(1, 4, 1, 1), float32]) {
  %0 = nn.relu(%x);
  %1 = add(multiply(%b, %inv), %0);
  nn.conv2d(%1, multiply(%w, %ws))
}
""", {"b": BIAS4, "inv": inv, "ws": POS4.reshape(1, 4, 1, 1)})


def test_forward_nhwc_grouped_and_depthwise():
    s = POS4.reshape(4)
    # groups=2: output channel o reads input channels (o // 3) * 2 + i
    ws = np.array([s[[0, 1]]] * 3 + [s[[2, 3]]] * 3)  # (O=6, I=2)
    check("""
def @main(%x: Tensor[(1, 6, 6, 4), float32], %w: Tensor[(3, 3, 2, 6), float32],
          %d: Tensor[(3, 3, 1, 4), float32], %s: Tensor[(4), float32]) {
  %0 = multiply(%x, %s);
  %1 = nn.conv2d(%0, %w, groups=2, data_layout="NHWC");
  %2 = multiply(%x, %s);
  %3 = nn.conv2d(%2, %d, groups=4, data_layout="NHWC");
  (%1, %3)
}
""", {"s": s}, """
def @main(%x: Tensor[(1, 6, 6, 4), float32], %w: Tensor[(3, 3, 2, 6), float32],
          %d: Tensor[(3, 3, 1, 4), float32], %ws: Tensor[(1, 1, 2, 6), float32],
          %ds: Tensor[(1, 1, 1, 4), float32]) {
  %0 = nn.conv2d(%x, multiply(%w, %ws), groups=2, data_layout="NHWC");
  %1 = nn.conv2d(%x, multiply(%d, %ds), groups=4, data_layout="NHWC");
  (%0, %1)
}
""", {"ws": ws.T.reshape(1, 1, 2, 6), "ds": s.reshape(1, 1, 1, 4)})


def test_forward_dense():
    s = POS4.reshape(4)
    check("""
def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(3, 4), float32],
          %s: Tensor[(4), float32]) {
  nn.dense(multiply(%x, %s), %w)
}
""", {"s": s}, """
def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(3, 4), float32],
          %ws: Tensor[(1, 4), float32]) {
  nn.dense(%x, multiply(%w, %ws))
}
""", {"ws": s.reshape(1, 4)})


def test_backward_and_forward_passes_alone():
    text = """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(4, 1, 1), float32]) {
  nn.conv2d(multiply(%x, %s), %w)
}
"""
    check_unchanged(text, {"s": POS4}, BackwardFoldScaleAxis)
    assert "multiply(%x" not in ForwardFoldScaleAxis()(bind(text, {"s": POS4})).astext()


# ---------------------------------------------------------------- declined

NEGATIVE = [
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32],
          %s: Tensor[(8, 1, 1), float32]) {
  multiply(nn.conv2d(%x, %w), %s)
}""", {}, id="scale-not-constant"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(8, 6, 1), float32]) {
  multiply(nn.conv2d(%x, %w), %s)
}""", {"s": RNG.uniform(1, 2, (8, 6, 1)).astype("float32")}, id="scale-varies-along-h"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(2, 8, 1, 1), float32]) {
  multiply(nn.conv2d(%x, %w), %s)
}""", {"s": RNG.uniform(1, 2, (2, 8, 1, 1)).astype("float32")}, id="broadcast-grows-batch"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(1, 1, 8, 1, 1), float32]) {
  multiply(nn.conv2d(%x, %w), %s)
}""", {"s": RNG.uniform(1, 2, (1, 1, 8, 1, 1)).astype("float32")}, id="broadcast-adds-rank"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(8, 1, 1), float32]) {
  multiply(nn.relu(nn.conv2d(%x, %w)), %s)
}""", {"s": np.linspace(-1, 1, 8, dtype="float32").reshape(8, 1, 1)},
        id="backward-relu-negative-scale"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(4, 1, 1), float32]) {
  nn.conv2d(nn.relu(multiply(%x, %s)), %w)
}""", {"s": np.array([1, -1, 2, 3], "float32").reshape(4, 1, 1)},
        id="forward-relu-negative-scale"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(4, 1, 1), float32], %b: Tensor[(4, 1, 1), float32]) {
  nn.conv2d(add(multiply(%x, %s), %b), %w)
}""", {"s": np.array([1, 0, 2, 3], "float32").reshape(4, 1, 1), "b": BIAS4},
        id="forward-bias-zero-scale"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  (multiply(%0, %s), %0)
}""", {"s": POS8}, id="conv-output-used-twice"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(8, 1, 1), float32], %b: Tensor[(1, 8, 6, 6), float32]) {
  multiply(add(nn.conv2d(%x, %w), %b), %s)
}""", {"s": POS8}, id="add-of-a-full-tensor"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(6), float32]) {
  multiply(nn.conv2d(%x, %w), %s)
}""", {"s": RNG.uniform(1, 2, (6,)).astype("float32")}, id="scale-along-w"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), int32], %w: Tensor[(8, 4, 1, 1), int32],
          %s: Tensor[(8, 1, 1), int32]) {
  multiply(nn.conv2d(%x, %w), %s)
}""", {"s": np.arange(1, 9, dtype="int32").reshape(8, 1, 1)}, id="integer"),
    pytest.param("""
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 1, 1), float32],
          %s: Tensor[(4, 1, 1), float32]) {
  %0 = multiply(%x, %s);
  (nn.conv2d(%0, %w), %0)
}""", {"s": POS4}, id="forward-multiply-used-twice"),
]


@pytest.mark.parametrize("text, consts", NEGATIVE)
def test_declined(text, consts):
    check_unchanged(text, consts)


def test_opt_level_3_in_a_pipeline():
    mod = bind(CONV, {"s": POS8, "b": BIAS8})
    seq = Sequential([FoldScaleAxis()])
    relay.assert_structural_equal(seq(mod)["main"], mod["main"])  # default opt level 2
    with PassContext(opt_level=3):
        assert "multiply(%1" not in seq(mod).astext()


def test_long_chain_does_not_recurse():
    x = relay.var("x", shape=(1, 2, 2, 2))
    w = relay.var("w", shape=(2, 2, 1, 1))
    y = relay.nn.conv2d(x, w)
    for _ in range(5000):
        y = relay.nn.relu(y)
    y = relay.multiply(y, relay.const(np.ones((2, 1, 1), "float32")))
    for _ in range(5000):
        y = relay.nn.relu(y)
    out = FoldScaleAxis()(relay.IRModule.from_expr(relay.Function([x, w], y)))
    assert out["main"].body.checked_type == relay.TensorType((1, 2, 2, 2), "float32")


# ---------------------------------------------------------------- resnet18


def _calls(mod, name):
    return [n for n in post_order(mod["main"].body)
            if type(n) is Call and getattr(n.op, "name", None) == name]


@pytest.fixture(scope="module")
def resnet18():
    mod, params, _ = get_workload("resnet18", image_size=32)
    mod = bind_params(mod, {k: relay.const(v) for k, v in params.items()})
    inputs = make_inputs("resnet18", mod)
    return mod, inputs, results(mod, list(inputs.values()))


def test_resnet18_batch_norm_scales_fold_into_conv_weights(resnet18):
    from relayir.transform.fold_constant import FoldConstant
    from relayir.transform.simplify_inference import SimplifyInference

    mod, inputs, expected = resnet18
    simplified = FoldConstant()(SimplifyInference()(mod))
    assert len(_calls(simplified, "multiply")) == 20  # one per batch norm
    out = FoldConstant()(FoldScaleAxis()(simplified))
    assert not _calls(out, "nn.batch_norm") and not _calls(out, "multiply")
    convs = _calls(out, "nn.conv2d")
    assert len(convs) == 20 and all(type(c.args[1]) is relay.Constant for c in convs)
    for node in post_order(out["main"].body):  # nothing scales a conv output any more
        if type(node) is Call and getattr(node.op, "name", None) in ("multiply", "divide"):
            assert not any(getattr(getattr(a, "op", None), "name", "") == "nn.conv2d"
                           for a in node.args)
    got = results(out, list(inputs.values()))
    assert_same_results(got, expected, rtol=1e-4, atol=1e-4)


def test_resnet18_unfolded_constants_and_unbound_weights(resnet18):
    """Straight after SimplifyInference the scales are constant expressions: the pass
    computes them. With unbound weights they are not constants: nothing folds."""
    from relayir.transform.simplify_inference import SimplifyInference

    mod = resnet18[0]
    out = FoldScaleAxis()(SimplifyInference()(mod))
    assert all(getattr(c.args[1].op, "name", "") == "multiply" for c in _calls(out, "nn.conv2d"))

    unbound, _, _ = get_workload("resnet18", image_size=32)
    simplified = SimplifyInference()(unbound)
    relay.assert_structural_equal(FoldScaleAxis()(simplified)["main"], simplified["main"])


def test_resnet18_nhwc_pipeline(resnet18):
    """After ConvertLayout the scales are (1, 1, C) constants along NHWC's last axis."""
    from relayir.transform.convert_layout import ConvertLayout
    from relayir.transform.fold_constant import FoldConstant
    from relayir.transform.simplify_inference import SimplifyInference

    mod, inputs, expected = resnet18
    out = FoldConstant()(SimplifyInference()(mod))
    out = FoldConstant()(ConvertLayout({"nn.conv2d": ["NHWC", "default"]})(out))
    out = FoldConstant()(FoldScaleAxis()(out))
    assert not _calls(out, "multiply") and len(_calls(out, "layout_transform")) == 2
    got = results(out, list(inputs.values()))
    assert_same_results(got, expected, rtol=1e-4, atol=1e-4)
