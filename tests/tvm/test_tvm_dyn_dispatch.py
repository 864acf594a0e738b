"""``relayir.tvm``'s Relay constructors that take run-time arguments: an expression
``axis`` / ``depth`` / ``reps`` / ``size`` / scale becomes relayir's ``dyn`` op, run on
the debug executor and the VM against numpy; the gradient of ``dyn.reshape``."""

from __future__ import annotations

import numpy as np
import pytest

import relayir
from relayir.tvm import relay
from relayir.tvm.relay.testing import check_grad, run_infer_type

EXECUTORS = ("debug", "vm")


def _run(kind, params, body, *args):
    mod = relayir.IRModule.from_expr(relayir.Function(params, body))
    return np.asarray(relayir.create_executor(kind, mod=mod).evaluate()(*args))


@pytest.mark.parametrize("kind", EXECUTORS)
@pytest.mark.parametrize("axis, k, want", [(2, 1, (2, 3, 1)), (-1, 2, (2, 3, 1, 1)),
                                           (0, 3, (1, 1, 1, 2, 3)), (-3, 1, (1, 2, 3))])
def test_expand_dims_at_a_run_time_axis(kind, axis, k, want):
    x = relay.var("x", shape=(2, 3))
    a = relay.var("a", shape=(), dtype="int64")
    y = relay.expand_dims(x, a, num_newaxis=k)
    assert y.op.name == "dyn.unsqueeze"
    data = np.arange(6, dtype="float32").reshape(2, 3)
    got = _run(kind, [x, a], y, data, np.array(axis, "int64"))
    np.testing.assert_array_equal(got, data.reshape(want))


@pytest.mark.parametrize("kind", EXECUTORS)
def test_one_hot_of_a_run_time_depth(kind):
    i = relay.var("i", shape=(2, 2), dtype="int32")
    depth = relay.var("depth", shape=(), dtype="int32")
    y = relay.one_hot(i, relay.const(0.5), relay.const(-0.5), depth, 1, "float32")
    assert run_infer_type(y).checked_type == relay.TensorType((2, relay.Any(), 2), "float32")
    idx = np.array([[0, 4], [2, 1]], "int32")
    got = _run(kind, [i, depth], y, idx, np.array(5, "int32"))
    want = np.where(np.arange(5)[None, :, None] == idx[:, None, :], 0.5, -0.5)
    np.testing.assert_array_equal(got, want.astype("float32"))


@pytest.mark.parametrize("kind", EXECUTORS)
def test_tile_by_float_reps_and_pad_with_the_default_value(kind):
    x = relay.var("x", shape=(2, 3), dtype="float64")
    reps = relay.var("reps", shape=(2,), dtype="float32")
    width = relay.var("w", shape=(2, 2), dtype="int64")
    data = np.arange(6, dtype="float64").reshape(2, 3)
    got = _run(kind, [x, reps], relay.tile(x, reps), data, np.array([2, 1], "float32"))
    np.testing.assert_array_equal(got, np.tile(data, (2, 1)))
    pw = np.array([[1, 0], [0, 2]])
    got = _run(kind, [x, width], relay.nn.pad(x, width), data, pw)
    np.testing.assert_array_equal(got, np.pad(data, pw))


@pytest.mark.parametrize("kind", EXECUTORS)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_upsampling_by_run_time_scales_matches_the_static_op(kind, layout):
    shape = (1, 2, 3, 4) if layout == "NCHW" else (1, 3, 4, 2)
    x = relay.var("x", shape=shape)
    sh, sw = relay.var("sh", shape=()), relay.var("sw", shape=())
    data = np.random.default_rng(0).uniform(size=shape).astype("float32")
    for method, corners in (("nearest_neighbor", False), ("bilinear", True)):
        y = relay.nn.upsampling(x, sh, sw, layout=layout, method=method,
                                align_corners=corners)
        got = _run(kind, [x, sh, sw], y, data, np.array(3, "float32"), np.array(2, "float32"))
        want = _run("debug", [x], relay.nn.upsampling(x, 3.0, 2.0, layout, method, corners),
                    data)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_upsampling_types_as_relay():
    n, c = relay.Any(), 4
    x = relay.var("x", relay.TensorType((n, c, 5, 6), "int8"))
    y = relay.nn.upsampling(x, 2.0, relay.var("sw", shape=()))
    assert run_infer_type(y).checked_type == relay.TensorType(
        (n, c, relay.Any(), relay.Any()), "int8")
    x3 = relay.var("x", relay.TensorType((n, c, 10, 10, 20), "float32"))
    y3 = relay.nn.upsampling3d(x3, 2, 2, 2, method="trilinear")
    assert run_infer_type(y3).checked_type == relay.TensorType((n, c, 20, 20, 40), "float32")


