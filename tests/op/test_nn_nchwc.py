"""The blocked convolutions (``nn.contrib_conv2d_NCHWc``, ``nn.contrib_depthwise_conv2d_
NCHWc``), Winograd (``nn.contrib_conv2d_winograd_*``) and pools in ``NCHW[x]c``: their
numpy references and generated kernels against the ``NCHW`` ops.

Blocked arrays are made with explicit reshapes and transposes (``to_blocked``), not with
``layout_transform``'s helper. Winograd's error is checked against the bound its module
documents (``WINOGRAD_ERROR``), relative to ``Σ|x·w|`` of each output's window.
"""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.errors import OpError
from relayir.ir.expr import Var
from relayir.ir.op import call
from relayir.ir.types import TensorType
from relayir.op.nn.conv import conv_nc
from relayir.op.nn.winograd import WINOGRAD_ERROR, weight_transform, winograd_matrices
from relayir.testing.op_check import check_op, rand, run_op


def to_blocked(x: np.ndarray, block: int) -> np.ndarray:
    """``NCHW`` → ``NCHW[block]c``."""
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2))


def from_blocked(x: np.ndarray) -> np.ndarray:
    n, cb, h, w, b = x.shape
    return x.transpose(0, 1, 4, 2, 3).reshape(n, cb * b, h, w)


