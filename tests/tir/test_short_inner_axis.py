"""An elementwise kernel whose innermost axis is a few elements long (an NCHW image
written NHWC, 3 channels) vectorises the loop around it and unrolls the short one:
16 pixels a vector instead of a 3-lane loop."""

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


def test_the_pixel_loop_is_vectorised_and_the_channels_unrolled():
    _, prim = _nhwc_kernel(3)
    text = render(lower_primitive(prim, "fused_relu_layout_transform"))
    assert "#pragma omp simd\n" in text and "#pragma GCC unroll 3\n" in text
    assert text.index("#pragma omp simd") < text.index("#pragma GCC unroll 3")


def test_a_long_inner_axis_stays_the_vectorised_one():
    _, prim = _nhwc_kernel(16)
    text = render(lower_primitive(prim, "fused_relu_layout_transform"))
    assert "GCC unroll 16" not in text and text.count("#pragma omp simd") == 1


def test_the_kernel_computes_the_transform():
    mod, _ = _nhwc_kernel(3, pixels=64)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 16)).astype("float32")
    got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
    assert np.array_equal(got, np.maximum(x, 0).transpose(0, 2, 3, 1))
