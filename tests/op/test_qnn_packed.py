"""``qnn.contrib_dense_packed`` / ``qnn.contrib_conv2d_packed`` (uint8 x int8 packed for
``vpdpbusd`` → int32) and ``qnn.contrib_depthwise_conv2d``: the packing, the references,
and the C routines on every instruction-set path they have (AVX512-VNNI, AVX-VNNI, AVX2,
scalar) and in both layouts (NCHW, NHWC), each exact."""

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
from relayir.op.qnn.packed_requant import (
    contrib_conv2d_packed_requant,
    contrib_depthwise_conv2d_requant,
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
    # NHWC reads these in place (C a multiple of 4, windows inside the image)
    ((2, 24, 7, 9), 33, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1)),
    ((1, 8, 9, 8), 16, (3, 3), (1, 2), (0, 0, 0, 0), (2, 1)),
    ((1, 12, 6, 6), 20, (3, 3), (1, 1), (0, 0, 1, 1), (1, 1)),  # padded below / right only
]
LAYOUTS = ("NCHW", "NHWC")


def _nhwc(a: np.ndarray, layout: str) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)) if layout == "NHWC" else a


def _conv_case(shape, o, k, s, p, d, seed=0, layout="NCHW"):
    r = np.random.default_rng(seed)
    x = r.integers(0, 256, shape).astype("uint8")
    w = r.integers(-128, 128, (o, shape[1], *k)).astype("int8")
    v = relay.var("x", shape=_nhwc(x, layout).shape, dtype="uint8")
    packed = relay.const(pack_weight(conv_kernel_columns(w)))
    mod = relay.IRModule.from_expr(relay.Function([v], contrib_conv2d_packed(
        v, packed, o, k, strides=s, padding=p, dilation=d, pad_value=9, layout=layout)))
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])),
                constant_values=9)
    want = conv_nc(xp, w.astype(np.int64), s, (0, 0, 0, 0), d, 1)
    return mod, _nhwc(x, layout), _nhwc(want, layout)


DEPTHWISE = [  # (data shape, kernel, strides, padding, dilation)
    ((2, 20, 9, 7), (3, 3), (2, 1), (1, 0, 2, 1), (1, 2)),
    ((1, 16, 6, 6), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((1, 3, 5, 8), (5, 2), (1, 2), (2, 0, 2, 1), (1, 1)),
    ((1, 40, 12, 21), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),  # MobileNet's strided layer
    ((2, 33, 4, 3), (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),
    ((1, 37, 9, 13), (3, 3), (1, 1), (2, 1, 2, 1), (2, 1)),  # rows 2 apart, a 5-channel tail
]


def _depthwise_case(shape, k, s, p, d, seed=0, layout="NCHW"):
    r = np.random.default_rng(seed)
    x = r.integers(0, 256, shape).astype("uint8")
    w = r.integers(-128, 128, (shape[1], 1, *k)).astype("int8")
    v = relay.var("x", shape=_nhwc(x, layout).shape, dtype="uint8")
    mod = relay.IRModule.from_expr(relay.Function([v], contrib_depthwise_conv2d(
        v, relay.const(w), shape[1], k, strides=s, padding=p, dilation=d, pad_value=200,
        layout=layout)))
    xp = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])),
                constant_values=200)
    want = conv_nc(xp, w.astype(np.int64), s, (0, 0, 0, 0), d, shape[1])
    return mod, _nhwc(x, layout), _nhwc(want, layout)


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


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("conv", CONVS)
def test_the_conv_reference_is_the_padded_integer_convolution(conv, layout):
    mod, x, want = _conv_case(*conv, layout=layout)
    got = relay.create_executor("debug", mod=mod, target="numpy").evaluate()(x)
    assert got.dtype == np.int32 and np.array_equal(got, want)


def test_a_layout_other_than_nchw_or_nhwc_is_refused():
    v = relay.var("x", shape=(1, 4, 4, 4), dtype="uint8")
    with pytest.raises(Exception, match="layout must be one of NCHW, NHWC, found 'NCHW4c'"):
        contrib_depthwise_conv2d(v, relay.const(np.ones((4, 1, 1, 1), "int8")), 4, (1, 1),
                                 layout="NCHW4c")




