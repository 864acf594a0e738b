"""Algorithm, scatter/gather and bitwise ops: relation, reference and constructors
against numpy (and torch where it defines the semantics: stable sort order).

Expected values are written here with plain numpy, or with explicit loops for the
scatters, independently of the ops' references.
"""

from __future__ import annotations

import numpy as np
import pytest

import relayir
from relayir import TensorType, TupleType
from relayir.errors import OpError, TypeInferenceError
from relayir.op import OpPattern, get_op
from relayir.op import algorithm as A
from relayir.op import bitwise as B
from relayir.op import scatter as S
from relayir.testing.op_check import check_op, infer_op_type, rand
from relayir.typing import infer_expr

X36 = rand((3, 6))
X234 = rand((2, 3, 4), seed=1)
I45 = rand((4, 5), "int32", seed=2)
TIES = np.array([[1, 3, 3, 2, 3], [2, 1, 1, 2, 0]], "float32")


def case(op, inputs, attrs, expected, id):
    return pytest.param(op, inputs, attrs, expected, id=id)


def _desc(x, axis):
    return -np.sort(-x, axis=axis)


def _excl_cumsum(x, axis):
    c = np.cumsum(x, axis=axis)
    return c - x


def _scatter_elements_loop(data, indices, updates, axis, combine):
    out = data.copy()
    for pos in np.ndindex(*indices.shape):
        target = list(pos)
        i = int(indices[pos])
        target[axis] = i + data.shape[axis] if i < 0 else i
        target = tuple(target)
        out[target] = combine(out[target], updates[pos])
    return out


def _scatter_nd_loop(data, indices, updates, combine):
    out = data.copy()
    m = indices.shape[0]
    for pos in np.ndindex(*indices.shape[1:]):
        target = tuple(int(indices[(k,) + pos]) for k in range(m))
        out[target] = combine(out[target], updates[pos])
    return out


_SET = lambda old, new: new  # noqa: E731
SI = np.array([[1, 0, 2, 2, 0, 1], [1, -1, 0, 2, 0, 0]], "int64")
SU = rand((2, 6), seed=5)
NI = np.array([[0, 2, 0, -1], [1, 3, 1, 5]], "int64")
NU = rand((4,), seed=6)

