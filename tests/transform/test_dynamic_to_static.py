"""DynamicToStatic: ``dyn.*`` calls with constant shape inputs → static ops, text →
expected text, and the same results before and after."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import relayir as relay
from relayir.op import dynamic as D
from relayir.testing.pass_check import assert_same_results, check_main, evaluate
from relayir.transform.dynamic_to_static import DynamicToStatic

check = functools.partial(check_main, DynamicToStatic())
X = "%x: Tensor[(2, 3), float32]"


@pytest.mark.parametrize("before,after,shape_value", [
    ("dyn.reshape(%x, meta[relay.Constant][0])", "reshape(%x, newshape=[3, -1])", [3, -1]),
    ("dyn.broadcast_to(%x, meta[relay.Constant][0])", "broadcast_to(%x, shape=[4, 2, 3])",
     [4, 2, 3]),
    ("dyn.tile(%x, meta[relay.Constant][0])", "tile(%x, reps=[2, 1])", [2, 1]),
    ("dyn.zeros(meta[relay.Constant][0], dtype=\"int32\")",
     "zeros(shape=[2, 5], dtype=\"int32\")", [2, 5]),
    ("dyn.full(sum(%x), meta[relay.Constant][0])", "%0 = sum(%x); full(%0, shape=[3])",
     [3]),
])
def test_constant_shape_becomes_the_static_op(before, after, shape_value):
    out = check(X, before, after, np.asarray(shape_value, "int64"))
    want = evaluate(relay.transform.InferType()(
        relay.testing.pass_check.parse_main(X, before, np.asarray(shape_value, "int64"))),
        [np.arange(6, dtype="float32").reshape(2, 3)])
    assert_same_results(evaluate(out, [np.arange(6, dtype="float32").reshape(2, 3)]), want)


def test_strided_slice_and_pad_take_all_their_shape_inputs():
    b, e, s = (np.asarray(v, "int64") for v in ([1], [-1], [2]))
    check(X, "dyn.strided_slice(%x, meta[relay.Constant][0], meta[relay.Constant][1], "
             "meta[relay.Constant][2], axes=[1])",
          "strided_slice(%x, begin=[1], end=[-1], strides=[2], axes=[1])", b, e, s)
    w = np.asarray([[1, 0], [0, 2]], "int64")
    check(X, "dyn.nn.pad(%x, meta[relay.Constant][0], 0f)",
          "nn.pad(%x, 0f, pad_width=[[1, 0], [0, 2]])", w)


def test_run_time_shapes_stay_dynamic():
    params = f"{X}, %s: Tensor[(2), int64]"
    check(params, "dyn.reshape(%x, %s)", "dyn.reshape(%x, %s)")


def test_a_shape_computed_from_static_extents_folds_in_later_sweeps():
    # shape_of(%x) is static → a constant; the concatenation then folds; the reshape goes
    x = relay.var("x", shape=(2, 3))
    s = D.shape_of(x)
    target = relay.concatenate([relay.strided_slice(s, [1], [2]), relay.const(
        np.asarray([-1], "int64"))], 0)
    fn = relay.Function([x], relay.nn.relu(D.reshape(x, target)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(fn))
    assert str(mod["main"].ret_type) != str(relay.TensorType((3, 2)))
    out = DynamicToStatic()(mod)
    text = out.astext()
    assert "dyn." not in text and "shape_of" not in text
    assert out["main"].body.checked_type == relay.TensorType((3, 2), "float32")
    data = np.arange(-3, 3, dtype="float32").reshape(2, 3)
    assert_same_results(evaluate(out, [data]), evaluate(mod, [data]))
    assert_same_results(evaluate(out, [data]), np.maximum(data.reshape(3, 2), 0))


def test_is_in_the_pipeline_before_folding():
    from relayir.transform.pipeline import optimize_passes

    names = [p.info.name for p in optimize_passes(fuse=False).passes]
    assert "DynamicToStatic" in names
    assert names.index("DynamicToStatic") < names.index("FoldConstant")
