"""Tests of the ``nn`` operators: type relations, references and constructors.

Values are compared with torch (computed in float64) where torch has the op, otherwise
with a plain numpy loop written here, never with the code under test.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

import relayir
from relayir import nn
from relayir.errors import OpError
from relayir.ir.dim_expr import floordiv
from relayir.ir.expr import Call, Constant, Function, TupleGetItem, Var
from relayir.ir.module import IRModule
from relayir.ir.op import OpPattern, call, get_op
from relayir.ir.types import Any, SymbolicDim, TensorType, TupleType
from relayir.testing.op_check import check_op, infer_op_type, rand, type_of_value
from relayir.typing.infer import infer_module

# ---------------------------------------------------------------- helpers


def infer_types(op_name, arg_types, attrs=None):
    """The output type for argument *types* (which may hold ``Any``/symbolic dims)."""
    params = [Var(f"a{i}", t) for i, t in enumerate(arg_types)]
    mod = infer_module(IRModule.from_expr(Function(params, call(op_name, params, **(attrs or {})))))
    return mod["main"].body.checked_type


def expect_type_error(op_name, inputs, attrs=None, fragment="", shown=None):
    """The relation rejects ``inputs``; the message names the op and shows the types of
    the inputs at ``shown`` (default: all)."""
    with pytest.raises(relayir.TypeInferenceError) as info:
        infer_op_type(op_name, inputs, attrs)
    msg = str(info.value)
    assert msg.startswith(f"{op_name}: "), msg
    for i in range(len(inputs)) if shown is None else shown:
        assert str(type_of_value(inputs[i])) in msg, msg
    assert fragment in msg, msg
    return msg


def f64(x):
    torch = pytest.importorskip("torch")
    return torch.from_numpy(np.asarray(x, dtype="float64"))


def np32(t):
    return t.numpy().astype("float32")


def nchw_to(x, layout, canonical="NCHW"):
    return np.transpose(x, [canonical.index(c) for c in layout])


# ---------------------------------------------------------------- dense / matmul

DENSE = [
    ((2, 3), (4, 3), None),
    ((5,), (2, 5), 2),
    ((2, 3, 7), (6, 7), 6),
    ((1, 1), (1, 1), None),
]


@pytest.mark.parametrize("dshape,wshape,units", DENSE)
def test_dense(dshape, wshape, units):
    torch = pytest.importorskip("torch")
    x, w = rand(dshape, seed=1), rand(wshape, seed=2)
    expected = np32(torch.nn.functional.linear(f64(x), f64(w)))
    check_op("nn.dense", [x, w], expected, {"units": units})


def test_dense_int8_out_dtype():
    x, w = rand((3, 4), "int8", seed=1), rand((5, 4), "int8", seed=2)
    expected = np.zeros((3, 5), "int32")
    for i, j, k in itertools.product(range(3), range(5), range(4)):
        expected[i, j] += int(x[i, k]) * int(w[j, k])
    check_op("nn.dense", [x, w], expected, {"out_dtype": "int32"})


MATMUL = [
    ((2, 3), (3, 4), False, False),
    ((3,), (3, 4), False, False),
    ((2, 5, 3), (3, 4), False, False),
    ((2, 3, 5), (3, 4), True, False),
    ((2, 5, 3), (4, 3), False, True),
    ((3, 5), (4, 3), True, True),
]


@pytest.mark.parametrize("ashape,bshape,ta,tb", MATMUL)
def test_matmul(ashape, bshape, ta, tb):
    a, b = rand(ashape, seed=1), rand(bshape, seed=2)
    ta_ = f64(a).transpose(-1, -2) if ta else f64(a)
    tb_ = f64(b).T if tb else f64(b)
    expected = np32(ta_ @ tb_)
    check_op("nn.matmul", [a, b], expected, {"transpose_a": ta, "transpose_b": tb})


BATCH_MATMUL = [
    ((2, 3, 4), (2, 5, 4), False, True),
    ((1, 3, 4), (3, 5, 4), False, True),
    ((3, 3, 4), (1, 4, 5), False, False),
    ((2, 4, 3), (2, 4, 5), True, False),
    ((2, 4, 3), (2, 5, 4), True, True),
]


@pytest.mark.parametrize("ashape,bshape,ta,tb", BATCH_MATMUL)
def test_batch_matmul(ashape, bshape, ta, tb):
    torch = pytest.importorskip("torch")
    a, b = rand(ashape, seed=1), rand(bshape, seed=2)
    ta_ = f64(a).transpose(1, 2) if ta else f64(a)
    tb_ = f64(b).transpose(1, 2) if tb else f64(b)
    batch = max(ashape[0], bshape[0])
    expected = np32(torch.bmm(ta_.expand(batch, -1, -1), tb_.expand(batch, -1, -1)))
    check_op("nn.batch_matmul", [a, b], expected, {"transpose_a": ta, "transpose_b": tb})


# ---------------------------------------------------------------- activations


def per_channel_loop(x, v, axis, fn):
    """``fn(x_slice, v[c])`` for each channel ``c`` along ``axis``."""
    out = np.empty(x.shape, "float64")
    for c in range(x.shape[axis]):
        idx = (slice(None),) * (axis % x.ndim) + (c,)
        out[idx] = fn(x[idx].astype("float64"), float(v[c]))
    return out


@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 1), ((3, 7), -1), ((2, 3, 4, 5), 3),
                                        ((4, 2), 0)])
def test_bias_add(shape, axis):
    x, b = rand(shape, seed=1), rand((shape[axis],), seed=2)
    expected = per_channel_loop(x, b, axis, lambda s, v: s + v).astype("float32")
    check_op("nn.bias_add", [x, b], expected, {"axis": axis})


@pytest.mark.parametrize("shape,dtype", [((2, 3), "float32"), ((4, 1, 5), "float64"),
                                         ((7,), "int32")])
def test_relu(shape, dtype):
    x = rand(shape, dtype, seed=3)
    expected = np.where(x > 0, x, 0).astype(dtype)
    check_op("nn.relu", [x], expected)


@pytest.mark.parametrize("shape,alpha", [((2, 3), 0.01), ((3, 4, 5), 0.2), ((5,), 1.5)])
def test_leaky_relu(shape, alpha):
    torch = pytest.importorskip("torch")
    x = rand(shape, seed=4)
    expected = np32(torch.nn.functional.leaky_relu(f64(x), alpha))
    check_op("nn.leaky_relu", [x], expected, {"alpha": alpha})


@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 1), ((2, 4, 5, 3), 3), ((3, 6), 1)])
def test_prelu(shape, axis):
    torch = pytest.importorskip("torch")
    x, a = rand(shape, seed=5), rand((shape[axis],), seed=6, low=0, high=0.5)
    moved = f64(np.moveaxis(x, axis, 1))
    expected = np.moveaxis(np32(torch.nn.functional.prelu(moved, f64(a))), 1, axis)
    check_op("nn.prelu", [x, a], expected, {"axis": axis})


@pytest.mark.parametrize("op", ["nn.softmax", "nn.log_softmax"])
@pytest.mark.parametrize("shape,axis", [((2, 5), -1), ((3, 4, 5), 1), ((4, 3), 0), ((7,), 0)])
def test_softmax(op, shape, axis):
    torch = pytest.importorskip("torch")
    x = rand(shape, seed=7, low=-10, high=10)
    fn = torch.softmax if op == "nn.softmax" else torch.log_softmax
    check_op(op, [x], np32(fn(f64(x), axis)), {"axis": axis})


# ---------------------------------------------------------------- convolution

# data (NCHW), out channels, kernel (kh, kw), attrs
CONV2D = [
    ((1, 3, 7, 9), 4, (3, 3), {}),
    ((2, 4, 8, 8), 6, (3, 5), {"strides": (2, 1), "padding": (1, 2)}),
    ((1, 4, 9, 7), 4, (3, 3), {"strides": 2, "padding": (0, 1, 2, 1), "dilation": 2}),
    ((1, 4, 6, 6), 6, (3, 3), {"padding": 1, "groups": 2}),
    ((1, 6, 7, 7), 6, (3, 3), {"strides": 2, "padding": 1, "groups": 6}),
    ((1, 3, 5, 6), 6, (3, 2), {"padding": (1, 0), "groups": 3, "dilation": (1, 2)}),
    ((2, 5, 8, 4), 7, (1, 1), {"strides": 2}),
    ((2, 3, 8, 10), 5, (3, 3), {"padding": 1, "data_layout": "NHWC"}),
    ((1, 6, 9, 8), 6, (3, 3), {"strides": (2, 1), "padding": (2, 1, 0, 1), "dilation": (2, 1),
                               "groups": 3, "data_layout": "NHWC", "kernel_layout": "HWIO"}),
    ((1, 4, 5, 5), 2, (3, 3), {"padding": 1, "out_layout": "NHWC"}),
    ((1, 4, 5, 5), 2, (3, 3), {"data_layout": "NHWC", "kernel_layout": "OIHW"}),
    ((1, 2, 4, 5), 3, (2, 3), {"channels": 3, "kernel_size": (2, 3)}),
]


def torch_conv2d(x, w, strides, pads, dilation, groups):
    torch = pytest.importorskip("torch")
    top, left, bottom, right = pads
    xp = torch.nn.functional.pad(f64(x), (left, right, top, bottom))
    return torch.nn.functional.conv2d(xp, f64(w), stride=strides, dilation=dilation,
                                      groups=groups).numpy()


@pytest.mark.parametrize("dshape,out_ch,kernel,attrs", CONV2D)
def test_conv2d(dshape, out_ch, kernel, attrs):
    a = get_op("nn.conv2d").attrs_type(**attrs)  # normalised strides/padding/layouts
    g = a.groups
    x = rand(dshape, seed=8)
    w = rand((out_ch, dshape[1] // g, *kernel), seed=9)
    expected = torch_conv2d(x, w, a.strides, a.padding, a.dilation, g).astype("float32")
    xl = nchw_to(x, a.data_layout)
    wl = nchw_to(w, a.kernel_layout, "OIHW")
    expected = nchw_to(expected, a.out_layout or a.data_layout)
    check_op("nn.conv2d", [xl, wl], expected, attrs, rtol=1e-5, atol=1e-5)


def test_conv2d_int8_out_dtype():
    x, w = rand((1, 2, 5, 5), "int8", seed=1), rand((3, 2, 3, 3), "int8", seed=2)
    expected = np.rint(torch_conv2d(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1)).astype("int32")
    check_op("nn.conv2d", [x, w], expected, {"padding": 1, "out_dtype": "int32"})


CONV1D = [
    ((2, 3, 10), 4, 3, {}),
    ((1, 4, 11), 6, 3, {"strides": 2, "padding": (2, 1), "dilation": 2, "groups": 2}),
    ((1, 4, 9), 4, 3, {"padding": 1, "groups": 4}),
    ((2, 3, 8), 5, 2, {"padding": 1, "data_layout": "NWC"}),
    ((1, 3, 7), 2, 3, {"data_layout": "NWC", "kernel_layout": "WIO", "out_layout": "NCW"}),
]


@pytest.mark.parametrize("dshape,out_ch,k,attrs", CONV1D)
def test_conv1d(dshape, out_ch, k, attrs):
    torch = pytest.importorskip("torch")
    a = get_op("nn.conv1d").attrs_type(**attrs)
    x = rand(dshape, seed=10)
    w = rand((out_ch, dshape[1] // a.groups, k), seed=11)
    xp = torch.nn.functional.pad(f64(x), a.padding)
    expected = torch.nn.functional.conv1d(xp, f64(w), stride=a.strides, dilation=a.dilation,
                                          groups=a.groups).numpy().astype("float32")
    xl = nchw_to(x, a.data_layout, "NCW")
    wl = nchw_to(w, a.kernel_layout, "OIW")
    expected = nchw_to(expected, a.out_layout or a.data_layout, "NCW")
    check_op("nn.conv1d", [xl, wl], expected, attrs, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- pooling


def loop_pool(x, k, s, d, pads, kind, include_pad=False):
    """Plain loops over output pixels (floor mode), NCHW."""
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    oh = (h + top + bottom - (k[0] - 1) * d[0] - 1) // s[0] + 1
    ow = (w + left + right - (k[1] - 1) * d[1] - 1) // s[1] + 1
    out = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        vals, count = [], 0
        for p, q in itertools.product(range(k[0]), range(k[1])):
            y, z = i * s[0] + p * d[0] - top, j * s[1] + q * d[1] - left
            if 0 <= y < h and 0 <= z < w:
                vals.append(x[:, :, y, z].astype("float64"))
                count += 1
            elif include_pad:
                vals.append(np.zeros((n, c)))
                count += 1
        stack = np.stack(vals)
        out[:, :, i, j] = stack.max(0) if kind == "max" else stack.sum(0) / count
    return out.astype(x.dtype)


# data (NCHW), attrs, oracle ("torch" or "loop")
POOL = [
    ((1, 3, 7, 9), {"pool_size": 3, "strides": 2, "padding": 1}, "torch"),
    ((2, 2, 8, 8), {"pool_size": (2, 3), "strides": (2, 1)}, "torch"),
    ((1, 2, 8, 7), {"pool_size": 3, "strides": 2, "ceil_mode": True}, "torch"),
    ((1, 2, 6, 6), {"pool_size": 3, "strides": 2, "padding": 1, "ceil_mode": True}, "torch"),
    ((1, 2, 5, 9), {"pool_size": 2, "strides": 3, "padding": 1, "ceil_mode": True}, "torch"),
    ((2, 3, 9, 8), {"pool_size": 3, "strides": 2, "padding": 1, "layout": "NHWC"}, "torch"),
    ((1, 2, 9, 9), {"pool_size": 2, "dilation": 2, "strides": 2}, "loop"),
    ((1, 2, 7, 6), {"pool_size": 3, "strides": (1, 2), "padding": (0, 1, 2, 1)}, "loop"),
    ((1, 2, 7, 6), {"pool_size": (2, 3), "padding": (1, 0, 0, 1), "layout": "NHWC",
                    "out_layout": "NCHW"}, "loop"),
]


def pool_expected(kind, x, attrs, oracle, include_pad=False):
    a = get_op(f"nn.{kind}_pool2d").attrs_type(**attrs)
    if oracle == "loop":
        return loop_pool(x, a.pool_size, a.strides, a.dilation, a.padding, kind, include_pad)
    torch = pytest.importorskip("torch")
    fn = torch.nn.functional
    kw = {"kernel_size": a.pool_size, "stride": a.strides, "padding": a.padding[:2],
          "ceil_mode": a.ceil_mode}
    if kind == "max":
        return np32(fn.max_pool2d(f64(x), dilation=a.dilation, **kw))
    return np32(fn.avg_pool2d(f64(x), count_include_pad=include_pad, **kw))


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("dshape,attrs,oracle", POOL)
def test_pool2d(kind, dshape, attrs, oracle):
    if kind == "avg" and "dilation" in attrs and oracle == "torch":
        pytest.skip("torch avg_pool2d has no dilation")
    x = rand(dshape, seed=12)
    a = get_op(f"nn.{kind}_pool2d").attrs_type(**attrs)
    expected = nchw_to(pool_expected(kind, x, attrs, oracle), a.out_layout or a.layout)
    check_op(f"nn.{kind}_pool2d", [nchw_to(x, a.layout)], expected, attrs)


@pytest.mark.parametrize("dshape,attrs,oracle", [
    ((1, 3, 7, 9), {"pool_size": 3, "strides": 2, "padding": 1}, "torch"),
    ((1, 2, 6, 6), {"pool_size": 3, "strides": 2, "padding": 1, "ceil_mode": True}, "torch"),
    ((1, 2, 5, 9), {"pool_size": 2, "strides": 3, "padding": 1, "ceil_mode": True}, "torch"),
    ((1, 2, 7, 6), {"pool_size": 3, "strides": (1, 2), "padding": (0, 1, 2, 1)}, "loop"),
    ((1, 2, 9, 9), {"pool_size": 2, "dilation": 2, "padding": 1}, "loop"),
])
def test_avg_pool2d_count_include_pad(dshape, attrs, oracle):
    x = rand(dshape, seed=13)
    expected = pool_expected("avg", x, attrs, oracle, include_pad=True)
    check_op("nn.avg_pool2d", [x], expected, {**attrs, "count_include_pad": True})


def test_max_pool2d_int():
    x = rand((1, 2, 5, 5), "int32", seed=14)
    expected = loop_pool(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    check_op("nn.max_pool2d", [x], expected, {"pool_size": 3, "strides": 2, "padding": 1})


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("dshape,layout", [((2, 3, 5, 7), "NCHW"), ((1, 4, 1, 9), "NCHW"),
                                           ((2, 3, 6, 5), "NHWC")])
def test_global_pool2d(kind, dshape, layout):
    x = rand(dshape, seed=15)
    reduce = np.mean if kind == "avg" else np.max
    expected = reduce(x.astype("float64"), axis=(2, 3), keepdims=True).astype("float32")
    check_op(f"nn.global_{kind}_pool2d", [nchw_to(x, layout)], nchw_to(expected, layout),
             {"layout": layout})


@pytest.mark.parametrize("dshape,output_size,layout", [
    ((1, 2, 7, 10), (1, 1), "NCHW"),
    ((2, 3, 7, 10), (2, 3), "NCHW"),
    ((1, 2, 9, 9), (4, 4), "NCHW"),
    ((1, 2, 5, 7), 3, "NCHW"),
    ((1, 2, 5, 7), (None, 2), "NCHW"),
    ((1, 2, 4, 4), (6, 5), "NCHW"),
    ((2, 3, 8, 6), (3, 4), "NHWC"),
])
def test_adaptive_avg_pool2d(dshape, output_size, layout):
    torch = pytest.importorskip("torch")
    x = rand(dshape, seed=16)
    expected = np32(torch.nn.functional.adaptive_avg_pool2d(f64(x), output_size))
    check_op("nn.adaptive_avg_pool2d", [nchw_to(x, layout)], nchw_to(expected, layout),
             {"output_size": output_size, "layout": layout})


def test_adaptive_avg_pool2d_no_size_is_identity():
    x = rand((1, 2, 3, 4), seed=17)
    check_op("nn.adaptive_avg_pool2d", [x], x)


# ---------------------------------------------------------------- normalisation


@pytest.mark.parametrize("shape,axis,center,scale", [
    ((2, 3, 4, 5), 1, True, True),
    ((4, 6), 1, True, True),
    ((2, 4, 5, 3), 3, True, True),
    ((2, 3, 4), 1, False, True),
    ((2, 3, 4), -2, True, False),
])
def test_batch_norm(shape, axis, center, scale):
    torch = pytest.importorskip("torch")
    c = shape[axis]
    x = rand(shape, seed=20)
    gamma, beta, mean = rand((c,), seed=21), rand((c,), seed=22), rand((c,), seed=23)
    var = rand((c,), seed=24, low=0.1, high=2.0)
    moved = f64(np.moveaxis(x, axis, 1))
    out = torch.nn.functional.batch_norm(
        moved, f64(mean), f64(var), f64(gamma) if scale else None,
        f64(beta) if center else None, training=False, eps=1e-3)
    expected = np.moveaxis(np32(out), 1, axis)
    check_op("nn.batch_norm", [x, gamma, beta, mean, var], (expected, mean, var),
             {"axis": axis, "epsilon": 1e-3, "center": center, "scale": scale})


@pytest.mark.parametrize("shape,axis,center,scale", [
    ((2, 5), -1, True, True),
    ((2, 3, 7), -1, True, True),
    ((2, 3, 7), 1, True, True),
    ((4, 6), 0, False, False),
])
def test_layer_norm(shape, axis, center, scale):
    torch = pytest.importorskip("torch")
    c = shape[axis]
    x, gamma, beta = rand(shape, seed=25), rand((c,), seed=26), rand((c,), seed=27)
    moved = f64(np.moveaxis(x, axis, -1))
    out = torch.nn.functional.layer_norm(moved, (c,), f64(gamma) if scale else None,
                                         f64(beta) if center else None, eps=1e-5)
    expected = np.moveaxis(np32(out), -1, axis)
    check_op("nn.layer_norm", [x, gamma, beta], expected,
             {"axis": axis, "center": center, "scale": scale}, atol=1e-5)


@pytest.mark.parametrize("shape,groups", [((2, 6, 4, 5), 3), ((1, 4, 7), 2), ((2, 6, 3, 3), 6),
                                          ((2, 5, 3), 1)])
def test_group_norm(shape, groups):
    torch = pytest.importorskip("torch")
    c = shape[1]
    x, gamma, beta = rand(shape, seed=28), rand((c,), seed=29), rand((c,), seed=30)
    out = torch.nn.functional.group_norm(f64(x), groups, f64(gamma), f64(beta), eps=1e-5)
    check_op("nn.group_norm", [x, gamma, beta], np32(out), {"num_groups": groups}, atol=1e-5)


@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 1), ((2, 3, 7), 1), ((2, 4, 5, 3), 3)])
def test_instance_norm(shape, axis):
    torch = pytest.importorskip("torch")
    c = shape[axis]
    x, gamma, beta = rand(shape, seed=31), rand((c,), seed=32), rand((c,), seed=33)
    moved = f64(np.moveaxis(x, axis, 1))
    out = torch.nn.functional.instance_norm(moved, weight=f64(gamma), bias=f64(beta), eps=1e-5)
    expected = np.moveaxis(np32(out), 1, axis)
    check_op("nn.instance_norm", [x, gamma, beta], expected, {"axis": axis}, atol=1e-5)


# ---------------------------------------------------------------- dropout, pad, flatten


@pytest.mark.parametrize("shape,rate", [((2, 3), 0.5), ((4,), 0.0), ((1, 2, 3), 0.9)])
def test_dropout_is_identity_in_inference(shape, rate):
    x = rand(shape, seed=34)
    check_op("nn.dropout", [x], (x, np.ones(shape, "float32")), {"rate": rate})


def loop_pad(x, pad_width, mode, value=0):
    """Pad by mapping every output index to a source index (no np.pad)."""
    out_shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pad_width))
    out = np.full(out_shape, value, x.dtype)
    for idx in itertools.product(*map(range, out_shape)):
        src = []
        for i, n, (b, _) in zip(idx, x.shape, pad_width):
            j = i - b
            if mode == "edge":
                j = min(max(j, 0), n - 1)
            elif mode == "reflect":
                while not 0 <= j < n:
                    j = -j if j < 0 else 2 * (n - 1) - j
            src.append(j)
        if all(0 <= j < n for j, n in zip(src, x.shape)):
            out[idx] = x[tuple(src)]
    return out


@pytest.mark.parametrize("shape,pad_width,mode,dtype", [
    ((2, 3), ((1, 2), (0, 3)), "constant", "float32"),
    ((2, 3, 4), ((0, 0), (2, 1), (1, 1)), "constant", "int32"),
    ((3, 4), ((2, 2), (1, 3)), "edge", "float32"),
    ((1, 2, 4, 5), ((0, 0), (0, 0), (3, 2), (1, 4)), "reflect", "float32"),
    ((5,), ((4, 1),), "reflect", "int64"),
    ((2, 3), ((0, 0), (0, 0)), "edge", "float64"),
])
def test_pad(shape, pad_width, mode, dtype):
    x = rand(shape, dtype, seed=35)
    value = np.asarray(7, dtype)
    expected = loop_pad(x, pad_width, mode, value)
    check_op("nn.pad", [x, value], expected, {"pad_width": pad_width, "pad_mode": mode})


@pytest.mark.parametrize("shape", [(2, 3, 4), (3,), (1, 2, 3, 4, 5), (4, 1)])
def test_batch_flatten(shape):
    x = rand(shape, seed=36)
    n = shape[0]
    expected = np.array([x[i].ravel() for i in range(n)]).reshape(n, -1)
    check_op("nn.batch_flatten", [x], expected)


# ---------------------------------------------------------------- bad input: one per op

def f32(shape):
    return np.zeros(shape, "float32")


BAD = [
    ("nn.dense", [f32((2, 3)), f32((4, 5))], {}, "in-features mismatch"),
    ("nn.contrib_dense_pack", [f32((2, 3)), f32((2, 5, 16))], {}, "in-features mismatch"),
    ("nn.matmul", [f32((2, 3)), f32((4, 5))], {}, "reduction mismatch"),
    ("nn.batch_matmul", [f32((2, 3, 4)), f32((3, 5, 4))], {}, "batch sizes differ"),
    ("nn.bias_add", [f32((2, 3, 4)), f32((4,))], {}, "bias must have shape (3,)"),
    ("nn.relu", [(f32((2,)), f32((3,)))], {}, "must be a tensor"),
    ("nn.leaky_relu", [np.zeros((2, 3), "int32")], {}, "float"),
    ("nn.prelu", [f32((2, 3, 4)), f32((4,))], {}, "alpha must have shape (3,)"),
    ("nn.softmax", [f32((2, 3))], {"axis": 2}, "out of range"),
    ("nn.log_softmax", [f32((2, 3))], {"axis": -3}, "out of range"),
    ("nn.conv2d", [f32((1, 4, 8, 8)), f32((6, 3, 3, 3))], {}, "input channels mismatch"),
    ("nn.conv2d", [f32((1, 4, 8, 8)), f32((6, 2, 3, 3))], {"groups": 2, "channels": 4},
     "channels=4"),
    ("nn.conv2d", [f32((1, 4, 8, 8)), f32((5, 2, 3, 3))], {"groups": 2}, "groups=2"),
    ("nn.conv2d", [f32((1, 3, 2, 8)), f32((4, 3, 3, 3))], {}, "larger than the padded input"),
    ("nn.conv2d", [f32((1, 3, 8)), f32((4, 3, 3, 3))], {}, "rank 4"),
    ("nn.conv2d", [f32((1, 3, 8, 8)), f32((4, 3, 3, 3))], {"kernel_size": 5}, "kernel_size"),
    ("nn.conv1d", [f32((1, 4, 8)), f32((6, 3, 3))], {}, "input channels mismatch"),
    ("nn.max_pool2d", [f32((1, 3, 2, 2))], {"pool_size": 3}, "larger than the padded input"),
    ("nn.avg_pool2d", [f32((3, 8, 8))], {"pool_size": 2}, "rank 4"),
    ("nn.global_avg_pool2d", [f32((3, 8, 8))], {}, "rank 4"),
    ("nn.global_max_pool2d", [f32((3, 8))], {}, "rank 4"),
    ("nn.adaptive_avg_pool2d", [f32((8, 8))], {"output_size": 2}, "rank 4"),
    ("nn.batch_norm", [f32((2, 3, 4)), f32((3,)), f32((3,)), f32((4,)), f32((3,))], {},
     "moving_mean must have shape (3,)", (0, 3)),
    ("nn.layer_norm", [f32((2, 3, 4)), f32((3,)), f32((4,))], {}, "gamma must have shape (4,)",
     (0, 1)),
    ("nn.group_norm", [f32((2, 6, 4)), f32((6,)), f32((6,))], {"num_groups": 4},
     "num_groups=4", (0,)),
    ("nn.instance_norm", [f32((2, 6, 4)), f32((6,)), f32((4,))], {}, "beta must have shape",
     (0, 2)),
    ("nn.dropout", [np.zeros((2, 3), "int32")], {}, "float"),
    ("nn.pad", [f32((2, 3)), np.float32(0)], {"pad_width": ((1, 1),)}, "rank 2", (0,)),
    ("nn.pad", [f32((2, 3)), np.int32(0)], {"pad_width": ((1, 1), (0, 0))}, "dtype mismatch"),
    ("nn.pad", [f32((2, 3)), np.float32(0)], {"pad_width": ((2, 0), (0, 0)),
                                              "pad_mode": "reflect"}, "reflect", (0,)),
    ("nn.batch_flatten", [np.float32(1)], {}, "rank >= 1"),
    ("nn.lstm_sequence", [f32((6, 2, 81)), f32((2, 20)), f32((2, 20)), f32((2, 20, 4, 16))], {},
     "4 * hidden = 80", (0, 1)),
    ("nn.gru_sequence", [f32((6, 2, 60)), f32((2, 20)), f32((2, 20, 3, 16)), f32((20,))], {},
     "bias must be", (3,)),
    ("nn.rnn_sequence", [f32((6, 2, 20)), f32((2, 20)), f32((1, 20, 1, 65))], {},
     "between 1 and 64", (2,)),
]


@pytest.mark.parametrize("case", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input(case):
    expect_type_error(*case)


def test_every_nn_op_has_a_bad_input_test():
    from test_nn_spatial import BAD as SPATIAL_BAD  # the spatial ops' own table

    ops = {n for n in relayir.op.list_ops() if n.startswith("nn.")}
    assert ops == {b[0] for b in BAD + SPATIAL_BAD if b[0].startswith("nn.")}


def test_dense_message_names_the_in_features_not_the_units():
    msg = expect_type_error("nn.dense", [f32((2, 3)), f32((4, 5))])
    a, b = TensorType((2, 3)), TensorType((4, 5))
    assert msg.startswith(f"nn.dense: in-features mismatch: data is {a} but weight is {b} "
                          "(the last dim of data, 3, must equal the weight's in-features, its "
                          "dim 1: 5")
    assert "units mismatch" not in msg
    # a wrong units attribute is the units message
    msg = expect_type_error("nn.dense", [f32((2, 3)), f32((4, 3))], {"units": 5}, shown=(1,))
    assert "units=5 but weight gives 4 output units" in msg


@pytest.mark.parametrize("op_name,attrs", [
    ("nn.conv2d", {"padding": (1, 2, 3)}),
    ("nn.conv2d", {"strides": 0}),
    ("nn.conv2d", {"data_layout": "NCHWc"}),
    ("nn.conv2d", {"data_layout": "NHWC", "kernel_layout": "OIW"}),
    ("nn.max_pool2d", {"pool_size": (1, 2, 3)}),
    ("nn.pad", {"pad_mode": "wrap"}),
    ("nn.dropout", {"rate": 1.5}),
    ("nn.dense", {"out_dtype": "float128"}),
    ("nn.conv2d", {"padding_mode": 1}),
])
def test_bad_attrs(op_name, attrs):
    with pytest.raises(OpError, match=op_name):
        x = Var("x", TensorType((1, 1, 1, 1)))
        call(op_name, [x] * get_op(op_name).num_inputs, **attrs)


# ---------------------------------------------------------------- dynamic dimensions

n, h = SymbolicDim("n"), SymbolicDim("h")
T = TensorType
DYNAMIC = [
    ("nn.dense", [T((Any(), 3)), T((4, 3))], {}, T((Any(), 4))),
    ("nn.dense", [T((n, Any())), T((4, 3))], {}, T((n, 4))),
    ("nn.dense", [T((2, 3)), T((Any(), 3))], {"units": 5}, T((2, 5))),
    ("nn.matmul", [T((n, 3)), T((3, Any()))], {}, T((n, Any()))),
    ("nn.batch_matmul", [T((Any(), 2, 3)), T((5, 4, 3))], {}, T((5, 2, 4))),
    ("nn.batch_matmul", [T((n, 2, 3)), T((n, 4, 3))], {}, T((n, 2, 4))),
    ("nn.bias_add", [T((n, Any(), 4)), T((3,))], {}, T((n, Any(), 4))),
    ("nn.softmax", [T((n, 5))], {}, T((n, 5))),
    ("nn.conv2d", [T((n, 3, h, 32)), T((8, 3, 3, 3))], {"padding": 1, "strides": 2},
     T((n, 8, floordiv(h + 1, 2), 16))),
    ("nn.conv2d", [T((1, Any(), 9, 9)), T((8, 3, 3, 3))], {}, T((1, 8, 7, 7))),
    ("nn.conv2d", [T((1, 9, 9, 3)), T((Any(), Any(), 3, 8))],
     {"data_layout": "NHWC", "kernel_layout": "HWIO"}, T((1, Any(), Any(), 8))),
    ("nn.conv1d", [T((n, 3, Any())), T((4, 3, 3))], {}, T((n, 4, Any()))),
    ("nn.max_pool2d", [T((n, 3, h, 8))], {"pool_size": 2, "strides": 2},
     T((n, 3, floordiv(h, 2), 4))),
    ("nn.global_avg_pool2d", [T((n, 3, h, Any()))], {}, T((n, 3, 1, 1))),
    ("nn.adaptive_avg_pool2d", [T((n, 3, h, 9))], {"output_size": (None, 2)},
     T((n, 3, h, 2))),
    ("nn.batch_norm", [T((n, Any(), 4)), *[T((3,))] * 4], {},
     TupleType((T((n, Any(), 4)), T((3,)), T((3,))))),
    ("nn.layer_norm", [T((n, 4)), T((Any(),)), T((4,))], {}, T((n, 4))),
    ("nn.group_norm", [T((n, Any(), 5)), T((6,)), T((6,))], {"num_groups": 3},
     T((n, Any(), 5))),
    ("nn.dropout", [T((n, 3))], {}, TupleType((T((n, 3)), T((n, 3))))),
    ("nn.pad", [T((n, h, 3)), T(())], {"pad_width": ((0, 0), (1, 1), (2, 0))},
     T((n, h + 2, 5))),
    ("nn.batch_flatten", [T((2, n, 3))], {}, T((2, 3 * n))),
    ("nn.batch_flatten", [T((n, 2, 3))], {}, T((n, 6))),
    ("nn.batch_flatten", [T((2, Any(), 3))], {}, T((2, Any()))),
]


@pytest.mark.parametrize("op_name,arg_types,attrs,expected", DYNAMIC)
def test_dynamic_dims(op_name, arg_types, attrs, expected):
    assert infer_types(op_name, arg_types, attrs) == expected


def test_dynamic_dims_still_catch_static_mismatch():
    with pytest.raises(relayir.TypeInferenceError, match="input channels mismatch"):
        infer_types("nn.conv2d", [T((Any(), 4, h, h)), T((8, 3, 3, 3))])


# ---------------------------------------------------------------- constructors and attrs


def test_constructors_build_calls_with_normalised_attrs():
    x = relayir.var("x", shape=(1, 8, 8, 3))
    w = relayir.var("w", shape=(3, 3, 3, 4))
    c = nn.conv2d(x, w, strides=2, padding=1, data_layout="NHWC")
    assert isinstance(c, Call) and c.op is get_op("nn.conv2d")
    assert c.attrs.strides == (2, 2) and c.attrs.padding == (1, 1, 1, 1)
    assert c.attrs.kernel_layout == "HWIO" and c.attrs.out_layout == ""
    assert nn.conv2d(x, w, padding=(1, 2)).attrs.padding == (1, 2, 1, 2)
    assert nn.conv2d(x, w).attrs.kernel_layout == "OIHW"
    assert nn.conv1d(x, w, data_layout="NWC").attrs.kernel_layout == "WIO"
    assert nn.max_pool2d(x, 3).attrs.pool_size == (3, 3)
    assert nn.adaptive_avg_pool2d(x, 7).attrs.output_size == (7, 7)
    # equal attrs are equal and hashable whatever spelling built them
    a = nn.conv2d(x, w, strides=[1, 1], out_layout="NCHW").attrs
    b = nn.conv2d(x, w, kernel_layout="OIHW").attrs
    assert a == b and hash(a) == hash(b)
    pad_attrs = nn.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]).attrs
    assert pad_attrs.pad_width == ((0, 0), (1, 1), (1, 1), (0, 0))
    hash(pad_attrs)
    for f in dataclasses.fields(c.attrs):
        assert f.default is not dataclasses.MISSING
    # the implied kernel layout is left out of the text; an explicit other one is kept
    assert "kernel_layout" not in dict(c.attrs.non_default_items())
    assert dict(nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OIHW").attrs
                .non_default_items())["kernel_layout"] == "OIHW"
    assert "kernel_layout" not in dict(nn.conv1d(x, w).attrs.non_default_items())


def test_dropout_constructor_returns_field_zero():
    x = relayir.var("x", shape=(2, 3))
    d = nn.dropout(x, 0.2)
    assert isinstance(d, TupleGetItem) and d.index == 0
    raw = nn.dropout_raw(x, 0.2)
    assert isinstance(raw, Call) and raw.attrs.rate == 0.2


def test_pad_constructor_value_dtype():
    xi = relayir.var("x", shape=(2, 3), dtype="int32")
    p = nn.pad(xi, ((1, 1), (0, 0)), 5)
    assert isinstance(p.args[1], Constant) and p.args[1].data.dtype == np.int32
    untyped = Var("y")
    assert nn.pad(untyped, ((1, 1),), 0.5).args[1].data.dtype == np.float32
    value = relayir.const(2, "int32")
    assert nn.pad(xi, ((1, 1), (0, 0)), value).args[1] is value


def test_small_network_runs_through_the_interpreter():
    x = relayir.var("x", shape=(1, 3, 9, 9))
    w = relayir.var("w", shape=(4, 3, 3, 3))
    b = relayir.var("b", shape=(4,))
    stats = [relayir.var(f"s{i}", shape=(4,)) for i in range(4)]
    fc = relayir.var("fc", shape=(5, 64))
    y = nn.relu(nn.batch_norm(nn.bias_add(nn.conv2d(x, w, padding=1), b), *stats)[0])
    y = nn.dense(nn.batch_flatten(nn.max_pool2d(y, 3, 2)), fc)
    y = nn.softmax(nn.dropout(y))
    mod = IRModule.from_expr(Function([x, w, b, *stats, fc], y))
    args = [rand((1, 3, 9, 9), seed=1), rand((4, 3, 3, 3), seed=2), rand((4,), seed=3),
            rand((4,), seed=4), rand((4,), seed=5), rand((4,), seed=6),
            rand((4,), seed=7, low=0.5), rand((5, 64), seed=8)]
    out = np.asarray(relayir.create_executor("debug", mod=mod).evaluate()(*args))
    assert out.shape == (1, 5) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-5)


PATTERNS = {
    "nn.dense": OpPattern.OUT_ELEMWISE_FUSABLE, "nn.matmul": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.contrib_dense_pack": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.batch_matmul": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.conv2d": OpPattern.OUT_ELEMWISE_FUSABLE, "nn.conv1d": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.relu": OpPattern.ELEMWISE, "nn.leaky_relu": OpPattern.ELEMWISE,
    "nn.bias_add": OpPattern.BROADCAST, "nn.prelu": OpPattern.BROADCAST,
    "nn.softmax": OpPattern.OPAQUE, "nn.log_softmax": OpPattern.OPAQUE,
    "nn.batch_norm": OpPattern.OPAQUE, "nn.layer_norm": OpPattern.OPAQUE,
    "nn.group_norm": OpPattern.OPAQUE, "nn.instance_norm": OpPattern.OPAQUE,
    "nn.dropout": OpPattern.OPAQUE,
    "nn.max_pool2d": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.avg_pool2d": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.global_avg_pool2d": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.global_max_pool2d": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.adaptive_avg_pool2d": OpPattern.OUT_ELEMWISE_FUSABLE,
    "nn.pad": OpPattern.INJECTIVE, "nn.batch_flatten": OpPattern.INJECTIVE,
    "nn.lstm_sequence": OpPattern.OPAQUE, "nn.gru_sequence": OpPattern.OPAQUE,
    "nn.rnn_sequence": OpPattern.OPAQUE,
}


def test_patterns():
    from test_nn_spatial import PATTERNS as SPATIAL  # the spatial ops' own table

    patterns = {**PATTERNS, **{n: p for n, p in SPATIAL.items() if n.startswith("nn.")}}
    assert {n: get_op(n).pattern for n in patterns} == patterns
    assert sorted(patterns) == [n for n in relayir.op.list_ops() if n.startswith("nn.")]
    assert set(nn.__all__) == {n[3:] for n in patterns} | {"dropout_raw"}