CASES = [
    # ---- topk: values/indices, ties in index order both ways, axis, k < 1 (all)
    case("topk", [X36], {"k": 2}, (_desc(X36, 1)[:, :2], np.argsort(-X36, 1)[:, :2]
                                   .astype("int32")), "topk-both"),
    case("topk", [TIES], {"k": 3, "ret_type": "indices", "dtype": "int64"},
         np.array([[1, 2, 4], [0, 3, 1]], "int64"), "topk-ties-largest"),
    case("topk", [TIES], {"k": 2, "is_ascend": True, "ret_type": "indices"},
         np.array([[0, 3], [4, 1]], "int32"), "topk-ties-smallest"),
    case("topk", [X36], {"k": 2, "axis": 0, "ret_type": "values", "is_ascend": True},
         np.sort(X36, 0)[:2], "topk-axis0"),
    case("topk", [I45], {"k": 0, "ret_type": "values"}, _desc(I45, 1), "topk-all-int"),
    # ---- sort / argsort
    case("sort", [X234], {}, np.sort(X234, -1), "sort"),
    case("sort", [X234], {"axis": 1, "is_ascend": False}, _desc(X234, 1), "sort-desc"),
    case("sort", [np.array([1.0, np.nan, 0.0, -np.inf], "float32")], {"is_ascend": False},
         np.array([np.nan, 1, 0, -np.inf], "float32"), "sort-nan-first-desc"),
    case("argsort", [TIES], {}, np.argsort(TIES, 1, kind="stable").astype("int32"),
         "argsort-stable"),
    case("argsort", [TIES], {"is_ascend": False, "dtype": "int64"},
         np.array([[1, 2, 4, 3, 0], [0, 3, 1, 2, 4]], "int64"), "argsort-desc-ties"),
    # ---- cumsum / cumprod
    case("cumsum", [X234], {"axis": 1}, np.cumsum(X234, 1), "cumsum"),
    case("cumsum", [X234], {}, np.cumsum(X234), "cumsum-flat"),
    case("cumsum", [X234], {"axis": -1, "exclusive": True}, _excl_cumsum(X234, -1),
         "cumsum-exclusive"),
    case("cumsum", [X234], {"axis": 0, "reverse": True},
         np.flip(np.cumsum(np.flip(X234, 0), 0), 0), "cumsum-reverse"),
    case("cumsum", [X234], {"axis": 2, "exclusive": True, "reverse": True},
         np.flip(_excl_cumsum(np.flip(X234, 2), 2), 2), "cumsum-exclusive-reverse"),
    case("cumsum", [I45], {"axis": 0, "dtype": "int64"}, np.cumsum(I45, 0, dtype="int64"),
         "cumsum-dtype"),
    case("cumsum", [I45 > 0], {"axis": 1, "dtype": "int32"},
         np.cumsum(I45 > 0, 1).astype("int32"), "cumsum-bool"),
    case("cumprod", [X234], {"axis": 1}, np.cumprod(X234, 1), "cumprod"),
    case("cumprod", [X234], {"axis": 2, "exclusive": True},
         np.concatenate([np.ones((2, 3, 1), "float32"), np.cumprod(X234, 2)[..., :-1]], 2),
         "cumprod-exclusive"),
    # ---- trilu
    case("trilu", [X36], {}, np.triu(X36), "triu"),
    case("trilu", [X234], {"k": 1, "upper": False}, np.tril(X234, 1), "tril-k"),
    case("trilu", [I45], {"k": -2, "upper": True}, np.triu(I45, -2), "triu-negative-k"),
    # ---- einsum
    case("einsum", [(X36, rand((6, 2), seed=3))], {"equation": "ij,jk->ik"},
         X36 @ rand((6, 2), seed=3), "einsum-matmul"),
    case("einsum", [(X234,)], {"equation": "ijk->kji"}, X234.transpose(2, 1, 0),
         "einsum-transpose"),
    case("einsum", [(rand((3, 3)),)], {"equation": "ii"}, np.trace(rand((3, 3))),
         "einsum-trace"),
    case("einsum", [(rand((2, 3, 3)),)], {"equation": "...ii->...i"},
         np.diagonal(rand((2, 3, 3)), axis1=1, axis2=2), "einsum-diagonal-ellipsis"),
    case("einsum", [(X234, rand((4,), seed=4))], {"equation": "...j,j"},
         X234 @ rand((4,), seed=4), "einsum-implicit-ellipsis"),
    case("einsum", [(rand((1, 3, 4)), rand((2, 4, 5), seed=1))],
         {"equation": "...ij,...jk->...ik"}, rand((1, 3, 4)) @ rand((2, 4, 5), seed=1),
         "einsum-broadcast-batch"),
    case("einsum", [(rand((3,)), rand((4,), seed=1))], {"equation": "i,j"},
         np.outer(rand((3,)), rand((4,), seed=1)), "einsum-outer"),
    case("einsum", [(X234,)], {"equation": "ijk->"}, np.sum(X234), "einsum-sum-all"),
    case("einsum", [(I45, I45)], {"equation": "ij,ij->j"}, np.sum(I45 * I45, 0, dtype="int32"),
         "einsum-int"),
    # ---- one_hot
    case("one_hot", [np.array([0, 2, -1, 3]), np.float32(5), np.float32(-1)], {"depth": 3},
         np.array([[5, -1, -1], [-1, -1, 5], [-1] * 3, [-1] * 3], "float32"), "one_hot"),
    case("one_hot", [np.array([[1, 0]], "int32"), np.int32(1), np.int32(0)],
         {"depth": 2, "axis": 0, "dtype": "int32"},
         np.array([[[0, 1]], [[1, 0]]], "int32"), "one_hot-axis0"),
    # ---- arange
    case("arange", [], {"stop": 5, "dtype": "int64"}, np.arange(5), "arange"),
    case("arange", [], {"start": 1, "stop": 2, "step": 0.25}, np.arange(1, 2, 0.25,
                                                                         dtype="float32"),
         "arange-float-step"),
    case("arange", [], {"start": 10, "stop": 0, "step": -3, "dtype": "int32"},
         np.arange(10, 0, -3, dtype="int32"), "arange-negative-step"),
    case("arange", [], {"start": 3, "stop": 1}, np.zeros((0,), "float32"), "arange-empty"),
    # ---- gather (GatherElements) with negative indices, smaller index shape
    case("gather", [X36, np.array([[0, -1], [5, 2]], "int64")], {"axis": 1},
         np.take_along_axis(X36[:2], np.array([[0, 5], [5, 2]]), 1), "gather-axis1"),
    case("gather", [X234, np.zeros((2, 1, 4), "int32") + 2], {"axis": 1},
         X234[:, 2:3, :], "gather-axis1-3d"),
    # ---- gather_nd (index tuples along the first axis)
    case("gather_nd", [X234, np.array([[1, 0, -1], [2, 0, 1]], "int64")], {},
         np.stack([X234[1, 2], X234[0, 0], X234[1, 1]]), "gather_nd-slices"),
    case("gather_nd", [X234, np.array([[1], [2], [3]], "int32")], {},
         X234[1, 2, 3][None], "gather_nd-elements"),
    case("gather_nd", [X234, np.array([[[1, 0], [2, 2]]], "int64")], {"batch_dims": 1},
         np.stack([X234[0][[1, 0]], X234[1][[2, 2]]]), "gather_nd-batch"),
    # ---- scatter_elements / scatter_nd: every reduction, duplicates, negatives
    *[case("scatter_elements", [X36[:3], SI, SU], {"axis": 0, "reduction": r},
           _scatter_elements_loop(X36[:3], SI, SU, 0, fn), f"scatter_elements-{r}")
      for r, fn in (("update", _SET), ("add", np.add), ("mul", np.multiply),
                    ("min", np.minimum), ("max", np.maximum))],
    case("scatter_elements", [X36, SI[:, :3], SU[:, :3]], {"axis": 1},
         _scatter_elements_loop(X36, SI[:, :3], SU[:, :3], 1, _SET), "scatter_elements-axis1"),
    *[case("scatter_nd", [X36, NI, NU], {"mode": m},
           _scatter_nd_loop(X36, np.where(NI < 0, NI + 3, NI), NU, fn), f"scatter_nd-{m}")
      for m, fn in (("update", _SET), ("add", np.add), ("mul", np.multiply),
                    ("min", np.minimum), ("max", np.maximum))],
    case("scatter_nd", [X36, np.array([[2, 0]]), rand((2, 6), seed=7)], {"mode": "add"},
         _scatter_nd_loop(X36, np.array([[2, 0]]), rand((2, 6), seed=7), np.add),
         "scatter_nd-rows"),
    # ---- bitwise
    case("bitwise_and", [I45, np.int32(6)], {}, I45 & 6, "bitwise_and"),
    case("bitwise_or", [I45, I45[0]], {}, I45 | I45[0], "bitwise_or"),
    case("bitwise_xor", [I45 > 0, I45 < 3], {}, (I45 > 0) ^ (I45 < 3), "bitwise_xor-bool"),
    case("bitwise_not", [I45.astype("uint8")], {}, ~I45.astype("uint8"), "bitwise_not-uint8"),
    case("left_shift", [np.array([1, 3, 255], "uint8"), np.array([1, 7, 8], "uint8")], {},
         np.array([2, 128, 0], "uint8"), "left_shift-wide"),
    case("right_shift", [np.array([-8, 8, -1], "int32"), np.array([1, 2, 40], "int32")], {},
         np.array([-4, 2, -1], "int32"), "right_shift-arithmetic"),
]


