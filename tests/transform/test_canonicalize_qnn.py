"""``CanonicalizeQNN``: each ``qnn.*`` op becomes integer / float ops, and the lowered
program equals the reference interpreter bit for bit on every executor (cpu target)."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.codegen import has_compiler
from relayir.ir.structural import assert_structural_equal

qnn = relay.qnn.op




needs_cc = pytest.mark.skipif(not has_compiler(), reason="no C compiler on this machine")


def lower(text: str) -> relay.IRModule:
    mod = relay.transform.InferType()(relay.parse(text))
    return relay.transform.CanonicalizeQNN()(mod)


HEAD = '#[version = "0.0.5"]\n'


def test_quantize_divides_clamps_rounds_and_adds_the_zero_point():
    got = lower(HEAD + 'def @main(%x: Tensor[(2, 3), float32]) { qnn.quantize(%x, 0.5f, 3) }')
    want = relay.transform.InferType()(relay.parse(HEAD + """
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = divide(%x, 0.5f);
  %1 = clip(%0, a_min=-131.0, a_max=124.0);
  %2 = cast(round(%1), dtype="int32");
  cast(add(%2, 3), dtype="int8")
}"""))
    assert_structural_equal(got, want)


def test_requantize_multiplies_by_the_float32_ratio_of_the_scales():
    got = lower(HEAD + """def @main(%a: Tensor[(4), int32]) {
  qnn.requantize(%a, 0.25f, 0, 0.5f, -1, out_dtype="uint8") }""")
    want = relay.transform.InferType()(relay.parse(HEAD + """