def kernel_blocked(w: np.ndarray, x: int, y: int) -> np.ndarray:
    """``OIHW`` → ``OIHW[x]i[y]o``: ``(O/y, I/x, kh, kw, x, y)``."""
    o, i, kh, kw = w.shape
    return np.ascontiguousarray(
        w.reshape(o // y, y, i // x, x, kh, kw).transpose(0, 2, 4, 5, 3, 1))


def nchw_conv(x, w, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    return conv_nc(x.astype("float64"), w.astype("float64"), strides, padding, dilation, groups)


def compiled(op_name: str, inputs: list, attrs: dict) -> np.ndarray:
    """The op alone, built for the cpu target (its weight a constant)."""
    data = relay.var("data", shape=inputs[0].shape)
    body = call(op_name, [data, *(relay.const(a) for a in inputs[1:])], **attrs)
    lib = relay.build(relay.IRModule.from_expr(relay.Function([data], body)), target="cpu")
    m = relay.graph_executor.GraphModule(lib)
    m.set_input("data", inputs[0])
    m.run()
    return m.get_output(0)


# ---------------------------------------------------------------- direct and grouped

# (channels, out channels, size, kernel, x, y, attrs)
DIRECT = [
    (16, 32, (7, 9), (3, 3), 16, 16, {"padding": (1, 1, 1, 1)}),
    (3, 16, (11, 10), (7, 7), 3, 16, {"strides": (2, 2), "padding": (3, 3, 3, 3)}),  # RGB
    (24, 24, (6, 6), (1, 1), 8, 8, {}),  # 1×1: a GEMM over the pixels
    (8, 40, (9, 7), (3, 2), 4, 8, {"strides": (2, 1), "padding": (1, 0, 2, 1),
                                  "dilation": (2, 1)}),
    (5, 10, (6, 6), (3, 3), 5, 5, {"padding": (1, 1, 1, 1)}),  # odd counts: block 5
    (16, 32, (6, 5), (3, 3), 4, 8, {"groups": 2, "padding": (1, 1, 1, 1)}),
    (12, 6, (5, 5), (1, 1), 3, 3, {"groups": 2, "strides": (2, 2)}),
]


@pytest.mark.parametrize("case", DIRECT, ids=[f"c{c[0]}-o{c[1]}-k{c[3][0]}x{c[3][1]}-{i}"
                                              for i, c in enumerate(DIRECT)])
def test_conv2d_nchwc_matches_nchw_conv(case):
    c, o, (h, w_), (kh, kw), x, y, attrs = case
    g = attrs.get("groups", 1)
    data = rand((1, c, h, w_), seed=1)
    weight = rand((o, c // g, kh, kw), seed=2)
    expected = nchw_conv(data, weight, attrs.get("strides", (1, 1)),
                         attrs.get("padding", (0, 0, 0, 0)), attrs.get("dilation", (1, 1)), g)
    inputs = [to_blocked(data, x), kernel_blocked(weight, x, y)]
    layouts = {"data_layout": f"NCHW{x}c", "kernel_layout": f"OIHW{x}i{y}o",
               "out_layout": f"NCHW{y}c"}
    want = to_blocked(expected, y).astype("float32")
    check_op("nn.contrib_conv2d_NCHWc", inputs, want, {**attrs, **layouts}, rtol=1e-5,
             atol=1e-5)
    got = compiled("nn.contrib_conv2d_NCHWc", inputs, {**attrs, **layouts})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


DEPTHWISE = [
    (16, (7, 8), (3, 3), 16, {"padding": (1, 1, 1, 1)}),
    (24, (9, 9), (3, 3), 8, {"strides": (2, 2), "padding": (1, 1, 1, 1)}),
    (12, (6, 7), (5, 3), 4, {"padding": (2, 1, 2, 1), "dilation": (1, 2)}),
]


@pytest.mark.parametrize("case", DEPTHWISE, ids=[f"c{c[0]}-{i}" for i, c in enumerate(DEPTHWISE)])
def test_depthwise_nchwc_matches_grouped_conv(case):
    c, (h, w_), (kh, kw), x, attrs = case
    data, weight = rand((1, c, h, w_), seed=3), rand((c, 1, kh, kw), seed=4)
    expected = nchw_conv(data, weight, attrs.get("strides", (1, 1)), attrs["padding"],
                         attrs.get("dilation", (1, 1)), c)
    inputs = [to_blocked(data, x), kernel_blocked(weight, 1, x)]
    full = {**attrs, "groups": c, "data_layout": f"NCHW{x}c", "kernel_layout": f"OIHW1i{x}o",
            "out_layout": f"NCHW{x}c"}
    want = to_blocked(expected, x).astype("float32")
    check_op("nn.contrib_depthwise_conv2d_NCHWc", inputs, want, full, rtol=1e-5, atol=1e-5)
    got = compiled("nn.contrib_depthwise_conv2d_NCHWc", inputs, full)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- Winograd


@pytest.mark.parametrize("m", [2, 4, 6])
def test_winograd_matrices_compute_the_correlation_exactly(m):
    at, g, bt = winograd_matrices(m, 3)
    rng = np.random.default_rng(m)
    d, k = rng.standard_normal(m + 2), rng.standard_normal(3)
    want = np.array([k @ d[i:i + 3] for i in range(m)])
    np.testing.assert_allclose(at @ ((g @ k) * (bt @ d)), want, rtol=1e-12, atol=1e-12)


def test_winograd_f4_matrices_are_lavins():
    at, g, bt = winograd_matrices(4, 3)
    assert bt[0].tolist() == [4, 0, -5, 0, 1, 0] and bt[5].tolist() == [0, 4, 0, -5, 0, 1]
    assert at[3].tolist() == [0, 1, -1, 8, -8, 1]
    np.testing.assert_allclose(g[1], [-1 / 6] * 3)


def test_weight_transform_op():
    w = rand((4, 3, 3, 3), seed=5)
    _, g, _ = winograd_matrices(4, 3)
    want = np.stack([[g @ w[o, i] @ g.T for i in range(3)] for o in range(4)])  # o i a b
    want = want.transpose(2, 3, 0, 1).astype("float32")
    check_op("nn.contrib_conv2d_winograd_weight_transform", [w], want, {"tile_size": 4},
             rtol=1e-6, atol=1e-6)
    data = relay.var("w", shape=w.shape)  # not a constant: the compiled kernel runs
    body = relay.nn.contrib_conv2d_winograd_weight_transform(data, 4)
    lib = relay.build(relay.IRModule.from_expr(relay.Function([data], body)), target="cpu")
    m = relay.graph_executor.GraphModule(lib)
    m.set_input("w", w)
    m.run()
    np.testing.assert_allclose(m.get_output(0), want, rtol=1e-5, atol=1e-6)


def winograd_inputs(data, weight, m, x, y):
    u = weight_transform(weight, m).astype("float32")  # (α, α, O, I)
    alpha, _, o, i = u.shape
    ub = u.reshape(alpha, alpha, o // y, y, i // x, x).transpose(0, 1, 2, 4, 5, 3)
    return [to_blocked(data, x), np.ascontiguousarray(ub), kernel_blocked(weight, x, y)]


# (m, channels, out channels, size, x, y, padding)
WINOGRAD = [
    (4, 16, 16, (8, 8), 16, 16, (1, 1, 1, 1)),
    (4, 64, 32, (9, 7), 16, 16, (1, 1, 1, 1)),  # partial tiles at the bottom and right
    (4, 256, 16, (6, 6), 16, 16, (1, 1, 1, 1)),
    (2, 32, 16, (7, 6), 8, 16, (0, 1, 2, 0)),
    (6, 16, 8, (10, 9), 16, 8, (1, 1, 1, 1)),
    (4, 3, 16, (10, 10), 3, 16, (1, 1, 1, 1)),
]


@pytest.mark.parametrize("case", WINOGRAD, ids=[f"F{c[0]}-c{c[1]}-{i}"
                                                for i, c in enumerate(WINOGRAD)])
def test_winograd_within_its_error_bound(case):
    m, c, o, (h, w_), x, y, pads = case
    rng = np.random.default_rng(c + m)
    data = rng.uniform(-1, 1, (1, c, h, w_)).astype("float32")
    weight = rng.uniform(-1, 1, (o, c, 3, 3)).astype("float32")
    exact = nchw_conv(data, weight, padding=pads)
    window = nchw_conv(np.abs(data), np.abs(weight), padding=pads)  # Σ|x·w| per output
    inputs = winograd_inputs(data, weight, m, x, y)
    attrs = {"tile_size": m, "padding": pads, "data_layout": f"NCHW{x}c",
             "kernel_layout": f"HWOI{x}i{y}o", "out_layout": f"NCHW{y}c"}
    # the reference runs in float64, on U rounded to float32
    check_op("nn.contrib_conv2d_winograd_NCHWc", inputs, to_blocked(exact, y).astype("float32"),
             attrs, rtol=1e-4, atol=1e-4)
    got = from_blocked(compiled("nn.contrib_conv2d_winograd_NCHWc", inputs, attrs))
    assert got.shape == exact.shape
    error = np.max(np.abs(got - exact) / window)
    assert error <= WINOGRAD_ERROR[m], error


@pytest.mark.parametrize("m", [2, 4, 6])
def test_winograd_non_finite_values_give_the_direct_convolutions_answer(m):
    """An Inf / NaN input pixel or weight: the transforms mix a whole tile (inf - inf), so
    outputs that came out non-finite are the direct sum over their window; NaN, ±Inf and
    finite positions all equal the direct convolution's (the fuzzer's finding)."""
    rng = np.random.default_rng(m)
    data = rng.uniform(-1, 1, (1, 16, 11, 9)).astype("float32")
    data[0, 3, 5, 4], data[0, 7, 0, 0], data[0, 9, 10, 8] = np.inf, -np.inf, np.nan
    weight = rng.uniform(-1, 1, (16, 16, 3, 3)).astype("float32")
    weight[5, 2, 1, 1] = np.inf  # output channel 5: inf or nan wherever channel 2 is read
    weight[6] = 0.0  # an inf input times a zero tap is NaN in the direct sum too
    with np.errstate(all="ignore"):
        exact = nchw_conv(data, weight, padding=(1, 1, 1, 1)).astype("float32")
    attrs = {"tile_size": m, "padding": (1, 1, 1, 1), "data_layout": "NCHW8c",
             "kernel_layout": "HWOI8i8o", "out_layout": "NCHW8c"}
    with np.errstate(all="ignore"):  # the transform of an Inf weight holds NaN
        inputs = winograd_inputs(data, weight, m, 8, 8)
        ref = from_blocked(run_op("nn.contrib_conv2d_winograd_NCHWc", inputs, attrs)[0])
        got = from_blocked(compiled("nn.contrib_conv2d_winograd_NCHWc", inputs, attrs))
    for out in (ref, got):
        np.testing.assert_array_equal(np.isnan(out), np.isnan(exact))
        np.testing.assert_array_equal(np.isposinf(out), np.isposinf(exact))
        np.testing.assert_array_equal(np.isneginf(out), np.isneginf(exact))
        finite = np.isfinite(exact)
        np.testing.assert_allclose(out[finite], exact[finite], rtol=1e-4, atol=1e-4)


def test_winograd_rejects_what_it_cannot_compute():
    x = Var("x", TensorType((1, 1, 8, 8, 16)))
    with pytest.raises(OpError, match="square"):
        call("nn.contrib_conv2d_winograd_NCHWc", [x, x, x], kernel_size=(3, 1))
    with pytest.raises(OpError, match="HWOI"):
        call("nn.contrib_conv2d_winograd_NCHWc", [x, x, x], kernel_layout="OIHW16i16o")

    with pytest.raises(OpError, match="NCHW"):
        call("nn.contrib_conv2d_NCHWc", [x, x], data_layout="NHWC")


# ---------------------------------------------------------------- pools in NCHW[x]c


POOLS = [
    ("nn.max_pool2d", {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)}),
    ("nn.avg_pool2d", {"pool_size": (2, 2), "strides": (2, 2), "count_include_pad": True}),
    ("nn.avg_pool2d", {"pool_size": (3, 3), "padding": (1, 1, 1, 1), "ceil_mode": True,
                       "strides": (2, 2)}),
    ("nn.global_avg_pool2d", {}),
    ("nn.global_max_pool2d", {}),
    ("nn.adaptive_avg_pool2d", {"output_size": (2, 3)}),
]


@pytest.mark.parametrize("name,attrs", POOLS, ids=[f"{p[0]}-{i}" for i, p in enumerate(POOLS)])
def test_pools_in_blocked_layout_match_nchw(name, attrs):
    data = rand((1, 8, 7, 6), seed=6)
    want = to_blocked(np.asarray(run_op(name, [data], attrs)[0]), 4)  # the NCHW op
    full = {**attrs, "layout": "NCHW4c"}
    check_op(name, [to_blocked(data, 4)], want, full, rtol=1e-6, atol=1e-6)
    x = relay.var("x", shape=(1, 2, 7, 6, 4))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], call(name, [x], **full))),
                      target="cpu")
    m = relay.graph_executor.GraphModule(lib)
    m.set_input("x", to_blocked(data, 4))
    m.run()
    np.testing.assert_allclose(m.get_output(0), want, rtol=1e-5, atol=1e-6)


def test_pool_keeps_a_blocked_layout():
    x = Var("x", TensorType((1, 2, 4, 4, 4)))
    with pytest.raises(OpError, match="keeps it"):
        call("nn.max_pool2d", [x], layout="NCHW4c", out_layout="NCHW")
    with pytest.raises(OpError, match="layout"):
        call("nn.max_pool2d", [x], layout="NHWC4c")