@pytest.mark.parametrize("op, inputs, attrs, expected", CASES)
def test_algorithm_op(op, inputs, attrs, expected):
    if isinstance(expected, tuple):
        expected = tuple(np.asarray(e) for e in expected)
    check_op(op, inputs, expected, attrs, rtol=1e-5, atol=1e-5)


def test_sort_matches_torch_stable_sort_with_ties():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).integers(0, 4, (5, 9)).astype("float32")
    for descending in (False, True):
        want = torch.sort(torch.from_numpy(x), dim=1, descending=descending, stable=True)
        check_op("argsort", [x], want.indices.numpy().astype("int32"),
                 {"axis": 1, "is_ascend": not descending})
        check_op("sort", [x], want.values.numpy(), {"axis": 1, "is_ascend": not descending})


def test_gather_and_scatter_match_torch():
    torch = pytest.importorskip("torch")
    x = rand((4, 5))
    idx = np.random.default_rng(1).integers(0, 4, (3, 5))
    want = torch.gather(torch.from_numpy(x), 0, torch.from_numpy(idx)).numpy()
    check_op("gather", [x, idx], want, {"axis": 0})
    upd = rand((3, 5), seed=2)
    want = torch.from_numpy(x).scatter_add(0, torch.from_numpy(idx), torch.from_numpy(upd))
    check_op("scatter_elements", [x, idx, upd], want.numpy(), {"axis": 0, "reduction": "add"})


