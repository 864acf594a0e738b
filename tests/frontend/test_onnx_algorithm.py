"""ONNX sorting, scans, einsum, one-hot, gathers/scatters and bitwise ops, each model
checked against onnx's reference evaluator (through the debug executor)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from relayir.executor import create_executor  # noqa: E402
from relayir.frontend import from_onnx  # noqa: E402

RNG = np.random.default_rng(0)


def _vi(name, arr):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype),
                                         arr.shape)


def _model(op, inputs, inits, outputs, opset, attrs):
    node = helper.make_node(op, [*inputs, *inits], list(outputs), **attrs)
    graph = helper.make_graph(
        [node], "g", [_vi(n, a) for n, a in inputs.items()],
        [helper.make_tensor_value_info(o, 0, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def check(op, inputs, inits=(), outputs=("y",), opset=18, reference=None, **attrs):
    """One-node model ``op(inputs + inits)``; inits are constants (initializers).
    ``reference``: (op, opset) the evaluator runs instead, where it lacks ``op``."""
    inits = dict(inits)
    model = _model(op, inputs, inits, outputs, opset, attrs)
    ref_model = model if reference is None else _model(reference[0], inputs, inits, outputs,
                                                       reference[1], attrs)
    want = ReferenceEvaluator(ref_model).run(None, inputs)
    mod, params = from_onnx(model)
    got = create_executor("debug", mod).evaluate()(*inputs.values(), **params)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def x(*shape):
    return RNG.uniform(-2, 2, shape).astype("float32")


TIES = np.array([[1, 3, 3, 2, 3], [2, 1, 1, 2, 0]], "float32")
K2 = {"k": np.array([2], "int64")}


@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("axis", [-1, 0])
def test_topk(largest, axis):
    check("TopK", {"a": x(4, 5)}, K2, ("v", "i"), axis=axis, largest=largest)


def test_topk_ties_in_index_order():
    check("TopK", {"a": TIES}, {"k": np.array([3], "int64")}, ("v", "i"))
    check("TopK", {"a": TIES}, K2, ("v", "i"), largest=0)


def test_topk_old_opsets():
    check("TopK", {"a": x(3, 6)}, {}, ("v", "i"), opset=1, k=2)
    check("TopK", {"a": x(3, 6)}, K2, ("v", "i"), opset=10)


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumsum(exclusive, reverse):
    check("CumSum", {"a": x(3, 4)}, {"axis": np.array(1, "int64")}, exclusive=exclusive,
          reverse=reverse)


def test_cumprod():
    if onnx.defs.onnx_opset_version() < 26:
        pytest.skip("CumProd is new in opset 26")
    check("CumProd", {"a": x(3, 4)}, {"axis": np.array(0, "int64")}, opset=26, exclusive=1)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 2])
def test_trilu(upper, k):
    inits = {} if k is None else {"k": np.array(k, "int64")}
    check("Trilu", {"a": x(2, 4, 5)}, inits, upper=upper)


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ij->", [(3, 4)]),
    ("i,j", [(3,), (4,)]),
    ("...j,j", [(2, 3, 4), (4,)]),
])
def test_einsum(equation, shapes):
    check("Einsum", {f"a{i}": x(*s) for i, s in enumerate(shapes)}, equation=equation)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    idx = np.array([[0, 2, -1], [3, 1, -3]], "int64")
    check("OneHot", {"i": idx}, {"d": np.array(4, "int64"),
                                 "v": np.array([-1.0, 2.0], "float32")}, axis=axis)


def test_gather_elements_with_negative_indices():
    idx = np.array([[0, -1], [1, 0], [-2, 2]], "int64")
    check("GatherElements", {"a": x(3, 3), "i": idx}, axis=1)
    check("GatherElements", {"a": x(3, 4), "i": np.array([[2, 0, 1, -3]], "int32")}, axis=0)


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd(batch_dims):
    idx = np.array([[[1, 0], [0, 2]], [[0, 1], [1, 2]]], "int64")
    if batch_dims:
        idx = idx[:, :, 1:]
    check("GatherND", {"a": x(2, 3, 4), "i": idx}, batch_dims=batch_dims)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements(reduction):
    idx = np.array([[1, 0, 2], [0, -1, 1]], "int64")
    check("ScatterElements", {"a": x(3, 3), "i": idx, "u": x(2, 3)}, axis=0,
          reduction=reduction)


def test_deprecated_scatter():
    idx = np.array([[1, 0, 2]], "int64")
    check("Scatter", {"a": x(3, 3), "i": idx, "u": x(1, 3)}, opset=9, axis=1,
          reference=("ScatterElements", 11))


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd(reduction):
    idx = np.array([[0, 1], [2, 2], [1, 0]], "int64")
    check("ScatterND", {"a": x(3, 3, 2), "i": idx, "u": x(3, 2)}, reduction=reduction)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift(direction):
    a = np.array([1, 16, 255, 7], "uint8")
    s = np.array([1, 2, 3, 0], "uint8")
    check("BitShift", {"a": a, "s": s}, direction=direction)


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise_binary(op):
    a = RNG.integers(-50, 50, (3, 4)).astype("int32")
    check(op, {"a": a, "b": RNG.integers(-50, 50, (4,)).astype("int32")})


def test_bitwise_not():
    check("BitwiseNot", {"a": RNG.integers(0, 255, (5,)).astype("uint8")})
