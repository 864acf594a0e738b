"""Reductions: relation, reference and constructors against numpy.

Expected values are plain numpy written here; integer results are computed in the
input dtype on purpose (Relay keeps it, numpy would widen to int64).
"""

from __future__ import annotations

import numpy as np
import pytest

import relayir
from relayir import Any, SymbolicDim, TensorType
from relayir.errors import OpError, TypeInferenceError
from relayir.ir.expr import Function
from relayir.op import OpPattern, get_op
from relayir.testing.op_check import check_op, infer_op_type, rand
from relayir.typing import infer_expr

X = rand((3, 4, 5))
I = rand((3, 7), "int32", seed=1)
V = rand((7,), seed=2)
S = np.float32(-1.25)
B = rand((3, 4), "bool", seed=3)


def f32(a):
    return np.asarray(a, "float32")


def i32(a):
    return np.asarray(a, "int32")


# (op, input, attrs, expected)
SIMPLE = [
    # ---- sum
    ("sum", X, {}, f32(X.sum())),
    ("sum", X, {"axis": 1}, f32(X.sum(1))),
    ("sum", X, {"axis": -1, "keepdims": True}, f32(X.sum(2, keepdims=True))),
    ("sum", X, {"axis": (0, 2)}, f32(X.sum((0, 2)))),
    ("sum", X, {"axis": 1, "exclude": True}, f32(X.sum((0, 2)))),
    ("sum", X, {"axis": (0, -1), "exclude": True, "keepdims": True},
     f32(X.sum(1, keepdims=True))),
    ("sum", X, {"axis": ()}, f32(X.sum())),
    ("sum", X, {"axis": (0, 1, 2), "exclude": True}, X),
    ("sum", I, {"axis": 0}, i32(I.sum(0))),
    ("sum", V, {"axis": 0}, f32(V.sum())),
    ("sum", S, {}, S),
    # ---- prod
    ("prod", X[:, :2, :2], {"axis": -1}, f32(X[:, :2, :2].prod(-1))),
    ("prod", I, {"axis": 1, "keepdims": True}, i32(I.prod(1, keepdims=True))),
    # ---- mean (integer mean keeps the dtype and truncates toward zero)
    ("mean", X, {"axis": (1, 2)}, f32(X.mean((1, 2)))),
    ("mean", X, {"axis": 0, "exclude": True, "keepdims": True},
     f32(X.mean((1, 2), keepdims=True))),
    ("mean", np.array([[-3, 4], [2, -8]], "int32"), {"axis": 0}, i32([0, -2])),
    ("mean", np.array([7, 8, 10], "int32"), {}, i32(8)),
    ("mean", V.astype("float16"), {}, np.float16(V.astype("float16").astype("float32").mean())),
    ("mean", S, {}, S),
    # ---- max / min
    ("max", X, {}, f32(X.max())),
    ("max", X, {"axis": -2}, f32(X.max(1))),
    ("max", I, {"axis": 1, "keepdims": True}, i32(I.max(1, keepdims=True))),
    ("min", X, {"axis": (0, 1)}, f32(X.min((0, 1)))),
    ("min", I, {"axis": 0, "exclude": True}, i32(I.min(1))),
    ("min", B, {"axis": 1}, B.min(1)),
    ("max", S, {}, S),
    # ---- all / any
    ("all", B, {}, np.bool_(B.all())),
    ("all", B, {"axis": 0}, B.all(0)),
    ("any", B, {"axis": -1, "keepdims": True}, B.any(1, keepdims=True)),
    ("any", B, {"axis": 1, "exclude": True}, B.any(0)),
    ("any", np.bool_(True), {}, np.bool_(True)),
    # ---- argmax / argmin (int32, row-major over the reduced axes)
    ("argmax", X, {"axis": 1}, i32(X.argmax(1))),
    ("argmax", X, {}, i32(X.argmax())),
    ("argmax", X, {"axis": (0, 2)}, i32([X[:, j, :].argmax() for j in range(4)])),
    ("argmax", X, {"axis": 1, "exclude": True, "keepdims": True},
     i32([X[:, j, :].argmax() for j in range(4)]).reshape(1, 4, 1)),
    ("argmin", X, {"axis": -1, "keepdims": True}, i32(X.argmin(-1)[..., None])),
    ("argmin", I, {"axis": 0}, i32(I.argmin(0))),
    ("argmax", V, {"axis": 0}, i32(V.argmax())),
    ("argmax", S, {}, i32(0)),
    ("argmax", np.array([[1, 5, 5], [7, 2, 7]], "int32"), {"axis": 1},
     i32([1, 0])),
    ("argmax", np.array([[1, 5, 5], [7, 2, 7]], "int32"),
     {"axis": 1, "select_last_index": True}, i32([2, 2])),
    ("argmin", np.array([[3, 3, 9], [0, 4, 0]], "int32"),
     {"axis": -1, "select_last_index": True}, i32([1, 2])),
    ("argmin", np.array([[3, 3], [9, 3]], "int32"), {"select_last_index": True}, i32(3)),
    # ---- variance / std
    ("variance", X, {"axis": 1}, f32(X.var(1))),
    ("variance", X, {"axis": (0, 2), "unbiased": True}, f32(X.var((0, 2), ddof=1))),
    ("variance", X, {"axis": 1, "exclude": True, "keepdims": True},
     f32(X.var((0, 2), keepdims=True))),
    ("variance", V.astype("float64"), {}, np.float64(V.astype("float64").var())),
    ("std", X, {"axis": -1}, f32(X.std(-1))),
    ("std", X, {"unbiased": True}, f32(X.std(ddof=1))),
    ("std", V.astype("float16"), {"keepdims": True},
     V.astype("float16").astype("float32").std(keepdims=True).astype("float16")),
    # ---- logsumexp
    ("logsumexp", X, {"axis": 1}, f32(np.log(np.exp(X).sum(1)))),
    ("logsumexp", X, {}, f32(np.log(np.exp(X).sum()))),
    ("logsumexp", X, {"axis": 0, "keepdims": True}, f32(np.log(np.exp(X).sum(0, keepdims=True)))),
    ("logsumexp", np.array([[1000.0, 1000.0], [-np.inf, -np.inf]], "float32"), {"axis": 1},
     f32([1000 + np.log(2), -np.inf])),
]


