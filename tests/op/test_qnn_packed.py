"""``qnn.contrib_dense_packed`` / ``qnn.contrib_conv2d_packed`` (uint8 x int8 packed for
``vpdpbusd`` → int32) and ``qnn.contrib_depthwise_conv2d``: the packing, the references,
and the C routines on every instruction-set path they have (AVX512-VNNI, AVX-VNNI, AVX2,
scalar), each exact."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.codegen import default_flags, has_compiler
from relayir.op.nn.conv import conv_nc
from relayir.op.qnn.packed import (
    contrib_conv2d_packed,
    contrib_dense_packed,
    contrib_depthwise_conv2d,
    conv_kernel_columns,
    pack_weight,
    unpack_weight,
)

SHAPES = [(7, 37, 70), (64, 64, 576), (1, 10, 8), (13, 16, 3), (2, 48, 4)]


def _case(m, n, k, seed=0):
    r = np.random.default_rng(seed)
    w = r.integers(-128, 128, (n, k)).astype("int8")
    x = r.integers(0, 256, (m, k)).astype("uint8")
    v = relay.var("x", shape=(m, k), dtype="uint8")
    mod = relay.IRModule.from_expr(relay.Function(
        [v], contrib_dense_packed(v, relay.const(pack_weight(w)), n)))
    return mod, x, x.astype(np.int64) @ w.T.astype(np.int64)


CONVS = [  # (data shape, out channels, kernel, strides, padding, dilation)
    ((2, 5, 9, 7), 6, (3, 2), (2, 1), (1, 0, 2, 1), (1, 2)),
    ((1, 16, 8, 8), 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((1, 3, 5, 5), 17, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),
]


def _conv_case(shape, o, k, s, p, d, seed=0):
    r = np.random.default_rng(seed)
    x = r.integers(0, 256, shape).astype("uint8")
    w = r.integers(-128, 128, (o, shape[1], *k)).astype("int8")
    v = relay.var("x", shape=shape, dtype="uint8")
    packed = relay.const(pack_weight(conv_kernel_columns(w)))
    mod = relay.IRModule.from_expr(relay.Function([v], contrib_conv2d_packed(
        v, packed, o, k, strides=s, padding=p, dilation=d, pad_value=9)))
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])),
                constant_values=9)
    return mod, x, conv_nc(xp, w.astype(np.int64), s, (0, 0, 0, 0), d, 1)


DEPTHWISE = [  # (data shape, kernel, strides, padding, dilation)
    ((2, 20, 9, 7), (3, 3), (2, 1), (1, 0, 2, 1), (1, 2)),
    ((1, 16, 6, 6), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((1, 3, 5, 8), (5, 2), (1, 2), (2, 0, 2, 1), (1, 1)),
]


def _depthwise_case(shape, k, s, p, d, seed=0):
    r = np.random.default_rng(seed)
    x = r.integers(0, 256, shape).astype("uint8")
    w = r.integers(-128, 128, (shape[1], 1, *k)).astype("int8")
    v = relay.var("x", shape=shape, dtype="uint8")
    mod = relay.IRModule.from_expr(relay.Function([v], contrib_depthwise_conv2d(
        v, relay.const(w), shape[1], k, strides=s, padding=p, dilation=d, pad_value=200)))
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])),
                constant_values=200)
    return mod, x, conv_nc(xp, w.astype(np.int64), s, (0, 0, 0, 0), d, shape[1])


def test_packing_round_trips_and_pads_with_zeros():
    w = np.arange(-60, 60, dtype=np.int8).reshape(20, 6)
    p = pack_weight(w)
    assert p.shape == (2, 2, 16, 4) and p.dtype == np.int8
    assert np.array_equal(unpack_weight(p, 20, 6), w)
    assert not p[1, :, 4:].any() and not p[:, 1, :, 2:].any()
    assert p[0, 0, 1].tolist() == w[1, :4].tolist()  # column 1's first group of 4 k


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_the_reference_is_the_integer_product(m, n, k):
    mod, x, want = _case(m, n, k)
    got = relay.create_executor("debug", mod=mod, target="numpy").evaluate()(x)
    assert got.dtype == np.int32 and np.array_equal(got, want)


@pytest.mark.parametrize("conv", CONVS)
def test_the_conv_reference_is_the_padded_integer_convolution(conv):
    mod, x, want = _conv_case(*conv)
    got = relay.create_executor("debug", mod=mod, target="numpy").evaluate()(x)
    assert got.dtype == np.int32 and np.array_equal(got, want)




# each path's flags: what the compiler's macros then select in codegen/routines_int8.py
PATHS = {"native": [], "avx-vnni": ["-mno-avx512vnni"], "avx2": ["-mno-avx512vnni", "-mno-avxvnni"],
         "scalar": ["-DRL_SCALAR_MICROKERNELS"]}


@pytest.mark.skipif(not has_compiler(), reason="no C compiler on this machine")
@pytest.mark.parametrize("path", sorted(PATHS))
def test_the_c_routine_is_exact_on_every_isa_path(path, monkeypatch):
    monkeypatch.setenv("RELAYIR_CFLAGS", " ".join(default_flags() + PATHS[path]))
    for m, n, k in SHAPES:
        mod, x, want = _case(m, n, k, seed=m + n + k)
        got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
        assert np.array_equal(got, want), (path, m, n, k)
    for conv in CONVS:
        mod, x, want = _conv_case(*conv, seed=1)
        got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
        assert np.array_equal(got, want), (path, conv)
    for conv in DEPTHWISE:
        mod, x, want = _depthwise_case(*conv, seed=2)
        assert np.array_equal(relay.create_executor("debug", mod=mod, target="numpy")
                              .evaluate()(x), want)
        got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
        assert np.array_equal(got, want), (path, conv)