# ---------------------------------------------------------------- bad input

BAD = [
    ("topk", [X36], {"k": 7}, ["k 7 is larger", "Tensor[(3, 6), float32]"]),
    ("topk", [X36], {"axis": 2}, ["axis 2 is out of range", "data Tensor[(3, 6), float32]"]),
    ("cumsum", [I45 > 0], {"axis": 0}, ["bool", "give dtype"]),
    ("trilu", [rand((4,))], {}, ["rank >= 2", "Tensor[(4), float32]"]),
    ("einsum", [(X36, X36)], {"equation": "ij,jk->ik"}, ["subscript 'j'", "size 3"]),
    ("einsum", [(X36,)], {"equation": "ijk->i"}, ["3 subscript(s) but rank 2"]),
    ("einsum", [(X36,)], {"equation": "ij->q"}, ["output subscripts"]),
    ("einsum", [(X36, I45)], {"equation": "ij,kl"}, ["dtype mismatch"]),
    ("one_hot", [X36, np.float32(1), np.float32(0)], {"depth": 2},
     ["indices must have an integer dtype"]),
    ("one_hot", [I45, np.ones(2, "float32"), np.float32(0)], {"depth": 2},
     ["on_value must be a scalar"]),
    ("gather", [X36, np.zeros((4, 6), "int32")], {"axis": 1},
     ["indices Tensor[(4, 6), int32] is larger than data", "axis 0"]),
    ("gather", [X36, np.zeros((3,), "int32")], {"axis": 0}, ["must have the rank of data"]),
    ("gather_nd", [X36, np.zeros((3, 2), "int32")], {}, ["addresses 3 axes", "rank 2"]),
    ("scatter_elements", [X36, np.zeros((2, 2), "int32"), rand((2, 3))], {},
     ["updates Tensor[(2, 3), float32] must have the shape of indices"]),
    ("scatter_nd", [X36, np.zeros((1, 2), "int32"), rand((2, 5))], {},
     ["updates Tensor[(2, 5), float32] must be Tensor[(2, 6), float32]"]),
    ("bitwise_and", [X36, X36], {}, ["integer or bool dtype", "Tensor[(3, 6), float32]"]),
    ("left_shift", [I45 > 0, I45 > 0], {}, ["lhs must have an integer dtype"]),
]


