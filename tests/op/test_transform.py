"""Tensor-transform ops: relation, reference and constructors against numpy.

Every expected value is written here with plain numpy indexing, independently of the
op's reference implementation.
"""

from __future__ import annotations

import numpy as np
import pytest

import relayir
from relayir import Any, IRModule, SymbolicDim, TensorType, TupleType
from relayir.errors import OpError, TypeInferenceError
from relayir.ir.dim_expr import floordiv
from relayir.ir.expr import Call, Function, Tuple
from relayir.op import OpPattern, get_op
from relayir.runtime.interpreter import Interpreter
from relayir.testing.op_check import check_op, infer_op_type, rand
from relayir.typing import infer_expr, infer_module

X234 = rand((2, 3, 4))
X56 = rand((5, 6), seed=1)
I57 = rand((5, 7), "int32", seed=2)
S = np.float32(1.5)  # a 0-d input
V7 = rand((7,), seed=3)


def case(op, inputs, attrs, expected, id):
    return pytest.param(op, inputs, attrs, expected, id=id)


CASES = [
    # ---- reshape: plain, 0, -1, -2, -3, -4, allowzero
    case("reshape", [X234], {"newshape": (6, 4)}, X234.reshape(6, 4), "reshape-plain"),
    case("reshape", [X234], {"newshape": (-1,)}, X234.reshape(24), "reshape-flatten"),
    case("reshape", [X234], {"newshape": (4, 0, 2)}, X234.reshape(4, 3, 2), "reshape-copy0"),
    case("reshape", [X234], {"newshape": (0, -1)}, X234.reshape(2, 12), "reshape-0-1"),
    case("reshape", [X234], {"newshape": (-1, 0)}, X234.reshape(8, 3), "reshape-1-0"),
    case("reshape", [X234], {"newshape": (-2,)}, X234, "reshape-2"),
    case("reshape", [X234], {"newshape": (2, -2)}, X234, "reshape-2-rest"),
    case("reshape", [X234], {"newshape": (-3, 4)}, X234.reshape(6, 4), "reshape-3"),
    case("reshape", [rand((2, 3, 4, 5))], {"newshape": (-3, -3)},
         rand((2, 3, 4, 5)).reshape(6, 20), "reshape-3-3"),
    case("reshape", [X234], {"newshape": (0, -3)}, X234.reshape(2, 12), "reshape-0-3"),
    case("reshape", [X234], {"newshape": (-3, -2)}, X234.reshape(6, 4), "reshape-3-2"),
    case("reshape", [X234], {"newshape": (-4, 1, 2, -2)}, X234.reshape(1, 2, 3, 4),
         "reshape-4"),
    case("reshape", [X234], {"newshape": (-4, -1, 2, -2)}, X234.reshape(1, 2, 3, 4),
         "reshape-4-infer-left"),
    case("reshape", [X234], {"newshape": (2, -4, -1, 3, -2)}, X234.reshape(2, 1, 3, 4),
         "reshape-4-mid"),
    case("reshape", [S], {"newshape": (1, 1)}, np.full((1, 1), S), "reshape-0d"),
    case("reshape", [np.ones((1,), "int32")], {"newshape": ()},
         np.ones((), "int32"), "reshape-to-0d"),
    case("reshape", [I57], {"newshape": (7, -1)}, I57.reshape(7, 5), "reshape-int"),
    case("reshape", [np.zeros((0, 3))], {"newshape": (3, 0), "allowzero": True},
         np.zeros((3, 0)), "reshape-allowzero"),
    # ---- transpose
    case("transpose", [X234], {}, X234.transpose(2, 1, 0), "transpose-reverse"),
    case("transpose", [X234], {"axes": (0, 2, 1)}, X234.transpose(0, 2, 1), "transpose-axes"),
    case("transpose", [X234], {"axes": (-1, 0, 1)}, X234.transpose(2, 0, 1), "transpose-neg"),
    case("transpose", [I57], {"axes": [1, 0]}, I57.T, "transpose-int"),
    case("transpose", [V7], {}, V7, "transpose-1d"),
    case("transpose", [S], {}, np.asarray(S), "transpose-0d"),
    # ---- squeeze
    case("squeeze", [rand((1, 3, 1, 5))], {}, rand((1, 3, 1, 5))[0, :, 0, :], "squeeze-all"),
    case("squeeze", [rand((1, 3, 1, 5))], {"axis": (0,)}, rand((1, 3, 1, 5))[0],
         "squeeze-axis"),
    case("squeeze", [rand((1, 3, 1, 5))], {"axis": (-2,)}, rand((1, 3, 1, 5))[:, :, 0],
         "squeeze-neg"),
    case("squeeze", [np.ones((1,), "int32")], {}, np.ones((), "int32"), "squeeze-to-0d"),
    case("squeeze", [S], {}, np.asarray(S), "squeeze-0d"),
    # ---- expand_dims
    case("expand_dims", [X56], {"axis": 0}, X56[None], "expand-front"),
    case("expand_dims", [X56], {"axis": -1}, X56[:, :, None], "expand-back"),
    case("expand_dims", [X56], {"axis": 1, "num_newaxis": 2}, X56[:, None, None],
         "expand-two"),
    case("expand_dims", [X56], {"axis": -3}, X56[None], "expand-neg-front"),
    case("expand_dims", [X56], {"axis": 1, "num_newaxis": 0}, X56, "expand-none"),
    case("expand_dims", [S], {"axis": 0}, np.array([S]), "expand-0d"),
    # ---- concatenate (one tuple input)
    case("concatenate", [(X56, X56)], {"axis": 0}, np.vstack([X56, X56]), "concat-0"),
    case("concatenate", [(I57[:, :1], I57[:, :3], I57)], {"axis": -1},
         np.hstack([I57[:, :1], I57[:, :3], I57]), "concat-neg-int"),
    case("concatenate", [(X56,)], {"axis": 1}, X56, "concat-one"),
    case("concatenate", [(V7, V7[:3])], {"axis": 0}, np.r_[V7, V7[:3]], "concat-1d"),
    # ---- stack
    case("stack", [(X56, X56 + 1)], {"axis": 0}, np.array([X56, X56 + 1]), "stack-0"),
    case("stack", [(X56, X56 + 1)], {"axis": -1},
         np.dstack([X56, X56 + 1]), "stack-neg"),
    case("stack", [(X56, X56 + 1, X56)], {"axis": 2},
         np.dstack([X56, X56 + 1, X56]), "stack-at-end"),
    case("stack", [(np.int32(1), np.int32(2), np.int32(3))], {"axis": 0},
         np.array([1, 2, 3], "int32"), "stack-0d"),
    # ---- split (tuple-typed result)
    case("split", [rand((6, 4))], {"indices_or_sections": 3},
         (rand((6, 4))[0:2], rand((6, 4))[2:4], rand((6, 4))[4:6]), "split-sections"),
    case("split", [I57], {"indices_or_sections": (2, 5), "axis": 1},
         (I57[:, 0:2], I57[:, 2:5], I57[:, 5:7]), "split-indices"),
    case("split", [I57], {"indices_or_sections": 1, "axis": -1}, (I57,), "split-one"),
    case("split", [V7], {"indices_or_sections": [0, 7]}, (V7[:0], V7, V7[7:]),
         "split-empty-pieces"),
    # ---- strided_slice
    case("strided_slice", [X56], {"begin": (1, 2), "end": (4, 5)}, X56[1:4, 2:5],
         "slice-basic"),
    case("strided_slice", [X56], {"begin": (0, 1), "end": (5, 6), "strides": (2, 2)},
         X56[0:5:2, 1:6:2], "slice-strides"),
    case("strided_slice", [X56], {"begin": (-3,), "end": (-1,)}, X56[-3:-1], "slice-neg"),
    case("strided_slice", [X56], {"begin": (4,), "end": (0,), "strides": (-1,)},
         X56[4:0:-1], "slice-neg-stride"),
    case("strided_slice", [X56], {"begin": (-1,), "end": (-100,), "strides": (-2,)},
         X56[::-2], "slice-neg-stride-clamped"),
    case("strided_slice", [X56], {"begin": (2, -100), "end": (100, 100)}, X56[2:, :],
         "slice-clamp"),
    case("strided_slice", [X56], {"begin": (10,), "end": (20,)}, X56[10:20], "slice-empty"),
    case("strided_slice", [X56], {"begin": (1,), "end": (3,), "axes": (1,)}, X56[:, 1:3],
         "slice-axes"),
    case("strided_slice", [X56], {"begin": (1, 2), "end": (3, 4), "axes": (-1, 0)},
         X56[2:4, 1:3], "slice-axes-neg"),
    case("strided_slice", [X56], {"begin": (1, 2), "end": (2, -1), "slice_mode": "size"},
         X56[1:3, 2:], "slice-size"),
    case("strided_slice", [I57], {"begin": (0, 1), "end": (5, 7), "strides": (1, 3)},
         I57[:, 1::3], "slice-int"),
    case("strided_slice", [V7], {"begin": (1,), "end": (6,), "strides": (2,)}, V7[1:6:2],
         "slice-1d"),
    # ---- take
    case("take", [X56, np.array([0, 2, 4], "int32")], {"axis": 0}, X56[[0, 2, 4]],
         "take-axis0"),
    case("take", [X56, np.array([[5, 0], [1, 1]], "int64")], {"axis": -1},
         X56[:, [[5, 0], [1, 1]]], "take-axis-neg"),
    case("take", [X56, np.array([[0, 29], [7, 12]], "int32")], {},
         X56.reshape(-1)[[[0, 29], [7, 12]]], "take-flat"),
    case("take", [X56, np.array([-1, 7], "int32")], {"axis": 0}, X56[[0, 4]], "take-clip"),
    case("take", [X56, np.array([-1, 6, 11], "int32")], {"axis": 1, "mode": "wrap"},
         X56[:, [5, 0, 5]], "take-wrap"),
    case("take", [I57, np.array([3, 1], "int64")], {"axis": 0, "mode": "fast"}, I57[[3, 1]],
         "take-fast"),
    case("take", [X56, np.int32(3)], {"axis": 0}, X56[3], "take-scalar-index"),
    case("take", [X234, np.array([[2, 0], [1, 1]], "int32")], {"axis": 1, "batch_dims": 1},
         np.stack([X234[0][[2, 0]], X234[1][[1, 1]]]), "take-batch-dims"),
    # ---- cast
    case("cast", [np.array([-1.7, 0.2, 2.9], "float32")], {"dtype": "int32"},
         np.array([-1, 0, 2], "int32"), "cast-f2i"),
    case("cast", [I57], {"dtype": "float32"}, I57.astype("float32"), "cast-i2f"),
    case("cast", [np.array([0.0, 2.0], "float32")], {"dtype": "bool"},
         np.array([False, True]), "cast-to-bool"),
    case("cast", [np.array([True, False])], {"dtype": "float16"},
         np.array([1, 0], "float16"), "cast-from-bool"),
    case("cast", [S], {"dtype": "float64"}, np.float64(1.5), "cast-0d"),
    # ---- clip
    case("clip", [X56], {"a_min": -1.0, "a_max": 1.0}, np.minimum(np.maximum(X56, -1), 1),
         "clip-float"),
    case("clip", [I57], {"a_min": -1.5, "a_max": 2.5},
         np.minimum(np.maximum(I57, -1), 2).astype("int32"), "clip-int-truncates-bounds"),
    case("clip", [X56], {"a_min": 2.0, "a_max": 1.0}, np.full((5, 6), 2, "float32"),
         "clip-min-over-max"),
    case("clip", [np.array([0, 7, 255], "uint8")], {"a_min": -5, "a_max": 300},
         np.array([0, 7, 255], "uint8"), "clip-uint8-saturating-bounds"),
    case("clip", [V7.astype("float16")], {"a_min": 0}, np.maximum(V7, 0).astype("float16"),
         "clip-f16-default-max"),
    # ---- where
    case("where", [X56 > 0, X56, -X56], {}, np.abs(X56), "where-same"),
    case("where", [np.array([[True], [False], [True]]), rand((1, 4)), np.float32(9)], {},
         np.array([rand((1, 4))[0], [9] * 4, rand((1, 4))[0]], "float32"), "where-broadcast"),
    case("where", [I57 > 0, I57, np.zeros((7,), "int32")], {}, np.maximum(I57, 0),
         "where-int"),
    case("where", [np.bool_(False), np.int32(1), np.int32(2)], {}, np.int32(2), "where-0d"),
    # ---- zeros, ones, full and *_like
    case("zeros", [], {"shape": (2, 3)}, np.zeros((2, 3), "float32"), "zeros"),
    case("zeros", [], {"shape": (), "dtype": "int32"}, np.int32(0), "zeros-0d"),
    case("ones", [], {"shape": [7], "dtype": "int64"}, np.ones(7, "int64"), "ones"),
    case("ones", [], {"shape": (0, 5), "dtype": "bool"}, np.ones((0, 5), bool), "ones-empty"),
    case("full", [np.float32(3.5)], {"shape": (2, 3), "dtype": None},
         np.full((2, 3), 3.5, "float32"), "full-fill-dtype"),
    case("full", [np.float32(3.5)], {"shape": (3,), "dtype": "int32"},
         np.array([3, 3, 3], "int32"), "full-cast"),
    case("full", [np.int64(-2)], {"shape": ()}, np.int64(-2), "full-0d"),
    case("zeros_like", [I57], {}, np.zeros((5, 7), "int32"), "zeros_like"),
    case("ones_like", [X56], {}, np.ones((5, 6), "float32"), "ones_like"),
    case("ones_like", [S], {}, np.float32(1), "ones_like-0d"),
    case("full_like", [X56, np.float32(-4)], {}, np.full((5, 6), -4, "float32"), "full_like"),
    case("full_like", [I57, np.float32(2.7)], {}, np.full((5, 7), 2, "int32"),
         "full_like-cast"),
    # ---- broadcast_to, tile, repeat, reverse
    case("broadcast_to", [rand((3, 1))], {"shape": (2, 3, 4)},
         np.array([[np.repeat(r, 4) for r in rand((3, 1))]] * 2), "broadcast_to"),
    case("broadcast_to", [S], {"shape": (2, 2)}, np.full((2, 2), S), "broadcast_to-0d"),
    case("broadcast_to", [np.arange(4, dtype="int32")], {"shape": (3, 4)},
         np.array([[0, 1, 2, 3]] * 3, "int32"), "broadcast_to-int"),
    case("tile", [X56[:2, :3]], {"reps": (2,)}, np.hstack([X56[:2, :3]] * 2), "tile-short-reps"),
    case("tile", [X56[:2, :3]], {"reps": (2, 1, 3)},
         np.array([np.hstack([X56[:2, :3]] * 3)] * 2), "tile-long-reps"),
    case("tile", [np.arange(3, dtype="int32")], {"reps": (2, 2)},
         np.array([[0, 1, 2, 0, 1, 2]] * 2, "int32"), "tile-1d"),
    case("tile", [S], {"reps": (3,)}, np.full(3, S), "tile-0d"),
    case("tile", [X56], {"reps": (0, 1)}, np.zeros((0, 6), "float32"), "tile-zero"),
    case("repeat", [X56[:2, :3]], {"repeats": 2, "axis": 0},
         X56[[0, 0, 1, 1], :3], "repeat-0"),
    case("repeat", [I57], {"repeats": 3, "axis": -1}, I57[:, np.arange(21) // 3],
         "repeat-neg"),
    case("repeat", [V7], {"repeats": 1, "axis": 0}, V7, "repeat-1d"),
    case("reverse", [X56], {"axis": 0}, X56[::-1], "reverse-0"),
    case("reverse", [I57], {"axis": -1}, I57[:, ::-1], "reverse-neg"),
    case("reverse", [V7], {"axis": 0}, V7[::-1], "reverse-1d"),
]


@pytest.mark.parametrize("op, inputs, attrs, expected", CASES)
def test_transform_op(op, inputs, attrs, expected):
    if isinstance(expected, tuple):
        expected = tuple(np.asarray(e) for e in expected)
    check_op(op, inputs, expected, attrs)


# ---------------------------------------------------------------- bad input

BAD = [
    ("reshape", [X56], {"newshape": (4, 7)}, ["cannot reshape shape (5, 6)", "(4, 7)",
                                             "30 elements", "28 elements"]),
    ("reshape", [X56], {"newshape": (7, -1)}, ["(5, 6)", "(7, -1)", "not a whole number"]),
    ("reshape", [X56], {"newshape": (-1, -1)}, ["more than one -1"]),
    ("transpose", [X234], {"axes": (0, 1)}, ["axes (0, 1)", "all 3 axes"]),
    ("transpose", [X234], {"axes": (0, 1, 1)}, ["repeats an axis"]),
    ("squeeze", [X56], {"axis": (0,)}, ["Tensor[(5, 6), float32]", "size is 5"]),
    ("expand_dims", [X56], {"axis": 3}, ["axis 3", "rank-2", "-3 <= axis <= 2"]),
    ("concatenate", [(X56, rand((4, 6)))], {"axis": 1},
     ["data.1 is Tensor[(4, 6), float32]", "data.0 is Tensor[(5, 6), float32]",
      "dimension 0 differs"]),
    ("concatenate", [(X56, I57)], {"axis": 0}, ["Tensor[(5, 7), int32]", "dtypes differ"]),
    ("concatenate", [(S, S)], {"axis": 0}, ["0-d"]),
    ("stack", [(X56, rand((5, 5)))], {"axis": 0},
     ["data.1 is Tensor[(5, 5), float32]", "data.0 is Tensor[(5, 6), float32]"]),
    ("split", [rand((5, 4))], {"indices_or_sections": 2},
     ["cannot split axis 0 of data Tensor[(5, 4), float32] into 2"]),
    ("split", [V7], {"indices_or_sections": (2, 9)}, ["(2, 9)", "size 7"]),
    ("strided_slice", [X56], {"begin": (0, 0, 0), "end": (1, 1, 1)},
     ["begin (0, 0, 0) has 3 entries", "rank 2"]),
    ("strided_slice", [X56], {"begin": (0,), "end": (1,), "axes": (2,)},
     ["axes 2 is out of range", "rank 2"]),
    ("take", [X56, np.array([0.0], "float32")], {"axis": 0},
     ["indices must have an integer dtype", "Tensor[(1), float32]"]),
    ("take", [X56, np.array([0], "int32")], {"axis": 2}, ["axis 2", "rank 2"]),
    ("cast", [(X56, X56)], {"dtype": "int32"}, ["data must be a tensor"]),
    ("clip", [np.array([True])], {"a_min": 0, "a_max": 1},
     ["numeric", "Tensor[(1), bool]"]),
    ("where", [X56, X56, X56], {}, ["condition must be a bool tensor",
                                    "Tensor[(5, 6), float32]"]),
    ("where", [X56 > 0, X56, I57], {}, ["x is Tensor[(5, 6), float32]",
                                        "y is Tensor[(5, 7), int32]"]),
    ("where", [X56 > 0, X56, rand((4, 6))], {}, ["do not broadcast",
                                                 "y is Tensor[(4, 6), float32]"]),
    ("full", [np.zeros(2, "float32")], {"shape": (2,)},
     ["fill_value must be a scalar", "Tensor[(2), float32]"]),
    ("zeros_like", [(X56,)], {}, ["data must be a tensor"]),
    ("ones_like", [(X56,)], {}, ["data must be a tensor"]),
    ("full_like", [X56, np.ones((1,), "float32")], {},
     ["fill_value must be a scalar", "Tensor[(1), float32]"]),
    ("broadcast_to", [rand((3,))], {"shape": (4, 2)},
     ["cannot broadcast data Tensor[(3), float32] to shape (4, 2)"]),
    ("broadcast_to", [rand((2, 3))], {"shape": (3,)}, ["Tensor[(2, 3), float32]", "(3,)"]),
    ("tile", [(X56,)], {"reps": (2,)}, ["data must be a tensor"]),
    ("repeat", [X56], {"repeats": 2, "axis": 2}, ["axis 2 is out of range", "rank 2"]),
    ("reverse", [X56], {"axis": -3}, ["axis -3 is out of range", "rank 2"]),
]


@pytest.mark.parametrize("op, inputs, attrs, fragments", BAD,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_transform_bad_input(op, inputs, attrs, fragments):
    with pytest.raises(TypeInferenceError) as info:
        infer_op_type(op, inputs, attrs)
    message = str(info.value)
    assert message.startswith(f"{op}: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


BAD_ATTRS = [
    ("reshape", {"newshape": (2, -5)}, "unsupported value -5"),
    ("expand_dims", {"axis": 0, "num_newaxis": -1}, "num_newaxis"),
    ("split", {"indices_or_sections": 0}, "sections must be >= 1"),
    ("split", {"indices_or_sections": (3, 1)}, "ascending"),
    ("strided_slice", {"begin": (0,), "end": (1,), "slice_mode": "stride"}, "slice_mode"),
    ("strided_slice", {"begin": (0,), "end": (1, 2)}, "same length"),
    ("strided_slice", {"begin": (0,), "end": (1,), "strides": (0,)}, "nonzero"),
    ("take", {"mode": "nearest"}, "mode"),
    ("cast", {"dtype": "float8"}, "unsupported dtype 'float8'"),
    ("clip", {"a_min": "low"}, "a_min must be a number"),
    ("zeros", {"shape": (2, -1)}, "negative dimension"),
    ("ones", {"shape": 2.5}, "shape must be an int"),
    ("full", {"shape": (2,), "dtype": "complex64"}, "unsupported dtype"),
    ("tile", {"reps": (-1,)}, "reps"),
    ("repeat", {"repeats": 0, "axis": 0}, "repeats must be >= 1"),
    ("reverse", {"axis": 1.0}, "axis must be an int"),
    ("transpose", {"axes": "ab"}, "axes must be an int or a sequence"),
]


@pytest.mark.parametrize("op, attrs, fragment", BAD_ATTRS,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD_ATTRS)])
def test_transform_bad_attrs(op, attrs, fragment):
    n = get_op(op).num_inputs
    with pytest.raises(OpError) as info:
        relayir.op.call(op, [relayir.var(f"a{i}", shape=(2,)) for i in range(n)], **attrs)
    assert str(info.value).startswith(f"{op}: ") and fragment in str(info.value), info.value


def test_take_fast_out_of_range_fails_at_run_time():
    with pytest.raises(relayir.InterpreterError, match="take"):
        check_op("take", [X56, np.array([5], "int32")], X56[:1], {"axis": 0, "mode": "fast"})


# ---------------------------------------------------------------- dynamic and symbolic dims

n, m = SymbolicDim("n"), SymbolicDim("m")
A = Any()


def _infer(build, *types):
    params = [relayir.var(f"p{i}", t) for i, t in enumerate(types)]
    body = build(*params)
    infer_expr(Function(params, body))
    return body.checked_type


DYNAMIC = [
    ("reshape-any-copy", lambda x: relayir.reshape(x, (0, -1)), [(A, 3, 4)], (A, 12)),
    ("reshape-any-flatten", lambda x: relayir.reshape(x, (-1,)), [(A, 3)], (A,)),
    ("reshape-any-infer", lambda x: relayir.reshape(x, (-1, 4)), [(A, 3, 4)], (A, 4)),
    ("reshape-any-keep-rest", lambda x: relayir.reshape(x, (3, -2)), [(3, A, 4)], (3, A, 4)),
    ("reshape-sym-copy", lambda x: relayir.reshape(x, (0, 12)), [(n, 3, 4)], (n, 12)),
    ("reshape-sym-infer", lambda x: relayir.reshape(x, (-1, 12)), [(n, 3, 4)], (n, 12)),
    ("reshape-sym-infer-mid", lambda x: relayir.reshape(x, (4, -1, 3)), [(n, 3, 4)],
     (4, n, 3)),
    ("reshape-sym-merge", lambda x: relayir.reshape(x, (-3, 4)), [(n, 3, 4)], (3 * n, 4)),
    ("reshape-sym-merge-1", lambda x: relayir.reshape(x, (-3, 4)), [(n, 1, 4)], (n, 4)),
    ("reshape-sym-floordiv", lambda x: relayir.reshape(x, (-1, 2)), [(n, 3)],
     (floordiv(3 * n, 2), 2)),
    ("reshape-sym-unknowable", lambda x: relayir.reshape(x, (-1, 2)), [(n, A)], (A, 2)),
    ("reshape-sym-split", lambda x: relayir.reshape(x, (-4, 2, -1, 0)), [(n, 5)],
     (2, floordiv(n, 2), 5)),
    ("transpose-sym", lambda x: relayir.transpose(x), [(n, A, 3)], (3, A, n)),
    ("transpose-axes-sym", lambda x: relayir.transpose(x, (1, 0, 2)), [(n, m, 3)],
     (m, n, 3)),
    ("concat-sym-other-axis", lambda a, b: relayir.concatenate([a, b], 1), [(n, 3), (n, 5)],
     (n, 8)),
    ("concat-sym-axis", lambda a, b: relayir.concatenate([a, b], 0), [(n, 3), (2, 3)],
     (n + 2, 3)),
    ("concat-any-refined", lambda a, b: relayir.concatenate([a, b], 1), [(A, 3), (2, 3)],
     (2, 6)),
    ("slice-any", lambda x: relayir.strided_slice(x, (0, 1), (2, 5)), [(A, 6)], (A, 4)),
    ("slice-axes-sym", lambda x: relayir.strided_slice(x, (1,), (3,), axes=(1,)), [(n, 6)],
     (n, 2)),
    ("sum-sym", lambda x: relayir.sum(x, axis=1), [(n, A, 4)], (n, 4)),
    ("sum-sym-keepdims", lambda x: relayir.sum(x, axis=1, keepdims=True), [(n, A, 4)],
     (n, 1, 4)),
    ("sum-sym-exclude", lambda x: relayir.sum(x, axis=0, exclude=True), [(n, A, 4)], (n,)),
    ("split-any", lambda x: relayir.split(x, 2, axis=0), [(A, 4)], None),
    ("stack-sym", lambda a, b: relayir.stack([a, b], -1), [(n, 3), (n, 3)], (n, 3, 2)),
    ("take-sym", lambda d, i: relayir.take(d, i, axis=0), [(n, 4), (m,)], (m, 4)),
    ("tile-sym", lambda x: relayir.tile(x, (1, 2)), [(n, A)], (n, A)),
    ("expand-sym", lambda x: relayir.expand_dims(x, 1), [(n,)], (n, 1)),
    ("squeeze-sym", lambda x: relayir.squeeze(x, [1]), [(n, A)], (n,)),
]


@pytest.mark.parametrize("name, build, shapes, expected", DYNAMIC,
                         ids=[d[0] for d in DYNAMIC])
def test_dynamic_shapes(name, build, shapes, expected):
    dtypes = ["int32" if name.startswith("take") and i else "float32"
              for i in range(len(shapes))]
    ty = _infer(build, *[TensorType(s, d) for s, d in zip(shapes, dtypes)])
    if expected is None:  # split: two fields of (?, 4)
        assert ty == TupleType((TensorType((A, 4)), TensorType((A, 4))))
    else:
        assert ty == TensorType(expected, ty.dtype), ty


def test_dynamic_reshape_and_sum_run():
    x = relayir.var("x", TensorType((A, 3, 4)))
    body = relayir.sum(relayir.reshape(x, (0, -1)), axis=-1, keepdims=True)
    mod = infer_module(IRModule.from_expr(Function([x], body)))
    interp = Interpreter(mod)
    data = rand((5, 3, 4))
    out = interp.call_closure(interp.global_closure(mod.get_global_var("main")), [data])
    np.testing.assert_allclose(out, data.reshape(5, 12).sum(-1, keepdims=True), rtol=1e-5)
    assert mod["main"].body.checked_type == TensorType((A, 1))


def test_dynamic_reshape_with_incompatible_runtime_shape_fails_naming_the_op():
    x = relayir.var("x", TensorType((A, 3)))
    mod = infer_module(IRModule.from_expr(Function([x], relayir.reshape(x, (4, -1)))))
    interp = Interpreter(mod)
    with pytest.raises(relayir.InterpreterError, match=r"reshape .*\(5, 3\).*\(4, -1\)"):
        interp.call_closure(interp.global_closure(mod.get_global_var("main")), [rand((5, 3))])


def test_squeeze_needs_axis_for_dynamic_input():
    with pytest.raises(TypeInferenceError, match="explicit axis"):
        _infer(lambda x: relayir.squeeze(x), TensorType((A, 1)))


def test_concat_dynamic_mismatch_is_still_caught():
    with pytest.raises(TypeInferenceError, match="dimension 1 differs"):
        _infer(lambda a, b: relayir.concatenate([a, b], 0),
               TensorType((A, 3)), TensorType((2, 4)))


# ---------------------------------------------------------------- constructors and registry

PATTERNS = {
    "reshape": OpPattern.INJECTIVE, "transpose": OpPattern.INJECTIVE,
    "squeeze": OpPattern.INJECTIVE, "expand_dims": OpPattern.BROADCAST,
    "concatenate": OpPattern.INJECTIVE, "stack": OpPattern.INJECTIVE,
    "split": OpPattern.INJECTIVE, "strided_slice": OpPattern.INJECTIVE,
    "take": OpPattern.INJECTIVE, "where": OpPattern.BROADCAST,
    "broadcast_to": OpPattern.BROADCAST, "tile": OpPattern.INJECTIVE,
    "repeat": OpPattern.INJECTIVE, "reverse": OpPattern.INJECTIVE,
    "cast": OpPattern.ELEMWISE, "clip": OpPattern.ELEMWISE, "zeros": OpPattern.ELEMWISE,
    "ones": OpPattern.ELEMWISE, "full": OpPattern.ELEMWISE, "zeros_like": OpPattern.ELEMWISE,
    "ones_like": OpPattern.ELEMWISE, "full_like": OpPattern.ELEMWISE,
}


@pytest.mark.parametrize("op", sorted(PATTERNS))
def test_registered_with_pattern(op):
    assert get_op(op).pattern == PATTERNS[op]
    assert callable(getattr(relayir, op))


x = relayir.var("x", shape=(4, 6))
CONSTRUCTED = [
    (lambda: relayir.reshape(x, [3, -1]), TensorType((3, 8))),
    (lambda: relayir.transpose(x), TensorType((6, 4))),
    (lambda: relayir.squeeze(relayir.expand_dims(x, 0)), TensorType((4, 6))),
    (lambda: relayir.concatenate([x, x], axis=1), TensorType((4, 12))),
    (lambda: relayir.concatenate(Tuple([x, x]), axis=0), TensorType((8, 6))),
    (lambda: relayir.stack((x, x, x), axis=1), TensorType((4, 3, 6))),
    (lambda: relayir.split(x, 2, axis=1),
     TupleType([TensorType((4, 3)), TensorType((4, 3))])),
    (lambda: relayir.concatenate(relayir.split(x, [1, 3]), 0), TensorType((4, 6))),
    (lambda: relayir.strided_slice(x, [0, 1], [4, 6], [2, 2]), TensorType((2, 3))),
    (lambda: relayir.take(x, relayir.const([1, 2]), axis=1), TensorType((4, 2))),
    (lambda: relayir.cast(x, "int8"), TensorType((4, 6), "int8")),
    (lambda: relayir.clip(x, 0, 6), TensorType((4, 6))),
    (lambda: relayir.where(relayir.const(True), x, relayir.const(0.0)), TensorType((4, 6))),
    (lambda: relayir.zeros((2, 2), "int32"), TensorType((2, 2), "int32")),
    (lambda: relayir.ones([3]), TensorType((3,))),
    (lambda: relayir.full(7, (2,), "int64"), TensorType((2,), "int64")),
    (lambda: relayir.full(0.5, (2, 1)), TensorType((2, 1))),
    (lambda: relayir.zeros_like(x), TensorType((4, 6))),
    (lambda: relayir.ones_like(x), TensorType((4, 6))),
    (lambda: relayir.full_like(x, relayir.const(1.0)), TensorType((4, 6))),
    (lambda: relayir.broadcast_to(x, (2, 4, 6)), TensorType((2, 4, 6))),
    (lambda: relayir.tile(x, (2, 1)), TensorType((8, 6))),
    (lambda: relayir.repeat(x, 2, axis=1), TensorType((4, 12))),
    (lambda: relayir.reverse(x, 1), TensorType((4, 6))),
]


@pytest.mark.parametrize("build, expected", CONSTRUCTED, ids=range(len(CONSTRUCTED)))
def test_constructors(build, expected):
    expr = build()
    assert isinstance(expr, Call)
    hash(expr.attrs)  # attrs must be hashable (structural hashing uses them)
    infer_expr(Function([x], expr))
    assert expr.checked_type == expected


def test_constructor_rejects_empty_list():
    with pytest.raises(OpError, match="non-empty"):
        relayir.concatenate([], 0)


def test_attrs_normalise_to_tuples():
    call = relayir.strided_slice(x, np.array([0, 1]), [4, 6], strides=[np.int64(1)])
    assert call.attrs.begin == (0, 1) and call.attrs.strides == (1,)
    assert all(type(v) is int for v in call.attrs.begin)
    assert relayir.split(x, [1, 2]).attrs.indices_or_sections == (1, 2)
    assert relayir.transpose(x, [1, 0]).attrs == relayir.transpose(x, (1, 0)).attrs
    assert relayir.full(1, (2,)).attrs.dtype is None


@pytest.mark.parametrize("like_shape, attrs, want", [
    ((4, 6), {}, (4, 6)),
    ((1, 6, 5), {"lhs_begin": 1, "lhs_end": 3, "rhs_begin": 1, "rhs_end": 2}, (1, 6, 4)),
    ((7, 6), {"lhs_begin": -3, "lhs_end": -1, "rhs_begin": -1}, (1, 6, 4)),
])
def test_reshape_like_takes_the_other_tensors_axes(like_shape, attrs, want):
    x = rand((1, 2, 3, 4), "float32", 3)
    check_op("reshape_like", [x, rand(like_shape, "int8", 4)], x.reshape(want), attrs)


@pytest.mark.parametrize("like_shape, attrs, match", [
    ((5, 5), {}, "element counts differ"),
    ((4, 6), {"lhs_begin": 3, "lhs_end": 1}, r"data axes \[3, 1\) are not a range"),
    ((4, 6), {"rhs_end": 5}, r"shape_like axes \[0, 5\) are not a range"),
])
def test_reshape_like_refuses_bad_ranges_naming_the_op(like_shape, attrs, match):
    with pytest.raises(TypeInferenceError, match=match) as info:
        infer_op_type("reshape_like", [rand((1, 2, 3, 4)), rand(like_shape)], attrs)
    assert "reshape_like" in str(info.value)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_is_numpys_with_scalars_as_length_one(indexing):
    xs = (rand((3,), "float32", 1), rand((), "float32", 2), rand((2,), "float32", 3))
    check_op("meshgrid", [xs], tuple(np.meshgrid(*xs, indexing=indexing)),
             {"indexing": indexing})


def test_meshgrid_refuses_matrices_and_mixed_dtypes():
    for second in (rand((2, 2)), rand((2,), "int32")):
        with pytest.raises(TypeInferenceError, match="must be 0-D or 1-D") as info:
            infer_op_type("meshgrid", [(rand((3,)), second)])
        assert "meshgrid" in str(info.value)
    with pytest.raises(OpError, match="indexing must be 'ij' or 'xy'"):
        relayir.op.transform.meshgrid([relayir.var("x", shape=(2,))], indexing="ji")


@pytest.mark.parametrize("indices, shape", [([0, 1, 2, 3], [2, 2]), ([144], [5, 5, 5, 2]),
                                            (144, [5, 5, 5, 2]), ([100, 13, 5], [5, 5, 5, 2])])
def test_unravel_index_is_numpys(indices, shape):
    i, s = np.array(indices, "int32"), np.array(shape, "int32")
    check_op("unravel_index", [i, s], np.stack(np.unravel_index(i, s)).astype("int32"))


def test_unravel_index_wraps_past_the_end_and_refuses_bad_values():
    check_op("unravel_index", [np.array([5, 4]), np.array([2, 2])],
             np.array([[0, 0], [1, 0]]))
    with pytest.raises(relayir.Error, match="extents >= 1 and indices must be >= 0"):
        check_op("unravel_index", [np.array([-1]), np.array([2, 2])], None)
    with pytest.raises(TypeInferenceError, match="dtype of indices"):
        infer_op_type("unravel_index", [np.array([1]), np.array([2, 2], "int32")])
