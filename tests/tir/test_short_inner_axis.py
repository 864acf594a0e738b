"""An elementwise kernel whose innermost axis is a few elements long (an NCHW image
written NHWC, 3 channels) vectorises the loop around it, the short axis's stores written
out one by one: 16 pixels a vector instead of a 3-lane loop."""

from __future__ import annotations

import numpy as np

import relayir as relay
from relayir.codegen.c_printer import render
from relayir.ir.module import IRModule
from relayir.tir.lower import lower_primitive
from relayir.transform import InferType


def _nhwc_kernel(channels: int, pixels: int = 32):
    x = relay.var("x", shape=(1, channels, 4, pixels // 4))
    body = relay.layout_transform(relay.nn.relu(x), "NCHW", "NHWC")
    f = relay.Function([x], body).with_attr("Primitive", 1)
    return IRModule.from_expr(relay.Function([x], body)), InferType()(
        IRModule.from_expr(f))["main"]


def test_the_pixel_loop_is_vectorised_and_the_channels_written_out():
    _, prim = _nhwc_kernel(3)
    text = render(lower_primitive(prim, "fused_relu_layout_transform"))
    assert text.count("#pragma omp simd\n") == 1 and text.count("for (") == 1
    assert all(f"out0[i1_i2 * 3{k}] = " in text for k in ("", " + 1", " + 2"))


def test_a_long_inner_axis_stays_the_vectorised_one():
    _, prim = _nhwc_kernel(16)
    text = render(lower_primitive(prim, "fused_relu_layout_transform"))
    assert text.count("for (") == 2 and text.count("#pragma omp simd") == 1


def test_the_kernel_computes_the_transform():
    mod, _ = _nhwc_kernel(3, pixels=64)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 16)).astype("float32")
    got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
    assert np.array_equal(got, np.maximum(x, 0).transpose(0, 2, 3, 1))


def test_selects_between_slices_come_out_right():
    """gcc 12.2 vectorised this nest wrongly as an outer loop (elements 24-27 came out 0;
    ONNX's GRU gate reordering): the stores are written out instead."""
    x = relay.var("x", shape=(18, 2))
    parts = relay.split(x, 3, axis=0)
    body = relay.concatenate([parts[1], parts[0], parts[2]], axis=0)
    mod = IRModule.from_expr(relay.Function([x], body))
    a = np.arange(36, dtype="float32").reshape(18, 2)
    got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(a)
    assert np.array_equal(got, np.concatenate([a[6:12], a[:6], a[12:]]))


def test_stores_that_share_a_subexpression_compile_and_compute():
    # both written-out stores read y[i]: the printer hoists it once per store, each under
    # its own name (fuzz seed 30676: one name twice, a C compile error)
    x = relay.var("x", shape=(64, 2))
    y = relay.var("y", shape=(64, 1))
    body = relay.divide(relay.subtract(x, y), relay.sqrt(relay.add(y, relay.const(1.0))))
    mod = IRModule.from_expr(relay.Function([x, y], body))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 2)).astype("float32")
    b = rng.random((64, 1)).astype("float32")
    got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(a, b)
    np.testing.assert_allclose(got, (a - b) / np.sqrt(b + 1), rtol=1e-6)
