"""Every op with a compute: the generated C kernel equals the numpy reference.

One record per (op, inputs, attrs); each becomes ``fn (%a0, ...) { op(%a0, ...) }``,
lowered to one kernel. All kernels go in one translation unit, compiled once per test
run (in two halves, in parallel). Float32 is checked at rtol/atol 1e-5, except where a
record says otherwise: products (dense, matmul, batch_matmul, conv) accumulate in float32
like BLAS (1e-4), float16 is computed in float32 and rounded once (1e-3).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import shutil

import numpy as np
import pytest

from relayir.ir.op import get_op, make_attrs
from relayir.testing.op_check import make_call_module, rand
from relayir.tir.lower import lower_primitive
from relayir.typing.infer import infer_module

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="needs a C compiler")


@dataclasses.dataclass
class Case:
    op: str
    inputs: list
    attrs: dict = dataclasses.field(default_factory=dict)
    rtol: float = 1e-5
    atol: float = 1e-5
    note: str = ""

    @property
    def id(self) -> str:
        shapes = ",".join("x".join(map(str, np.shape(x))) if not isinstance(x, tuple) else "tup"
                          for x in self.inputs)
        if not self.inputs:
            dt = self.attrs.get("dtype")
        else:
            first = self.inputs[0]
            dt = (first[0] if isinstance(first, tuple) else np.asarray(first)).dtype
        return f"{self.op}-{shapes}-{dt}{'-' + self.note if self.note else ''}"


def _pos(shape, dtype="float32", seed=0):
    return (np.abs(rand(shape, dtype, seed)) + 0.1).astype(dtype)


def _unit(shape, dtype="float32", seed=0):
    """Inside (-1, 1): the domain of asin, acos, atanh."""
    return (rand(shape, dtype, seed) * 0.45).astype(dtype)


def _above_one(shape, dtype="float32", seed=0):
    """Above 1: the domain of acosh."""
    return (np.abs(rand(shape, dtype, seed)) + 1.1).astype(dtype)


def _nonzero(shape, dtype, seed):
    x = rand(shape, dtype, seed)
    return np.where(x == 0, 3, x).astype(dtype)


SHAPE_PAIRS = [((5,), (5,)), ((33, 17), (33, 17)), ((7, 9), (1, 9)), ((4, 1, 3), (2, 1)),
               ((), ())]


def _binary_cases():
    arith = ["add", "subtract", "multiply", "divide", "floor_divide", "mod", "floor_mod",
             "power", "maximum", "minimum"]
    for name in arith:
        for sa, sb in SHAPE_PAIRS:
            for dtype in ("float32", "int32"):
                a = rand(sa, dtype, 1)
                b = rand(sb, dtype, 2, low=0.5) if dtype == "float32" else _nonzero(sb, dtype, 2)
                if name == "power":
                    a = np.clip(a, -3, 3).astype(dtype) if dtype == "int32" else np.abs(a) + .1
                    b = np.clip(b, 0, 3).astype(dtype)
                yield Case(name, [a.astype(dtype), b.astype(dtype)])
    a = np.array([7, -7, 7, -7, 5, 0, -9, 9], "int32")
    b = np.array([2, 2, -2, -2, 0, 0, 4, -4], "int32")
    for name in ("divide", "mod", "floor_divide", "floor_mod"):
        yield Case(name, [a, b], note="signs-and-zero")
    yield Case("add", [np.zeros((0, 3), "float32"), np.zeros((3,), "float32")], note="empty")
    for dtype in ("int8", "uint8", "int64", "float64", "float16"):
        tol = 1e-3 if dtype == "float16" else 1e-5
        yield Case("add", [rand((37,), dtype, 3), rand((37,), dtype, 4)], rtol=tol, atol=tol)
        yield Case("multiply", [rand((6, 5), dtype, 5), rand((5,), dtype, 6)], rtol=tol,
                   atol=tol)
    yield Case("subtract", [rand((19,), "uint8", 1), rand((19,), "uint8", 2)])
    yield Case("divide", [rand((19,), "uint8", 1), _nonzero((19,), "uint8", 2)])
    for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        for dtype in ("float32", "int32"):
            a = rand((6, 7), dtype, 1)
            b = np.where(rand((7,), "float32", 3) > 0, a[0], rand((7,), dtype, 2)).astype(dtype)
            yield Case(name, [a, b])
    for name in ("logical_and", "logical_or", "logical_xor"):
        yield Case(name, [rand((5, 9), "bool", 1), rand((9,), "bool", 2)])


def _unary_cases():
    floats = {"exp": None, "log": _pos, "log2": _pos, "log10": _pos, "sqrt": _pos,
              "rsqrt": _pos, "tanh": None, "sigmoid": None, "erf": None, "floor": None,
              "ceil": None, "round": None, "trunc": None, "sin": None, "cos": None,
              "tan": None, "sinh": None, "cosh": None, "asin": _unit, "acos": _unit,
              "atan": None, "asinh": None, "acosh": _above_one, "atanh": _unit}
    for name, gen in floats.items():
        for shape in ((17,), (3, 33)):
            x = gen(shape) if gen else rand(shape, "float32", 7)
            yield Case(name, [x])
        yield Case(name, [gen((9,), "float64") if gen else rand((9,), "float64", 8)])
    yield Case("round", [np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, -2.6], "float32")],
               note="half-even")
    yield Case("exp", [rand((21,), "float16", 1)], rtol=1e-3, atol=1e-3)
    wide = np.concatenate([np.linspace(-110, 100, 2001), np.linspace(-1e-3, 1e-3, 101),
                           [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30]]).astype("float32")
    for name in ("exp", "tanh", "erf", "sigmoid"):  # the vectorised float32 versions
        yield Case(name, [wide], rtol=2e-6, atol=0, note="wide")
    for name in ("abs", "negative", "sign", "copy"):
        for dtype in ("float32", "int32", "int8", "uint8"):
            yield Case(name, [rand((4, 9), dtype, 9)])
    yield Case("logical_not", [rand((13,), "bool", 1)])
    special = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3.0], "float32")
    for name in ("isnan", "isinf", "isfinite"):
        yield Case(name, [special])
    yield Case("nn.relu", [rand((5, 13), "float32", 1)])
    yield Case("nn.relu", [rand((5, 13), "int32", 1)])
    yield Case("nn.leaky_relu", [rand((5, 13), "float32", 1)], {"alpha": 0.2})
    yield Case("nn.prelu", [rand((2, 3, 5), "float32", 1), rand((3,), "float32", 2)])
    yield Case("nn.prelu", [rand((2, 5, 3), "float32", 1), rand((3,), "float32", 2)],
               {"axis": -1})
    yield Case("nn.bias_add", [rand((2, 3, 5), "float32", 1), rand((3,), "float32", 2)])
    yield Case("nn.bias_add", [rand((4, 7), "float32", 1), rand((7,), "float32", 2)],
               {"axis": -1})
    yield Case("cast", [rand((3, 7), "float32", 1)], {"dtype": "int32"})
    yield Case("cast", [rand((3, 7), "float32", 1)], {"dtype": "bool"})
    yield Case("cast", [rand((3, 7), "float32", 1)], {"dtype": "float16"}, rtol=1e-3)
    yield Case("cast", [rand((3, 7), "int32", 1)], {"dtype": "float64"})
    yield Case("cast", [rand((3, 7), "bool", 1)], {"dtype": "float32"})
    yield Case("cast", [rand((9,), "int32", 1) * 30], {"dtype": "int8"}, note="wrap")
    yield Case("clip", [rand((5, 6), "float32", 1)], {"a_min": -0.5, "a_max": 1.0})
    yield Case("clip", [rand((5, 6), "int32", 1)], {"a_min": -2.5, "a_max": 3.7})
    yield Case("where", [rand((4, 5), "bool", 1), rand((4, 5), "float32", 2),
                         rand((5,), "float32", 3)])
    yield Case("where", [rand((5,), "bool", 1), rand((3, 1), "int32", 2),
                         rand((3, 5), "int32", 3)])
    yield Case("zeros", [], {"shape": (3, 5), "dtype": "float32"})
    yield Case("ones", [], {"shape": (7,), "dtype": "int32"})
    yield Case("full", [np.array(2.5, "float32")], {"shape": (2, 3)})
    yield Case("full", [np.array(4, "int32")], {"shape": (5,), "dtype": "float32"})
    yield Case("zeros_like", [rand((3, 4), "float32", 1)])
    yield Case("ones_like", [rand((3, 4), "int8", 1)])
    yield Case("full_like", [rand((3, 4), "float32", 1), np.array(-1.25, "float32")])


def _reduce_cases():
    x = rand((3, 4, 5), "float32", 1)
    xi = rand((3, 4, 5), "int32", 2)
    axes = [{}, {"axis": (1,)}, {"axis": (0, 2)}, {"axis": (-1,), "keepdims": True},
            {"axis": (1,), "exclude": True}, {"axis": (0,)}]
    for name in ("sum", "prod", "mean", "max", "min"):
        for a in axes:
            yield Case(name, [x], a)
        yield Case(name, [xi], {"axis": (1,)})
        yield Case(name, [xi], {"axis": (0, 1)})
    yield Case("sum", [rand((1000, 3), "float32", 3)], {"axis": (0,)}, note="long")
    yield Case("sum", [rand((7, 1001), "float32", 3)], {"axis": (1,)}, note="long")
    yield Case("sum", [rand((50, 300), "float32", 3)], {}, note="all")
    yield Case("sum", [np.zeros((4, 0), "float32")], {"axis": (1,)}, note="empty")
    yield Case("max", [np.zeros((0, 3), "float32")], {"axis": (0,)}, note="empty")
    yield Case("mean", [np.zeros((2, 0, 3), "float32")], {"axis": (1,)}, note="empty")
    yield Case("mean", [rand((5, 7), "int8", 3)], {"axis": (1,)})
    yield Case("max", [rand((6, 70), "uint8", 3)], {"axis": (1,)})
    b = rand((4, 6, 5), "bool", 1)
    for name in ("all", "any"):
        yield Case(name, [b], {"axis": (1,)})
        yield Case(name, [b], {})
    for name in ("argmax", "argmin"):
        xs = np.round(rand((4, 6, 5), "float32", 4) * 2) / 2  # ties
        yield Case(name, [xs], {"axis": (1,)})
        yield Case(name, [xs], {"axis": (1,), "select_last_index": True})
        yield Case(name, [xs], {"axis": (0, 2), "keepdims": True})
        yield Case(name, [xs], {})
        yield Case(name, [xi], {"axis": (2,)})
    for name in ("variance", "std"):
        yield Case(name, [x], {"axis": (1,)})
        yield Case(name, [x], {"axis": (0, 2), "keepdims": True, "unbiased": True})
    yield Case("logsumexp", [x], {"axis": (1,)})
    yield Case("logsumexp", [x * 30], {})


def _transform_cases():
    x = rand((2, 3, 4), "float32", 1)
    yield Case("reshape", [x], {"newshape": (6, 4)})
    yield Case("reshape", [x], {"newshape": (4, -1)})
    yield Case("reshape", [x], {"newshape": (0, -3)})
    yield Case("reshape_like", [x, rand((4, 3, 2), "int8")])
    yield Case("unravel_index", [np.array([0, 7, 23, 11], "int64"), np.array([2, 3, 4], "int64")])
    yield Case("unravel_index", [np.array(5, "int32"), np.array([4, 2], "int32")], note="0d")
    grid = (rand((3,), "float32", 2), rand((), "float32", 3), rand((4,), "float32", 4))
    yield Case("meshgrid", [grid], {"indexing": "ij"})
    yield Case("meshgrid", [grid], {"indexing": "xy"}, note="xy")
    yield Case("reshape_like", [x, rand((5, 12, 2), "float32")],
               {"lhs_begin": 1, "rhs_begin": 1, "rhs_end": -1}, note="axes")
    yield Case("reshape", [rand((5, 7), "int32", 1)], {"newshape": (-4, 5, 1, -2)})
    yield Case("transpose", [x], {})
    yield Case("transpose", [x], {"axes": (1, 0, 2)})
    yield Case("transpose", [rand((3, 17), "float32", 2)], {"axes": (1, 0)})
    yield Case("squeeze", [rand((1, 3, 1, 4), "float32", 1)], {})
    yield Case("squeeze", [rand((1, 3, 1, 4), "float32", 1)], {"axis": (2,)})
    yield Case("expand_dims", [x], {"axis": 1, "num_newaxis": 2})
    yield Case("expand_dims", [x], {"axis": -1})
    parts = (rand((2, 3), "float32", 1), rand((2, 5), "float32", 2), rand((2, 1), "float32", 3))
    yield Case("concatenate", [parts], {"axis": 1})
    yield Case("concatenate", [(rand((2, 3), "int32", 1), rand((4, 3), "int32", 2))],
               {"axis": 0})
    yield Case("stack", [(rand((2, 3), "float32", 1), rand((2, 3), "float32", 2))],
               {"axis": 1})
    yield Case("stack", [(rand((5,), "float32", 1),) * 3], {"axis": 0})
    yield Case("split", [rand((6, 4), "float32", 1)], {"indices_or_sections": 3})
    yield Case("split", [rand((3, 7), "float32", 1)],
               {"indices_or_sections": (2, 5), "axis": 1})
    y = rand((5, 6, 7), "float32", 1)
    yield Case("strided_slice", [y], {"begin": (1, 0), "end": (4, 6), "strides": (2, 3)})
    yield Case("strided_slice", [y], {"begin": (-1,), "end": (-6,), "strides": (-2,),
                                      "axes": (2,)})
    yield Case("strided_slice", [y], {"begin": (1, 2), "end": (2, -1), "slice_mode": "size"})
    data = rand((5, 4), "float32", 1)
    idx = np.array([[0, 4, -1], [2, 7, 1]], "int32")
    yield Case("take", [data, idx], {"axis": 0})
    yield Case("take", [data, idx], {"axis": 1, "mode": "wrap"})
    yield Case("take", [data, idx], {})
    yield Case("take", [rand((3, 4, 5), "float32", 1),
                        np.array([[0, 3], [1, 1], [2, 0]], "int64")],
               {"axis": 1, "batch_dims": 1})
    yield Case("take", [data, np.array([3, 0, 1], "int32")], {"axis": 0, "mode": "fast"})
    yield Case("broadcast_to", [rand((3, 1), "float32", 1)], {"shape": (2, 3, 5)})
    yield Case("tile", [rand((2, 3), "float32", 1)], {"reps": (2, 1, 3)})
    yield Case("repeat", [rand((2, 3), "float32", 1)], {"repeats": 3, "axis": 1})
    yield Case("reverse", [x], {"axis": 1})
    yield Case("reverse", [x], {"axis": -1})
    z = rand((2, 16, 3, 5), "float32", 1)
    yield Case("layout_transform", [z], {"src_layout": "NCHW", "dst_layout": "NHWC"})
    yield Case("layout_transform", [z], {"src_layout": "NCHW", "dst_layout": "NCHW8c"})
    yield Case("layout_transform", [rand((2, 2, 3, 5, 8), "float32", 1)],
               {"src_layout": "NCHW8c", "dst_layout": "NCHW4c"})
    yield Case("nn.batch_flatten", [z])
    yield Case("nn.pad", [x, np.array(0.5, "float32")], {"pad_width": ((1, 0), (0, 2), (1, 1))})
    yield Case("nn.pad", [x, np.array(0.0, "float32")],
               {"pad_width": ((0, 0), (1, 2), (2, 1)), "pad_mode": "edge"})
    yield Case("nn.pad", [x, np.array(0.0, "float32")],
               {"pad_width": ((1, 1), (2, 1), (3, 2)), "pad_mode": "reflect"})


def _nn_cases():
    prod = dict(rtol=1e-4, atol=1e-4)
    yield Case("nn.dense", [rand((5, 33), "float32", 1), rand((7, 33), "float32", 2)], **prod)
    yield Case("nn.dense", [rand((2, 3, 16), "float32", 1), rand((9, 16), "float32", 2)],
               **prod)
    yield Case("nn.dense", [rand((4, 6), "int8", 1), rand((3, 6), "int8", 2)],
               {"out_dtype": "int32"})
    # a weight already in the micro-kernel's panel layout NC[n]n (units = 48 = 3 blocks)
    yield Case("nn.contrib_dense_pack", [rand((13, 33), "float32", 1),
                                         rand((3, 33, 16), "float32", 2)],
               {"weight_layout": "NC16n"}, **prod)
    yield Case("nn.contrib_dense_pack", [rand((1, 40), "float32", 1),
                                         rand((2, 40, 32), "float32", 2)],
               {"weight_layout": "NC32n"}, **prod, note="one row")
    # uint8 x int8 packed for vpdpbusd (op/qnn/packed.py): 37 units in 3 blocks, K = 70
    yield Case("qnn.contrib_dense_packed", [rand((7, 70), "uint8", 1),
                                            rand((3, 18, 16, 4), "int8", 2)], {"units": 37})
    # the same product over the taps of a 3x2 window, 5 channels padded to 8 (K = 48)
    yield Case("qnn.contrib_conv2d_packed", [rand((2, 5, 9, 7), "uint8", 1),
                                             rand((1, 12, 16, 4), "int8", 2)],
               {"channels": 6, "kernel_size": (3, 2), "strides": (2, 1),
                "padding": (1, 0, 2, 1), "dilation": (1, 2), "pad_value": 3})
    yield Case("qnn.contrib_depthwise_conv2d", [rand((2, 20, 9, 7), "uint8", 1),
                                                rand((20, 1, 3, 3), "int8", 2)],
               {"channels": 20, "kernel_size": (3, 3), "strides": (2, 1),
                "padding": (1, 0, 2, 1), "dilation": (1, 2), "pad_value": 3})
    # both NHWC, requantized per channel as they store (op/qnn/packed_requant.py)
    requant = {"zero_point": 7, "clip_min": -7, "clip_max": 240}
    yield Case("qnn.contrib_conv2d_packed_requant",
               [rand((2, 9, 7, 5), "uint8", 1), rand((1, 12, 16, 4), "int8", 2),
                rand((6,), "int32", 3), rand((6,), "float32", 4)],
               {"channels": 6, "kernel_size": (3, 2), "strides": (2, 1),
                "padding": (1, 0, 2, 1), "dilation": (1, 2), "pad_value": 3, "layout": "NHWC",
                **requant})
    yield Case("qnn.contrib_depthwise_conv2d_requant",
               [rand((2, 9, 7, 20), "uint8", 1), rand((20, 1, 3, 3), "int8", 2),
                rand((20,), "int32", 3), rand((20,), "float32", 4)],
               {"channels": 20, "kernel_size": (3, 3), "strides": (2, 1),
                "padding": (1, 0, 2, 1), "dilation": (1, 2), "pad_value": 3, "layout": "NHWC",
                **requant})
    yield Case("nn.matmul", [rand((5, 13), "float32", 1), rand((13, 19), "float32", 2)],
               **prod)
    yield Case("nn.dense", [rand((37, 70), "float32", 1), rand((45, 70), "float32", 2)], **prod,
               note="tiled")
    yield Case("nn.matmul", [rand((9, 20), "float32", 1), rand((20, 33), "float32", 2)], **prod,
               note="tiled")
    yield Case("nn.batch_matmul", [rand((3, 37, 20), "float32", 1),
                                   rand((3, 45, 20), "float32", 2)], **prod, note="tiled")
    yield Case("nn.batch_matmul", [rand((3, 12, 20), "float32", 1),
                                   rand((1, 20, 33), "float32", 2)],
               {"transpose_b": False}, **prod, note="tiled")
    yield Case("nn.matmul", [rand((13, 5), "float32", 1), rand((19, 13), "float32", 2)],
               {"transpose_a": True, "transpose_b": True}, **prod)
    yield Case("nn.batch_matmul", [rand((2, 5, 7), "float32", 1), rand((2, 9, 7), "float32", 2)],
               **prod)
    yield Case("nn.batch_matmul", [rand((1, 7, 5), "float32", 1), rand((3, 7, 9), "float32", 2)],
               {"transpose_a": True, "transpose_b": False}, **prod)
    yield Case("nn.softmax", [rand((4, 37), "float32", 1)])
    yield Case("nn.softmax", [rand((3, 5, 4), "float32", 1)], {"axis": 1})
    yield Case("nn.log_softmax", [rand((4, 37), "float32", 1)])
    yield Case("nn.log_softmax", [rand((3, 5, 4), "float32", 1)], {"axis": 0})
    yield Case("nn.dropout", [rand((3, 4), "float32", 1)], {"rate": 0.3})
    x = rand((2, 3, 4, 5), "float32", 1)
    c = [rand((3,), "float32", k) for k in range(2, 6)]
    c[3] = np.abs(c[3]) + 0.5
    yield Case("nn.batch_norm", [x, *c])
    yield Case("nn.batch_norm", [np.moveaxis(x, 1, 3).copy(), *c], {"axis": 3, "scale": False})
    g, b = rand((5,), "float32", 7), rand((5,), "float32", 8)
    yield Case("nn.layer_norm", [x, g, b])
    yield Case("nn.layer_norm", [x, c[0], c[1]], {"axis": 1, "center": False})
    yield Case("nn.instance_norm", [x, c[0], c[1]])
    x6 = rand((2, 6, 3, 5), "float32", 9)
    g6, b6 = rand((6,), "float32", 1), rand((6,), "float32", 2)
    yield Case("nn.group_norm", [x6, g6, b6], {"num_groups": 3})
    yield Case("nn.group_norm", [x6, g6, b6], {"num_groups": 6})
    # recurrent sequences (one C routine call each): the packed weight's block 16 does
    # not divide the hidden size 20, so the last block is zero padded
    seq, batch, hidden = 5, 3, 20
    h0, c0 = rand((batch, hidden), "float32", 3), rand((batch, hidden), "float32", 4)
    for op, gates, extra in (("nn.lstm_sequence", 4, {"reverse": True}),
                             ("nn.gru_sequence", 3, {"linear_before_reset": False}),
                             ("nn.rnn_sequence", 1, {"activation": "relu"})):
        data = rand((seq, batch, gates * hidden), "float32", 5)
        w = np.zeros((2, hidden, gates, 16), "float32")
        w.reshape(2 * hidden * gates * 16)[:] = rand((2 * hidden * gates * 16,), "float32", 6)
        w[1, :, :, hidden - 16:] = 0
        w *= 0.3
        args = {"nn.lstm_sequence": [data, h0, c0, w],
                "nn.gru_sequence": [data, h0, w, rand((gates * hidden,), "float32", 7)],
                "nn.rnn_sequence": [data, h0, w]}[op]
        yield Case(op, args)
        yield Case(op, args, extra)


def _pool_conv_cases():
    x = rand((2, 3, 9, 11), "float32", 1)
    for name in ("nn.max_pool2d", "nn.avg_pool2d"):
        yield Case(name, [x], {"pool_size": 3})
        yield Case(name, [x], {"pool_size": (3, 2), "strides": 2, "padding": (1, 0, 1, 1)})
        yield Case(name, [x], {"pool_size": 3, "strides": 2, "padding": 1, "ceil_mode": True})
        yield Case(name, [x], {"pool_size": 2, "dilation": 2, "padding": (0, 1)})
        yield Case(name, [np.moveaxis(x, 1, 3).copy()], {"pool_size": 3, "layout": "NHWC"})
    yield Case("nn.avg_pool2d", [x], {"pool_size": 3, "strides": 2, "padding": 1,
                                      "count_include_pad": True})
    yield Case("nn.avg_pool2d", [x], {"pool_size": 3, "strides": 2, "padding": 1,
                                      "ceil_mode": True, "count_include_pad": True})
    yield Case("nn.avg_pool2d", [rand((1, 2, 6, 6), "int32", 1)], {"pool_size": 2, "padding": 1})
    yield Case("nn.max_pool2d", [rand((1, 2, 6, 6), "int32", 1)], {"pool_size": 2, "padding": 1})
    for name in ("nn.global_avg_pool2d", "nn.global_max_pool2d"):
        yield Case(name, [x])
        yield Case(name, [np.moveaxis(x, 1, 3).copy()], {"layout": "NHWC"})
    yield Case("nn.global_avg_pool2d", [rand((1, 2, 3, 3), "int32", 1)])
    yield Case("nn.adaptive_avg_pool2d", [x], {"output_size": (4, 3)})
    yield Case("nn.adaptive_avg_pool2d", [x], {"output_size": (1, 1)})
    prod = dict(rtol=1e-4, atol=1e-4)
    w = rand((4, 3, 3, 3), "float32", 2)
    yield Case("nn.conv2d", [x, w], {"padding": 1}, **prod)
    yield Case("nn.conv2d", [x, w], {"strides": 2, "padding": (1, 0, 2, 1), "dilation": (2, 1)},
               **prod)
    yield Case("nn.conv2d", [x, rand((6, 1, 3, 3), "float32", 3)],
               {"groups": 3, "padding": 1}, **prod)
    yield Case("nn.conv2d", [x, rand((5, 3, 1, 1), "float32", 3)], {}, **prod)
    yield Case("nn.conv2d", [np.moveaxis(x, 1, 3).copy(), rand((3, 3, 3, 4), "float32", 4)],
               {"padding": 1, "data_layout": "NHWC", "kernel_layout": "HWIO"}, **prod)
    yield Case("nn.conv1d", [rand((2, 4, 13), "float32", 1), rand((6, 2, 3), "float32", 2)],
               {"groups": 2, "padding": 2, "strides": 2}, **prod)
    # big enough for the register-tiled nest (tir/matmul.py), with partial tiles
    w16 = rand((19, 3, 3, 3), "float32", 5)
    yield Case("nn.conv2d", [x, w16], {"padding": 1}, **prod, note="tiled")
    yield Case("nn.conv2d", [x, w16], {"strides": 2, "padding": (0, 1, 1, 0)}, **prod,
               note="tiled")
    yield Case("nn.conv2d", [rand((1, 8, 5, 7), "float32", 6), rand((40, 8, 1, 1), "float32", 7)],
               {}, **prod, note="tiled-1x1")
    yield Case("nn.conv2d", [np.moveaxis(x, 1, 3).copy(), rand((3, 3, 3, 21), "float32", 4)],
               {"padding": 1, "data_layout": "NHWC", "kernel_layout": "HWIO"}, **prod,
               note="tiled")
    yield Case("nn.conv1d", [rand((2, 4, 13), "float32", 1), rand((17, 4, 3), "float32", 2)],
               {"padding": 1}, **prod, note="tiled")
    # AlterOpLayout's blocked convolutions (more in tests/op/test_nn_nchwc.py)
    xb = rand((1, 2, 7, 6, 4), "float32", 8)  # NCHW4c, 8 channels
    blocked = {"data_layout": "NCHW4c", "out_layout": "NCHW8c"}
    yield Case("nn.contrib_conv2d_NCHWc", [xb, rand((2, 2, 3, 3, 4, 8), "float32", 9)],
               {**blocked, "kernel_layout": "OIHW4i8o", "padding": 1}, **prod)
    yield Case("nn.contrib_conv2d_NCHWc", [xb, rand((2, 1, 3, 3, 4, 8), "float32", 9)],
               {**blocked, "kernel_layout": "OIHW4i8o", "groups": 2, "strides": 2}, **prod)
    same = {"data_layout": "NCHW4c", "out_layout": "NCHW4c"}
    yield Case("nn.contrib_depthwise_conv2d_NCHWc", [xb, rand((2, 1, 3, 3, 1, 4), "float32", 9)],
               {**same, "kernel_layout": "OIHW1i4o", "groups": 8, "padding": 1}, **prod)
    # strided: the padding is a condition on the load (no padded copy)
    yield Case("nn.contrib_depthwise_conv2d_NCHWc", [xb, rand((2, 1, 3, 3, 1, 4), "float32", 9)],
               {**same, "kernel_layout": "OIHW1i4o", "groups": 8, "strides": 2,
                "padding": (1, 0, 1, 2)}, **prod)
    yield Case("nn.contrib_conv2d_winograd_NCHWc", [xb, rand((6, 6, 3, 2, 4, 4), "float32", 9),
                                                    rand((3, 2, 3, 3, 4, 4), "float32", 9)],
               {**same, "kernel_layout": "HWOI4i4o", "padding": 1}, **prod)
    yield Case("nn.contrib_conv2d_winograd_weight_transform", [rand((5, 3, 3, 3), "float32", 9)],
               {"tile_size": 2}, **prod)



def _algorithm_cases():
    """Cases of op/algorithm.py, op/scatter.py and op/bitwise.py (the ops with a compute)."""
    x = rand((3, 5), "float32", 1)
    for name in ("cumsum", "cumprod"):
        yield Case(name, [x], {"axis": 1})
        yield Case(name, [x], {"axis": 0, "exclusive": True, "reverse": True})
        yield Case(name, [rand((2, 3, 4), "int32", 2)], {"axis": -1, "reverse": True})
        yield Case(name, [x], {}, note="flat")
    yield Case("cumsum", [rand((4, 3), "bool", 3)], {"axis": 0, "dtype": "int64"})
    yield Case("trilu", [rand((2, 4, 5), "float32", 1)], {"k": 1, "upper": True})
    yield Case("trilu", [rand((4, 5), "int32", 1)], {"k": -1, "upper": False})
    prod = dict(rtol=1e-4, atol=1e-4)
    yield Case("einsum", [(rand((3, 4), "float32", 1), rand((4, 5), "float32", 2))],
               {"equation": "ij,jk->ik"}, **prod)
    yield Case("einsum", [(rand((2, 3, 3), "float32", 1),)], {"equation": "...ii->...i"})
    yield Case("einsum", [(rand((2, 3), "float32", 1), rand((1, 3, 4), "float32", 2))],
               {"equation": "...j,...jk"}, **prod)
    yield Case("einsum", [(rand((3,), "int32", 1), rand((4,), "int32", 2))],
               {"equation": "i,j->ij"})
    idx = np.array([[0, 2, -1], [3, 5, 1]], "int64")
    yield Case("one_hot", [idx, np.float32(2.5), np.float32(-1)], {"depth": 4})
    yield Case("one_hot", [idx.astype("int32"), np.int32(1), np.int32(0)],
               {"depth": 3, "axis": 0, "dtype": "int32"})
    yield Case("arange", [], {"start": 1, "stop": 8, "step": 1.5, "dtype": "float32"})
    yield Case("arange", [], {"start": 10, "stop": -3, "step": -3, "dtype": "int32"})
    yield Case("bitwise_not", [rand((9,), "int32", 1)])
    yield Case("bitwise_not", [rand((9,), "uint8", 1)])
    yield Case("bitwise_not", [rand((9,), "bool", 1)])
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        yield Case(name, [rand((3, 4), "int32", 1), rand((4,), "int32", 2)])
        yield Case(name, [rand((5,), "uint8", 1), rand((5,), "uint8", 2)])
        yield Case(name, [rand((5,), "bool", 1), rand((5,), "bool", 2)])
    # shift amounts past the bit width and negative ones: numpy's results, not C's UB
    amounts = np.array([0, 1, 3, 7, 8, 9, 31, 40], "int8")
    values = np.array([1, -1, 5, -128, 127, -7, 3, -2], "int8")
    for name in ("left_shift", "right_shift"):
        yield Case(name, [values, amounts])
        yield Case(name, [values.astype("int64"), np.array([0, 1, 63, 64, 65, -1, 2, 70],
                                                           "int64")])
        yield Case(name, [np.array([1, 200, 255, 7], "uint8"), np.array([0, 3, 8, 1], "uint8")])
    data = rand((3, 4), "float32", 1)
    gi = np.array([[0, -1, 2, 1], [2, 2, 0, -3]], "int64")
    yield Case("gather", [data, gi], {"axis": 0})
    yield Case("gather", [data, np.array([[3, 0], [1, -4], [2, 2]], "int32")], {"axis": 1})
    d3 = rand((2, 3, 4), "float32", 2)
    yield Case("gather_nd", [d3, np.array([[1, 0, -1], [2, 0, 1]], "int64")])
    yield Case("gather_nd", [d3, np.array([[[1, 0], [2, 2]]], "int32")], {"batch_dims": 1})
    upd = rand((2, 4), "float32", 3)
    si = np.array([[1, 0, 2, 2], [1, -1, 0, 2]], "int64")
    for red in ("update", "add", "mul", "min", "max"):
        yield Case("scatter_elements", [data, si, upd], {"axis": 0, "reduction": red})
    yield Case("scatter_elements", [data, si[:, :3].T.copy(), upd[:, :3].T.copy()],
               {"axis": 1, "reduction": "add"}, note="axis1")
    ni = np.array([[0, 2, 0], [1, 3, 1]], "int64")
    for mode in ("update", "add", "mul", "min", "max"):
        yield Case("scatter_nd", [data, ni, rand((3,), "float32", 4)], {"mode": mode})
    yield Case("scatter_nd", [data, np.array([[2, -1]], "int32"), rand((2, 4), "float32", 5)],
               {"mode": "add"}, note="rows")
    ids = np.array([2, 0, 2], "int32")  # segment 1 is empty; fewer ids than rows below
    yield Case("segment_sum", [data, ids], {"num_segments": 4})
    yield Case("segment_sum", [rand((4, 2, 3), "int32", 6), np.array([1, 1, 0], "int64")],
               {"num_segments": 2}, note="int")
    dense = np.array([[0, 1], [2, 3], [0, 1], [-1, 0]], "int64")  # a repeat keeps the last
    yield Case("sparse_to_dense", [dense, rand((4,), "float32", 7), rand((), "float32", 8)],
               {"output_shape": (3, 4)})
    yield Case("sparse_to_dense", [np.array(2, "int32"), np.array(5, "int32"),
                                   np.array(-1, "int32")], {"output_shape": (4,)}, note="0d")

def _spatial_cases():
    """1-D/3-D pools and conv, transposed conv, LRN, resize, depth/space (issue 6)."""
    prod = dict(rtol=1e-4, atol=1e-4)
    x1, x3 = rand((2, 3, 11), "float32", 1), rand((1, 2, 5, 6, 7), "float32", 2)
    for n, x, attrs in ((1, x1, {"pool_size": 3, "strides": 2, "padding": 1, "ceil_mode": True}),
                        (3, x3, {"pool_size": (2, 3, 2), "strides": (1, 2, 2),
                                 "padding": (1, 0, 1, 0, 1, 1)})):
        yield Case(f"nn.max_pool{n}d", [x], attrs)
        yield Case(f"nn.avg_pool{n}d", [x], attrs)
        yield Case(f"nn.avg_pool{n}d", [x], {**attrs, "count_include_pad": True}, note="incl")
    yield Case("nn.conv3d", [x3, rand((4, 2, 3, 2, 3), "float32", 3)],
               {"padding": 1, "strides": (1, 2, 1)}, **prod)
    yield Case("nn.conv3d", [x3, rand((4, 1, 2, 2, 2), "float32", 3)],
               {"groups": 2, "dilation": (2, 1, 2)}, **prod)
    x = rand((2, 4, 5, 6), "float32", 4)
    yield Case("nn.conv2d_transpose", [x, rand((4, 3, 3, 3), "float32", 5)],
               {"strides": 2, "padding": (1, 0, 1, 1), "output_padding": (1, 0)}, **prod)
    yield Case("nn.conv2d_transpose", [x, rand((4, 1, 3, 2), "float32", 5)],
               {"groups": 2, "dilation": (2, 1), "strides": (1, 2)}, **prod)
    yield Case("nn.conv1d_transpose", [x1, rand((3, 2, 4), "float32", 6)],
               {"strides": 3, "padding": 2, "output_padding": 1}, **prod)
    yield Case("nn.conv3d_transpose", [x3, rand((2, 3, 2, 3, 2), "float32", 6)],
               {"strides": (1, 2, 2), "padding": (0, 1, 0, 1, 0, 1)}, **prod)
    yield Case("nn.lrn", [x], {"size": 3, "alpha": 0.1})
    yield Case("nn.lrn", [rand((2, 5, 7), "float32", 5)], {"size": 4, "axis": -1, "bias": 1.5})
    for method in ("nearest_neighbor", "linear", "cubic"):
        yield Case("image.resize2d", [x], {"size": (9, 4), "method": method})
    yield Case("image.resize2d", [x], {"size": (3, 11), "method": "nearest_neighbor",
                                       "coordinate_transformation_mode": "asymmetric",
                                       "rounding_method": "round_prefer_ceil"}, note="asym")
    yield Case("image.resize2d", [x], {"size": (7, 4), "method": "cubic", "cubic_exclude": 1,
                                       "coordinate_transformation_mode": "align_corners"},
               note="exclude")
    yield Case("image.resize2d", [x], {"size": (4, 4), "method": "linear",
                                       "coordinate_transformation_mode": "tf_crop_and_resize",
                                       "roi": (0.2, -0.1, 0.9, 1.2), "extrapolation_value": 3.0},
               note="crop")
    for method in ("linear", "cubic"):
        yield Case("image.resize2d", [rand((1, 2, 9, 8), "float32", 9)],
                   {"size": (3, 5), "method": method, "antialias": True, "cubic_exclude": 1},
                   note="antialias")
    yield Case("image.resize2d", [rand((1, 2, 3, 3), "int32", 1)],
               {"size": (6, 5), "method": "nearest_neighbor"})
    yield Case("image.resize1d", [x1], {"size": (7,), "scales": (0.7,),
                                        "coordinate_transformation_mode": "pytorch_half_pixel"})
    yield Case("image.resize3d", [x3], {"size": (3, 8, 5), "method": "linear"})
    yield Case("nn.upsampling", [x], {"scale_h": 2, "scale_w": 3})
    yield Case("nn.upsampling", [x], {"scale_h": 2, "scale_w": 2, "method": "linear",
                                      "align_corners": True})
    x8 = rand((2, 8, 3, 4), "float32", 7)
    for mode in ("DCR", "CRD"):
        yield Case("nn.depth_to_space", [x8], {"block_size": 2, "mode": mode})
        yield Case("nn.space_to_depth", [rand((2, 3, 4, 6), "float32", 8)],
                   {"block_size": 2, "mode": mode})
    yield Case("nn.depth_to_space", [np.moveaxis(x8, 1, 3).copy()],
               {"block_size": 2, "layout": "NHWC"})
    grid = (rand((2, 2, 4, 3), "float32", 10) * 1.4).astype("float32")  # some outside [-1, 1]
    for method, padding, corners in (("bilinear", "zeros", False), ("nearest", "border", True),
                                     ("bicubic", "reflection", False),
                                     ("bilinear", "reflection", True)):
        yield Case("image.grid_sample", [x, grid], {"method": method, "padding_mode": padding,
                                                    "align_corners": corners},
                   note=f"{method}-{padding}")
    yield Case("image.grid_sample", [x3, (rand((1, 3, 2, 3, 2), "float32", 11) * 1.3)
                                     .astype("float32")],
               {"layout": "NCDHW", "padding_mode": "border", "align_corners": False})


CASES = [*_binary_cases(), *_unary_cases(), *_reduce_cases(), *_transform_cases(),
         *_nn_cases(), *_pool_conv_cases(), *_algorithm_cases(), *_spatial_cases()]


def _reference(case: Case):
    op = get_op(case.op)
    attrs = make_attrs(op, case.attrs)
    with np.errstate(all="ignore"):
        out = op.reference(*case.inputs, attrs)
    return list(out) if isinstance(out, tuple) else [out]


def _flat_inputs(case: Case) -> list:
    out = []
    for x in case.inputs:
        out.extend(x if isinstance(x, tuple) else [x])
    return [np.ascontiguousarray(x) for x in out]


@pytest.fixture(scope="module")
def compiled():
    """Lower every case (keeping per-case errors) and compile them in two halves."""
    from relayir.codegen.native import compile_kernels

    kernels, errors = {}, {}
    for n, case in enumerate(CASES):
        try:
            mod = infer_module(make_call_module(case.op, case.inputs, case.attrs))
            kernels[n] = lower_primitive(mod["main"], f"case{n}_{case.op}")
        except Exception as exc:  # reported by the case's own test
            errors[n] = exc
    items = list(kernels.values())
    half = len(items) // 2
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(compile_kernels, [items[:half], items[half:]]))
    fns = {**parts[0], **parts[1]}
    return {n: fns[k.name] for n, k in kernels.items()}, errors


@pytest.mark.parametrize("n", range(len(CASES)), ids=[c.id for c in CASES])
def test_kernel_matches_reference(compiled, n):
    fns, errors = compiled
    if n in errors:
        raise errors[n]
    case = CASES[n]
    outs = fns[n](*_flat_inputs(case))
    expected = _reference(case)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        want = np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
        if got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got.astype("float64"), want.astype("float64"),
                                       rtol=case.rtol, atol=case.atol, equal_nan=True)


def test_every_op_of_the_core_families_has_a_compute():
    from relayir.op import list_ops
    from relayir.te.computes import COMPUTE, REFERENCE_ONLY
    from relayir.te.computes.dynamic import VALUE_SHAPED

    missing = [n for n in COMPUTE.missing() if n not in REFERENCE_ONLY]
    assert missing == [], f"ops without a compute rule: {missing}"
    # the value-shaped dyn ops' kernels run on the VM (their output shape is a value):
    # tests/vm/test_vm_value_shaped.py checks them against numpy, edge values included
    tested = {c.op for c in CASES} | set(VALUE_SHAPED)
    untested = [n for n in list_ops() if n in COMPUTE and n not in tested]
    assert untested == [], f"ops with a compute but no kernel test: {untested}"
