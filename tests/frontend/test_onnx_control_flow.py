"""ONNX If / Loop / Scan import as Relay control flow (``if``, a recursive function),
checked against ``onnx.reference`` on small models through the reference interpreter
and the VM (cpu and numpy targets)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import relayir as r  # noqa: E402
from relayir.frontend.onnx import from_onnx  # noqa: E402

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check(model, feeds):
    want = ReferenceEvaluator(model).run(None, feeds)
    mod, params = from_onnx(model)
    runs = [r.create_executor("debug", mod).evaluate()]
    runs += [r.create_executor("vm", mod, target=t).evaluate() for t in ("cpu", "numpy")]
    for run in runs:
        out = run(*feeds.values())
        got = list(out) if isinstance(out, tuple) else [out]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g = np.asarray(g)
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    return mod


@pytest.mark.parametrize("flag", [True, False])
def test_if_picks_the_branch_at_run_time_and_reads_outer_names(flag):
    then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [],
                               [_vi("t", F, [3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [_vi("e", F, [3])])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)
    model = _model([node], [_vi("c", B, []), _vi("x", F, [3])], [_vi("y", F, [3])])
    mod = _check(model, {"c": np.array(flag), "x": np.array([1, -2, 3], "float32")})
    assert "if (" in mod.astext()


def _loop_body():
    # carried: acc (float [2]); scan output: acc * i
    nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
        helper.make_node("Mul", ["acc_out", "fi"], ["s"]),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
    ]
    return helper.make_graph(
        nodes, "body", [_vi("i", I64, []), _vi("cond_in", B, []), _vi("acc_in", F, [2])],
        [_vi("cond_out", B, []), _vi("acc_out", F, [2]), _vi("s", F, [2])])


def _loop_model():
    node = helper.make_node("Loop", ["M", "c0", "a0"], ["acc", "stack"], body=_loop_body())
    return _model([node], [_vi("M", I64, []), _vi("c0", B, []), _vi("a0", F, [2]),
                           _vi("x", F, [2])],
                  [_vi("acc", F, [2]), _vi("stack", F, [None, 2])])


_A0, _X = np.array([1, 2], "float32"), np.array([0.5, -1], "float32")


@pytest.mark.parametrize("trips", [1, 4])
def test_loop_carries_values_and_stacks_scan_outputs(trips):
    mod = _check(_loop_model(), {"M": np.array(trips, "int64"), "c0": np.array(True), "a0": _A0,
                                     "x": _X})
    assert "%loop(" in mod.astext()


def test_loop_with_zero_trips_returns_the_initial_values_and_empty_scans():
    # onnx.reference cannot stack zero scan outputs: the expectation is written out
    mod, _ = from_onnx(_loop_model())
    run = r.create_executor("debug", mod).evaluate()
    acc, stack = run(np.array(0, "int64"), np.array(True), _A0, _X)
    np.testing.assert_array_equal(acc, _A0)
    assert stack.shape == (0, 2) and stack.dtype == np.float32


def test_loop_stops_when_the_body_condition_turns_false():
    nodes = [
        helper.make_node("Add", ["v_in", "one"], ["v_out"]),
        helper.make_node("Less", ["v_out", "limit"], ["cond_out"]),
    ]
    body = helper.make_graph(
        nodes, "body", [_vi("i", I64, []), _vi("c", B, []), _vi("v_in", F, [])],
        [_vi("cond_out", B, []), _vi("v_out", F, [])],
        initializer=[helper.make_tensor("one", F, [], [1.0])])
    node = helper.make_node("Loop", ["", "c0", "v0"], ["v"], body=body)
    model = _model([node], [_vi("c0", B, []), _vi("v0", F, []), _vi("limit", F, [])],
                   [_vi("v", F, [])])
    _check(model, {"c0": np.array(True), "v0": np.array(0.0, "float32"),
                   "limit": np.array(5.5, "float32")})


def _scan_model(direction, out_axis=0):
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])],
        "body", [_vi("s_in", F, [2]), _vi("x_t", F, [2])],
        [_vi("s_out", F, [2]), _vi("y_t", F, [2])])
    node = helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1,
                            scan_input_directions=[direction], scan_output_axes=[out_axis])
    return _model([node], [_vi("s0", F, [2]), _vi("xs", F, [3, 2])],
                  [_vi("s", F, [2]), _vi("ys", F, [3, 2] if out_axis == 0 else [2, 3])])


_XS = np.arange(6, dtype="float32").reshape(3, 2)


def test_scan_runs_over_the_sequence_axis():
    _check(_scan_model(0), {"s0": np.zeros(2, "float32"), "xs": _XS})


@pytest.mark.parametrize("out_axis", [0, 1, -1])
def test_scan_in_reverse_direction_and_other_output_axes(out_axis):
    # onnx.reference supports direction 0 and output axis 0 only: numpy gives these
    mod, _ = from_onnx(_scan_model(1, out_axis))
    s, ys = r.create_executor("debug", mod).evaluate()(np.zeros(2, "float32"), _XS)
    want = np.cumsum(_XS[::-1], axis=0)
    np.testing.assert_allclose(ys, want if out_axis == 0 else want.T)
    np.testing.assert_allclose(s, _XS.sum(0))
