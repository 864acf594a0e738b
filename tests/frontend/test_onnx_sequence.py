"""ONNX sequences of import-time length: built in the graph (a list of expressions while
importing, a tuple where they leave the graph) or fed in as a tuple parameter whose
element shapes ``shape`` gives; checked against ``onnx.reference``."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import relayir as r  # noqa: E402
from relayir.frontend.common import ConversionError  # noqa: E402
from relayir.frontend.onnx import from_onnx  # noqa: E402

F = TensorProto.FLOAT


def _vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def _seq_vi(name):
    return helper.make_tensor_sequence_value_info(name, F, None)


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


A = np.arange(6, dtype="float32").reshape(2, 3)
B = -np.arange(6, dtype="float32").reshape(2, 3)


def test_sequences_built_in_the_graph():
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["parts"], axis=1, keepdims=0),
        helper.make_node("SequenceConstruct", ["x", "y"], ["pair"]),
        helper.make_node("SequenceInsert", ["pair", "x"], ["three"]),
        helper.make_node("SequenceErase", ["three"], ["two"]),
        helper.make_node("ConcatFromSequence", ["two"], ["stacked"], axis=0, new_axis=1),
        helper.make_node("SequenceLength", ["parts"], ["n"]),
    ]
    model = _model(nodes, [_vi("x", [2, 3]), _vi("y", [2, 3])],
                   [_seq_vi("parts"), _vi("stacked", None),
                    helper.make_tensor_value_info("n", TensorProto.INT64, [])])
    want = ReferenceEvaluator(model).run(None, {"x": A, "y": B})
    mod, _ = from_onnx(model)
    parts, stacked, n = r.create_executor("debug", mod).evaluate()(A, B)
    assert isinstance(parts, tuple) and len(parts) == len(want[0]) == 3
    for g, w in zip(parts, want[0]):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(stacked, want[1])
    assert n == want[2]


def test_a_sequence_input_is_a_tuple_parameter_and_maps_through_a_body():
    body = helper.make_graph([helper.make_node("Add", ["e", "t"], ["o"])], "body",
                             [_vi("e", None), _vi("t", [3])], [_vi("o", None)])
    nodes = [helper.make_node("SequenceMap", ["s", "t"], ["mapped"], body=body)]
    model = _model(nodes, [_seq_vi("s"), _vi("t", [3])], [_seq_vi("mapped")])
    t = np.array([1, 2, 3], "float32")
    want = ReferenceEvaluator(model).run(None, {"s": [A, B[:1]], "t": t})[0]
    with pytest.raises(ConversionError, match="element shapes"):
        from_onnx(model)
    mod, _ = from_onnx(model, shape={"s": [(2, 3), (1, 3)]})
    got = r.create_executor("debug", mod).evaluate()((A, B[:1]), t)
    assert len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_a_loop_carrying_a_sequence_is_unrolled_when_its_trip_count_is_known():
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("SequenceInsert", ["s_in", "xi"], ["s_out"]),
         helper.make_node("Identity", ["c"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c", TensorProto.BOOL, []), _seq_vi("s_in")],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), _seq_vi("s_out")])
    nodes = [
        helper.make_node("Constant", [], ["M"], value=helper.make_tensor(
            "M", TensorProto.INT64, [], [3])),
        helper.make_node("Constant", [], ["T"], value=helper.make_tensor(
            "T", TensorProto.BOOL, [], [True])),
        helper.make_node("SequenceEmpty", [], ["s0"], dtype=F),
        helper.make_node("Loop", ["M", "T", "s0"], ["s"], body=body),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1),
    ]
    model = _model(nodes, [_vi("x", [2, 3])], [_vi("y", None)])
    want = ReferenceEvaluator(model).run(None, {"x": A})[0]
    mod, _ = from_onnx(model)
    assert "%loop" not in mod.astext()  # unrolled: three inserts
    np.testing.assert_array_equal(r.create_executor("debug", mod).evaluate()(A), want)


@pytest.mark.parametrize("present", [True, False])
def test_optionals_are_their_value_or_empty(present):
    opt = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(F, [3])))
    model = _model([helper.make_node("OptionalHasElement", ["o"], ["has"])], [opt],
                   [helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    x = np.ones(3, "float32")
    want = ReferenceEvaluator(model).run(None, {"o": x if present else None})[0]
    if present:
        mod, _ = from_onnx(model)
        got = r.create_executor("debug", mod).evaluate()(x)
    else:
        mod, _ = from_onnx(model, const_inputs={"o": None})
        got = r.create_executor("debug", mod).evaluate()()
    assert bool(got) == bool(want) == present