# each path's flags: what the compiler's macros then select in codegen/routines_int8.py
PATHS = {"native": [], "avx512-no-vbmi": ["-mno-avx512vbmi"], "avx-vnni": ["-mno-avx512vnni"],
         "avx2": ["-mno-avx512vnni", "-mno-avxvnni"],
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
        for layout in LAYOUTS:
            mod, x, want = _conv_case(*conv, seed=1, layout=layout)
            got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
            assert np.array_equal(got, want), (path, conv, layout)
    for conv in DEPTHWISE:
        for layout in LAYOUTS:
            mod, x, want = _depthwise_case(*conv, seed=2, layout=layout)
            assert np.array_equal(relay.create_executor("debug", mod=mod, target="numpy")
                                  .evaluate()(x), want)
            got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
            assert np.array_equal(got, want), (path, conv, layout)


REQUANT = {"zero_point": 100, "clip_min": -100, "clip_max": 120}


def _requant_case(conv, depthwise: bool, seed: int):
    """The NHWC convolution requantized as it stores, and the requantize done after it
    in numpy (per channel bias and scale; one NaN and one infinite scale)."""
    mod, x, acc = (_depthwise_case(*conv, seed=seed, layout="NHWC") if depthwise
                   else _conv_case(*conv, seed=seed, layout="NHWC"))
    call = mod["main"].body
    channels = acc.shape[-1]
    r = np.random.default_rng(seed)
    bias = r.integers(-5000, 5000, channels).astype("int32")
    scale = (r.uniform(-0.01, 0.01, channels) * (1 + (np.arange(channels) % 3))).astype("float32")
    scale[0] = np.nan
    if channels > 1:
        scale[1] = np.inf
    op = contrib_depthwise_conv2d_requant if depthwise else contrib_conv2d_packed_requant
    v = call.args[0]
    fused = op(v, call.args[1], relay.const(bias), relay.const(scale),
               **dict(call.attrs.items()), **REQUANT)
    mod = relay.IRModule.from_expr(relay.Function([v], fused))
    with np.errstate(invalid="ignore", over="ignore"):
        f = (acc.astype(np.int64) + bias).astype(np.float32) * scale
    f = np.rint(np.clip(f, REQUANT["clip_min"], REQUANT["clip_max"]))
    f = np.where(np.isnan(f), 0, f)
    return mod, x, (f.astype(np.int64) + REQUANT["zero_point"]).astype(np.uint8)


@pytest.mark.skipif(not has_compiler(), reason="no C compiler on this machine")
@pytest.mark.parametrize("path", sorted(PATHS))
def test_the_requantizing_routines_are_exact_on_every_isa_path(path, monkeypatch):
    monkeypatch.setenv("RELAYIR_CFLAGS", " ".join(default_flags() + PATHS[path]))
    cases = [(c, False) for c in CONVS] + [(c, True) for c in DEPTHWISE]
    for seed, (conv, depthwise) in enumerate(cases):
        mod, x, want = _requant_case(conv, depthwise, seed)
        ref = relay.create_executor("debug", mod=mod, target="numpy").evaluate()(x)
        assert np.array_equal(ref, want), (conv, "reference")
        got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
        assert got.dtype == np.uint8 and np.array_equal(got, want), (path, conv)


def test_the_requantizing_forms_are_nhwc_and_name_a_bad_bias():
    v = relay.var("x", shape=(1, 4, 4, 4), dtype="uint8")
    w = relay.const(np.ones((4, 1, 1, 1), "int8"))
    bias, scale = relay.const(np.zeros(4, "int32")), relay.const(np.ones(4, "float32"))
    with pytest.raises(relay.Error, match="compute in NHWC"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([v], (
            contrib_depthwise_conv2d_requant(v, w, bias, scale, channels=4,
                                             kernel_size=(1, 1))))))
    with pytest.raises(relay.Error, match=r"bias must be int32\[4\]"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([v], (
            contrib_depthwise_conv2d_requant(v, w, relay.const(np.zeros(3, "int32")), scale,
                                             channels=4, kernel_size=(1, 1),
                                             layout="NHWC")))))
    with pytest.raises(Exception, match=r"must lie in \[0, 255\]"):
        contrib_depthwise_conv2d_requant(v, w, bias, scale, channels=4, kernel_size=(1, 1),
                                         layout="NHWC", zero_point=10, clip_min=-20)


@pytest.mark.skipif(not has_compiler(), reason="no C compiler on this machine")
@pytest.mark.parametrize("requant", [False, True])
@pytest.mark.parametrize("depthwise", [False, True])
def test_an_empty_batch_gives_an_empty_output(depthwise, requant):
    r = np.random.default_rng(5)
    v = relay.var("x", shape=(0, 5, 5, 8), dtype="uint8")
    w = r.integers(-128, 128, (8, 1 if depthwise else 8, 3, 3)).astype("int8")
    weight = relay.const(w if depthwise else pack_weight(conv_kernel_columns(w)))
    attrs = dict(channels=8, kernel_size=(3, 3), padding=(1, 1, 1, 1), layout="NHWC")
    extra = [relay.const(np.zeros(8, "int32")), relay.const(np.ones(8, "float32"))]
    op = {(False, False): contrib_conv2d_packed, (True, False): contrib_depthwise_conv2d,
          (False, True): contrib_conv2d_packed_requant,
          (True, True): contrib_depthwise_conv2d_requant}[depthwise, requant]
    y = op(v, weight, *extra, **attrs) if requant else op(v, weight, **attrs)
    mod = relay.IRModule.from_expr(relay.Function([v], y))
    x = np.zeros((0, 5, 5, 8), "uint8")
    got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
    want = relay.create_executor("debug", mod=mod, target="numpy").evaluate()(x)
    assert got.shape == want.shape == (0, 5, 5, 8) and got.dtype == want.dtype