def @main(%a: Tensor[(4), int32]) {
  %0 = multiply(cast(%a, dtype="float32"), divide(0.25f, 0.5f));
  %1 = clip(%0, a_min=1.0, a_max=256.0);
  cast(add(cast(round(%1), dtype="int32"), -1), dtype="uint8")
}"""))
    assert_structural_equal(got, want)


# ---------------------------------------------------------------- every op, every executor

R = np.random.default_rng(0)


def _ints(dtype, shape):
    lo, hi = (0, 256) if dtype == "uint8" else (-128, 128)
    return R.integers(lo, hi, shape).astype(dtype)


def _f32(*shape):
    return R.uniform(0.002, 0.02, shape).astype("float32")


def _conv_program():
    x = relay.var("x", shape=(1, 8, 9, 9), dtype="uint8")
    w = relay.const(_ints("int8", (16, 8, 3, 3)))
    ws = _f32(16)
    acc = qnn.conv2d(x, w, 128, R.integers(-3, 3, 16).astype("int32"), 0.02, ws,
                     padding=(1, 1), strides=(2, 1))
    acc = acc + relay.const(R.integers(-3000, 3000, (1, 16, 1, 1)).astype("int32"))
    y = qnn.requantize(acc, relay.const(np.float32(0.02)) * relay.const(ws), 0, 0.3, 100,
                       axis=1, out_dtype="uint8")
    return [x], relay.Tuple([acc, y])


def _conv_packed_program():
    """int8 data, a zero weight zero point: the packed vpdpbusd convolution."""
    x = relay.var("x", shape=(2, 5, 9, 7), dtype="int8")
    w = relay.const(_ints("int8", (6, 5, 3, 2)))
    acc = qnn.conv2d(x, w, -3, 0, 0.02, 0.01, padding=(1, 0, 2, 1), strides=(2, 1),
                     dilation=(1, 2))
    return [x], relay.Tuple([acc, qnn.requantize(acc, 0.0002, 0, 0.05, 4, out_dtype="int8")])


def _depthwise_program():
    """A convolution with a group per channel: the depthwise routine."""
    x = relay.var("x", shape=(1, 24, 10, 9), dtype="uint8")
    w = relay.const(_ints("int8", (24, 1, 3, 3)))
    acc = qnn.conv2d(x, w, 99, 0, 0.02, 0.01, padding=(1, 1), strides=(2, 1), groups=24)
    return [x], relay.Tuple([acc, qnn.requantize(acc, 0.0002, 0, 0.05, 4, out_dtype="uint8")])


def _dense_uint8_weight_program():
    """uint8 weights with a zero point: shifted to int8, the row sums correct them."""
    x = relay.var("x", shape=(2, 3, 21), dtype="uint8")
    return [x], qnn.dense(x, relay.const(_ints("uint8", (9, 21))), 17, 7, 0.1, 0.1)


def _dense_runtime_zero_point_program():
    """A data zero point known only at run time (DynamicQuantizeLinear's)."""
    x = relay.var("x", shape=(4, 30), dtype="int8")
    z = relay.var("z", shape=(), dtype="int32")
    return [x, z], qnn.dense(x, relay.const(_ints("int8", (11, 30))), z, 0, 0.1, 0.1)


def _dense_program():
    x = relay.var("x", shape=(3, 40), dtype="int8")
    w = relay.const(_ints("int8", (10, 40)))
    d = qnn.dense(x, w, -5, 0, 0.1, _f32(10))
    return [x], relay.Tuple([d, qnn.requantize(d, 0.01, 0, 0.7, 3, out_dtype="int8")])


def _batch_matmul_program():
    a = relay.var("a", shape=(2, 5, 16), dtype="uint8")
    b = relay.var("b", shape=(2, 7, 16), dtype="int8")
    return [a, b], qnn.batch_matmul(a, b, 11, -2, 0.1, 0.1)


def _quantize_program():
    x = relay.var("x", shape=(2, 3, 4), dtype="float32")
    q = qnn.quantize(x, _f32(3) * 10, R.integers(-5, 5, 3).astype("int32"), axis=1)
    return [x], relay.Tuple([q, qnn.dequantize(q, 0.05, -4), qnn.quantize(x, 0.01, 3, axis=1,
                                                                          out_dtype="uint8")])


def _binary_program():
    a = relay.var("a", shape=(2, 3, 4, 4), dtype="uint8")
    b = relay.var("b", shape=(2, 3, 4, 4), dtype="uint8")
    args = (0.1, 10, 0.07, 3, 0.2, 5)
    return [a, b], relay.Tuple([
        qnn.add(a, b, *args), qnn.mul(a, b, *args),
        qnn.concatenate([a, b], [0.1, 0.2], [10, 5], 0.2, 5, axis=1),
        qnn.avg_pool2d(a, 0.1, 10, 0.2, 5, pool_size=(3, 3), strides=(1, 1),
                       padding=(1, 1))])


PROGRAMS = {"conv2d": _conv_program, "dense": _dense_program,
            "conv2d_packed": _conv_packed_program, "depthwise": _depthwise_program,
            "dense_uint8_weight": _dense_uint8_weight_program,
            "dense_runtime_zero_point": _dense_runtime_zero_point_program,
            "batch_matmul": _batch_matmul_program, "quantize": _quantize_program,
            "binary": _binary_program}


def _inputs(params):
    out = []
    for p in params:
        t = p.type_annotation
        shape = tuple(int(d) for d in t.shape)
        out.append(R.standard_normal(shape).astype("float32") * 2 if t.dtype == "float32"
                   else _ints(t.dtype, shape))
    return out


@needs_cc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("executor", ["graph", "vm", "aot"])
def test_lowered_programs_equal_the_references_bit_for_bit(name, executor):
    params, body = PROGRAMS[name]()
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    inputs = _inputs(params)
    want = relay.create_executor("debug", mod=mod, target="numpy").evaluate()(*inputs)
    got = relay.create_executor(executor, mod=mod, target="cpu").evaluate()(*inputs)
    want, got = (list(v) if isinstance(v, (list, tuple)) else [v] for v in (want, got))
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w), f"{np.count_nonzero(g != w)} values differ"


def _optimized(program) -> str:
    params, body = program()
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    with relay.transform.PassContext(opt_level=3):
        return relay.transform.optimize(relay.transform.InferType()(mod), fuse=False).astext()


def test_a_per_channel_weight_zero_point_keeps_the_generic_int32_conv():
    text = _optimized(_conv_program)
    assert "qnn." not in text and "nn.conv2d" in text


def test_constant_weights_become_packed_8bit_products():
    text = _optimized(_conv_packed_program)
    assert "qnn.contrib_conv2d_packed" in text and "nn.conv2d" not in text
    text = _optimized(_depthwise_program)
    assert "qnn.contrib_depthwise_conv2d" in text and "nn.conv2d" not in text
    for program in (_dense_uint8_weight_program, _dense_runtime_zero_point_program):
        text = _optimized(program)
        assert "qnn.contrib_dense_packed" in text and "nn.dense" not in text