@pytest.mark.parametrize("kind", EXECUTORS)
def test_upsampling3d_static_and_run_time_agree(kind):
    x = relay.var("x", shape=(1, 1, 2, 2, 3))
    s = [relay.var(f"s{i}", shape=()) for i in range(3)]
    data = np.arange(12, dtype="float32").reshape(1, 1, 2, 2, 3)
    y = relay.nn.upsampling3d(x, *s, method="nearest_neighbor",
                              coordinate_transformation_mode="asymmetric")
    got = _run(kind, [x, *s], y, data, *(np.array(v, "float32") for v in (2, 1, 2)))
    want = data.repeat(2, axis=2).repeat(2, axis=4)
    np.testing.assert_array_equal(got, want)
    static = relay.nn.upsampling3d(x, 2, 1, 2, method="nearest_neighbor",
                                   coordinate_transformation_mode="asymmetric")
    assert static.op.name == "image.resize3d"
    np.testing.assert_array_equal(_run(kind, [x], static, data), want)


@pytest.mark.parametrize("kind", EXECUTORS)
def test_resize2d_to_a_run_time_size(kind):
    x = relay.var("x", shape=(1, 1, 2, 3))
    size = relay.var("size", shape=(2,), dtype="int64")
    y = relay.image.resize2d(x, size, None, "NCHW", "nearest_neighbor",
                             coordinate_transformation_mode="asymmetric")
    assert y.op.name == "dyn.image.resize2d"
    data = np.arange(6, dtype="float32").reshape(1, 1, 2, 3)
    got = _run(kind, [x, size], y, data, np.array([4, 6], "int64"))
    np.testing.assert_array_equal(got, data.repeat(2, axis=2).repeat(2, axis=3))


def test_gradient_of_a_run_time_reshape():
    x = relay.var("x", shape=(2, 3, 4))
    shape = relay.var("s", shape=(2,), dtype="int64")
    data = np.random.default_rng(1).uniform(-1, 1, (2, 3, 4)).astype("float32")
    f = run_infer_type(relay.Function([x, shape], relay.reshape(x, shape)))
    check_grad(f, inputs=[data, np.array([8, 3])], test_inputs=[data], eps=1e-3)


@pytest.mark.parametrize("kind", EXECUTORS)
@pytest.mark.parametrize("ret_type", ["both", "values", "indices"])
def test_topk_of_a_run_time_k_with_float_indices(kind, ret_type):
    x = relay.var("x", shape=(3, 5))
    k = relay.var("k", shape=(1,), dtype="float32")
    out = relay.topk(x, k, axis=1, ret_type=ret_type, dtype="float32")
    out = out.astuple() if ret_type == "both" else out
    data = np.random.default_rng(4).permutation(15).reshape(3, 5).astype("float32")
    mod = relayir.IRModule.from_expr(relayir.Function([x, k], out))
    got = relayir.create_executor(kind, mod=mod).evaluate()(data, np.array([2], "float32"))
    order = np.argsort(-data, axis=1)[:, :2]
    values = np.take_along_axis(data, order, 1)
    if ret_type == "both":
        np.testing.assert_array_equal(np.asarray(got[0]), values)
        assert np.asarray(got[1]).dtype == np.float32
        np.testing.assert_array_equal(np.asarray(got[1]), order)
    else:
        want = values if ret_type == "values" else order.astype("float32")
        np.testing.assert_array_equal(np.asarray(got), want)