@pytest.mark.parametrize("op, inputs, attrs, fragments", BAD,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_algorithm_bad_input(op, inputs, attrs, fragments):
    with pytest.raises(TypeInferenceError) as info:
        infer_op_type(op, inputs, attrs)
    message = str(info.value)
    assert message.startswith(f"{op}: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


BAD_ATTRS = [
    ("topk", {"ret_type": "all"}, "ret_type"),
    ("topk", {"dtype": "float32"}, "integer type"),
    ("einsum", {"equation": ""}, "non-empty string"),
    ("arange", {"stop": 3, "step": 0}, "step must not be 0"),
    ("arange", {"stop": float("inf")}, "finite"),
    ("one_hot", {"depth": -1}, "depth must be >= 0"),
    ("scatter_elements", {"reduction": "mean"}, "reduction must be one of"),
    ("scatter_nd", {"mode": "sub"}, "mode must be one of"),
    ("gather_nd", {"batch_dims": -1}, "batch_dims"),
]


@pytest.mark.parametrize("op, attrs, fragment", BAD_ATTRS,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD_ATTRS)])
def test_algorithm_bad_attrs(op, attrs, fragment):
    n = get_op(op).num_inputs
    with pytest.raises(OpError) as info:
        relayir.op.call(op, [relayir.var(f"a{i}", shape=(2,)) for i in range(n)], **attrs)
    assert str(info.value).startswith(f"{op}: ") and fragment in str(info.value), info.value


def test_out_of_range_index_fails_at_run_time_naming_the_op():
    with pytest.raises(relayir.InterpreterError, match="gather"):
        check_op("gather", [X36, np.array([[6]], "int32")], X36[:1, :1], {"axis": 1})


PATTERNS = {
    "topk": OpPattern.OPAQUE, "sort": OpPattern.OPAQUE, "argsort": OpPattern.OPAQUE,
    "cumsum": OpPattern.OPAQUE, "cumprod": OpPattern.OPAQUE, "einsum": OpPattern.OPAQUE,
    "trilu": OpPattern.INJECTIVE, "one_hot": OpPattern.INJECTIVE,
    "arange": OpPattern.INJECTIVE, "gather": OpPattern.INJECTIVE,
    "gather_nd": OpPattern.INJECTIVE, "scatter_elements": OpPattern.OPAQUE,
    "scatter_nd": OpPattern.OPAQUE, "bitwise_and": OpPattern.BROADCAST,
    "left_shift": OpPattern.BROADCAST, "bitwise_not": OpPattern.ELEMWISE,
}


@pytest.mark.parametrize("op", sorted(PATTERNS))
def test_registered_with_pattern(op):
    assert get_op(op).pattern == PATTERNS[op]


x = relayir.var("x", shape=(4, 6))
i = relayir.var("i", shape=(2, 6), dtype="int64")
CONSTRUCTED = [
    (lambda: A.topk(x, 3), TupleType([TensorType((4, 3)), TensorType((4, 3), "int32")])),
    (lambda: A.sort(x, axis=0), TensorType((4, 6))),
    (lambda: A.argsort(x, dtype="int64"), TensorType((4, 6), "int64")),
    (lambda: A.cumsum(x), TensorType((24,))),
    (lambda: A.cumprod(x, axis=1, dtype="float64"), TensorType((4, 6), "float64")),
    (lambda: A.tril(x, 1), TensorType((4, 6))),
    (lambda: A.einsum([x, x], "ij,kj->ik"), TensorType((4, 4))),
    (lambda: A.one_hot(i, 1.0, 0.0, depth=3), TensorType((2, 6, 3))),
    (lambda: A.arange(relayir.const(2), relayir.const(9), 3, "int32"), TensorType((3,), "int32")),
    (lambda: S.gather(x, 0, i), TensorType((2, 6))),
    (lambda: S.gather_nd(x, i), TensorType((6,))),
    (lambda: S.scatter_elements(x, i, S.gather(x, 0, i), reduction="add"), TensorType((4, 6))),
    (lambda: S.scatter_nd(x, i, relayir.var("u", shape=(6,))), TensorType((4, 6))),
    (lambda: B.right_shift(i, relayir.const(np.int64(1))), TensorType((2, 6), "int64")),
    (lambda: B.bitwise_not(i), TensorType((2, 6), "int64")),
]


@pytest.mark.parametrize("build, expected", CONSTRUCTED, ids=range(len(CONSTRUCTED)))
def test_constructors(build, expected):
    assert infer_expr(build()).checked_type == expected


def test_attrs_print_and_parse_back():
    call = A.einsum([x, x], "...j,kj")
    text = relayir.astext(relayir.Function([x], call))
    assert 'equation="...j,kj"' in text
    again = relayir.parse_expr(text)
    assert again.body.attrs == call.attrs
