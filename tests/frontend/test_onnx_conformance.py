"""The ONNX backend conformance cases (``relayir.testing.onnx_conformance``): per-kind
pass rates must not drop below the recorded floors, and the harness must classify
failures correctly (a wrong answer is never a pass)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import relayir as relay  # noqa: E402
from relayir.testing import onnx_conformance as oc  # noqa: E402

# passed cases per kind at the end of the session that built the harness (of 1884 node
# cases, 82 pytorch-converted, 35 pytorch-operator, 23 simple); raise them as they grow
FLOORS = {"node": 1800, "pytorch-converted": 82, "pytorch-operator": 35, "simple": 14}


@pytest.fixture(scope="module")
def results():
    return oc.run_all(oc.collect())


@pytest.mark.parametrize("kind", list(FLOORS))
def test_pass_rate_is_at_least_the_floor(results, kind):
    passed, total = oc.pass_rates(results)[kind]
    print(f"\n{kind}: {passed} / {total} = {100 * passed / total:.1f}%")
    assert passed >= FLOORS[kind], oc.report(results)


def test_report_names_rates_and_reasons(results):
    text = oc.report(results)
    print("\n" + text)
    for kind in FLOORS:
        assert kind in text
    assert "top 25 failure reasons" in text and "const_inputs" in text
    statuses = {r.status for r in results}
    assert statuses <= set(oc.STATUSES)


def test_shape_inputs_import_as_dynamic_ops_and_only_axes_are_bound(results):
    by_name = {r.name: r for r in results if r.kind == "node"}
    # a run-time Reshape shape needs no binding (dyn.reshape); ReduceSum's axes do
    assert by_name["test_reshape_reordered_all_dims"].passed
    assert not by_name["test_reshape_reordered_all_dims"].const_inputs
    assert by_name["test_reduce_sum_keepdims_example"].const_inputs == ["axes"]


# ---------------------------------------------------------------- classification


def _case(nodes, inputs, outputs, feeds, expected, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return oc.Case("t", "node", model, [(feeds, expected)])


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F = TensorProto.FLOAT
X = np.array([1.0, -2.0, 3.0], "float32")


def test_a_matching_output_passes_and_a_wrong_one_fails():
    node = helper.make_node("Neg", ["x"], ["y"])
    args = [node], [_vi("x", F, [3])], [_vi("y", F, [3])], [X]
    assert oc.run_case(_case(*args, [-X])).passed
    wrong = oc.run_case(_case(*args, [-X + 1e-3]))
    assert wrong.status == "wrong result" and "values differ" in wrong.detail
    assert oc.run_case(_case(*args, [(-X).astype("float64")])).status == "wrong result"
    assert oc.run_case(_case(*args, [-X[:2]])).status == "wrong result"


def test_failures_are_classified_by_reason():
    unsupported = oc.run_case(_case([helper.make_node("NoSuchOp", ["x"], ["y"])],
                                    [_vi("x", F, [3])], [_vi("y", F, [3])], [X], [X]))
    assert unsupported.status == "unsupported op"
    assert unsupported.reason == "unsupported op: NoSuchOp"
    text = oc.run_case(_case([helper.make_node("Identity", ["x"], ["y"])],
                             [_vi("x", TensorProto.STRING, [3])],
                             [_vi("y", TensorProto.STRING, [3])], [X], [X]))
    assert text.status == "unsupported dtype" and text.reason.endswith("string")
    bad = oc.run_case(_case([helper.make_node("Add", ["x", "x"], ["y"])],
                            [_vi("x", F, [3])], [_vi("y", F, [3])],
                            [np.zeros(4, "float32")], [X]))
    assert bad.status == "runtime error"


def test_axes_inputs_are_bound_as_constants_and_counted():
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
    case = _case([node], [_vi("x", F, [2, 3]), _vi("axes", TensorProto.INT64, [1])],
                 [_vi("y", F, [2])], [np.ones((2, 3), "float32"), np.array([1], "int64")],
                 [np.full(2, 3.0, "float32")])
    res = oc.run_case(case)
    assert res.passed and res.const_inputs == ["axes"]


# ---------------------------------------------------------------- shape-like inputs


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_run_time_reshape_target_imports_as_dyn_reshape():
    from relayir.frontend.onnx import from_onnx

    model = _model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                   [_vi("x", F, [2, 6]), _vi("s", TensorProto.INT64, [3])],
                   [_vi("y", F, None)])
    mod, _ = from_onnx(model)
    assert "dyn.reshape" in mod.astext()
    run = relay.create_executor("debug", mod).evaluate()
    data = np.arange(12, dtype="float32").reshape(2, 6)
    for target in ([3, 2, 2], [0, 3, -1]):
        want = data.reshape([d or data.shape[i] for i, d in enumerate(target)])
        np.testing.assert_array_equal(run(data, np.array(target, "int64")), want)
    # bound as a constant, the static op is used
    mod, _ = from_onnx(model, const_inputs={"s": np.array([4, 3, 1], "int64")})
    assert "dyn." not in mod.astext() and len(mod["main"].params) == 1


def test_an_axes_input_must_be_bound_and_the_error_names_it():
    from relayir.frontend.common import ConversionError
    from relayir.frontend.onnx import ConstantInputRequired, from_onnx

    model = _model([helper.make_node("Unsqueeze", ["x", "axes"], ["y"])],
                   [_vi("x", F, [3]), _vi("axes", TensorProto.INT64, [1])],
                   [_vi("y", F, None)])
    with pytest.raises(ConstantInputRequired, match="axes") as info:
        from_onnx(model)
    assert info.value.input_names == ["axes"]
    with pytest.raises(ConversionError, match="not graph inputs"):
        from_onnx(model, const_inputs={"nope": np.array([0])})
    mod, _ = from_onnx(model, const_inputs={"axes": np.array([0], "int64")})
    mod = relay.transform.InferType()(mod)
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 3))