@pytest.mark.parametrize("op, data, attrs, expected", SIMPLE,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(SIMPLE)])
def test_reduce_op(op, data, attrs, expected):
    rtol = 2e-3 if np.asarray(data).dtype == np.float16 else 1e-5
    check_op(op, [data], expected, attrs, rtol=rtol, atol=1e-5)


def test_integer_sum_wraps_in_input_dtype():
    big = np.full((4,), 2**30, "int32")
    check_op("sum", [big], np.int32(0), {})  # 2**32 wraps to 0 in int32


def test_empty_reductions():
    empty = np.zeros((0, 3), "float32")
    check_op("sum", [empty], np.zeros(3, "float32"), {"axis": 0})
    check_op("max", [empty], np.full(3, -np.inf, "float32"), {"axis": 0})
    check_op("min", [np.zeros((2, 0), "int32")], np.full(2, np.iinfo("int32").max, "int32"),
             {"axis": 1})


# ---------------------------------------------------------------- bad input

X23 = rand((2, 3))
BAD = [
    ("sum", X23, {"axis": 2}, ["axis 2 is out of range for a tensor of rank 2"]),
    ("sum", np.array([True]), {}, ["numeric", "Tensor[(1), bool]"]),
    ("mean", X23, {"axis": (0, -2)}, ["axis (0, -2) repeats an axis"]),
    ("max", X23, {"axis": -3}, ["axis -3 is out of range", "-2 <= axis < 2"]),
    ("min", S, {"axis": 0}, ["axis 0 is out of range for a tensor of rank 0"]),
    ("prod", np.array([False]), {}, ["Tensor[(1), bool]"]),
    ("all", X23, {}, ["bool tensor", "Tensor[(2, 3), float32]"]),
    ("any", I, {}, ["bool tensor", "Tensor[(3, 7), int32]"]),
    ("argmax", X23, {"axis": 5}, ["axis 5", "rank 2"]),
    ("argmin", X23, {"axis": (1, 1)}, ["repeats an axis"]),
    ("variance", I, {}, ["float dtype", "Tensor[(3, 7), int32]"]),
    ("std", I, {"axis": 1}, ["float dtype", "Tensor[(3, 7), int32]"]),
    ("logsumexp", I, {}, ["float dtype", "Tensor[(3, 7), int32]"]),
]


@pytest.mark.parametrize("op, data, attrs, fragments", BAD,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_reduce_bad_input(op, data, attrs, fragments):
    with pytest.raises(TypeInferenceError) as info:
        infer_op_type(op, [data], attrs)
    message = str(info.value)
    assert message.startswith(f"{op}: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_bad_axis_attr_is_an_op_error():
    with pytest.raises(OpError, match="sum: .*axis must be an int"):
        relayir.sum(relayir.var("x", shape=(2,)), axis=1.5)


# ---------------------------------------------------------------- types, constructors, registry

n = SymbolicDim("n")
A = Any()
DYNAMIC = [
    (lambda x: relayir.sum(x, axis=1), (n, A, 4), TensorType((n, 4))),
    (lambda x: relayir.mean(x, axis=-1, keepdims=True), (n, A, 4), TensorType((n, A, 1))),
    (lambda x: relayir.max(x, axis=(0, 2), exclude=True), (n, A, 4), TensorType((n, 4))),
    (lambda x: relayir.argmax(x, axis=0), (n, A, 4), TensorType((A, 4), "int32")),
    (lambda x: relayir.any(relayir.cast(x, "bool")), (n, A, 4), TensorType((), "bool")),
    (lambda x: relayir.std(x, axis=(0,), keepdims=True), (n, A), TensorType((1, A))),
    (lambda x: relayir.logsumexp(x, 1), (n, 3), TensorType((n,))),
]


@pytest.mark.parametrize("build, shape, expected", DYNAMIC, ids=range(len(DYNAMIC)))
def test_reduce_dynamic_shapes(build, shape, expected):
    x = relayir.var("x", TensorType(shape))
    body = build(x)
    infer_expr(Function([x], body))
    assert body.checked_type == expected


OPS = ["sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin", "variance",
       "std", "logsumexp"]


@pytest.mark.parametrize("op", OPS)
def test_registered_as_comm_reduce(op):
    assert get_op(op).pattern == OpPattern.COMM_REDUCE
    dtype = "bool" if op in ("all", "any") else "float32"
    call = getattr(relayir, op)(relayir.var("x", shape=(2, 3), dtype=dtype), axis=1,
                                keepdims=True)
    hash(call.attrs)
    assert call.attrs.axis == (1,) and call.attrs.keepdims is True
    infer_expr(Function([call.args[0]], call))
    out_dtype = "int32" if op.startswith("arg") else dtype
    assert call.checked_type == TensorType((2, 1), out_dtype)


def test_constructor_keywords_follow_relay():
    x = relayir.var("x", shape=(2, 3))
    assert relayir.argmin(x, 0, False, False, True).attrs.select_last_index is True
    assert relayir.variance(x, [0], unbiased=True).attrs.unbiased is True
    assert relayir.sum(x).attrs.axis is None
