"""The C printer: golden text of small kernels, literals, names, and a compile check."""

import shutil
import textwrap

import numpy as np
import pytest

import relayir as relay
from relayir.codegen.c_printer import HEADER, render, render_module
from relayir.ir.module import IRModule
from relayir.te import expr as E
from relayir.tir.lower import lower_primitive
from relayir.tir.stmt import Buffer, BufferStore, For, Kernel
from relayir.transform import InferType


def _prim(params, body):
    f = relay.Function(params, body).with_attr("Primitive", 1)
    return InferType()(IRModule.from_expr(f))["main"]


def _add_relu():
    x, b = relay.var("x", shape=(2, 3)), relay.var("b", shape=(3,))
    return lower_primitive(_prim([x, b], relay.nn.relu(x + b)), "fused_add_relu")


def _norm():
    y = relay.var("y", shape=(4, 10))
    body = relay.sqrt(relay.sum(y * y, axis=1)) * relay.const(2.0)
    return lower_primitive(_prim([y], body), "fused_norm")


GOLDEN_ADD_RELU = """\
int32_t fused_add_relu(void* const* args, const int64_t* dims) {
  const float* restrict p0 = (const float*)args[0];
  const float* restrict p1 = (const float*)args[1];
  float* restrict out0 = (float*)args[2];
  (void)dims;
  for (int64_t i0 = 0; i0 < 2; ++i0) {
    #pragma omp simd
    for (int64_t i1 = 0; i1 < 3; ++i1) {
      out0[i0 * 3 + i1] = rl_max_f32(p0[i0 * 3 + i1] + p1[i1], 0.0f);
    }
  }
  return 0;
}
"""

GOLDEN_NORM = """\
int32_t fused_norm(void* const* args, const int64_t* dims) {
  const float* restrict p0 = (const float*)args[0];
  float* restrict out0 = (float*)args[1];
  (void)dims;
  for (int64_t i0 = 0; i0 < 4; ++i0) {
    double acc = 0.0;
    #pragma omp simd reduction(+:acc)
    for (int64_t r0 = 0; r0 < 10; ++r0) {
      const float _c0 = p0[i0 * 10 + r0];
      acc = acc + (double)(_c0 * _c0);
    }
    out0[i0] = sqrtf((float)acc) * 2.0f;
  }
  return 0;
}
"""


def test_golden_elementwise_kernel():
    assert render(_add_relu()) == GOLDEN_ADD_RELU


def test_golden_reduction_with_fused_epilogue():
    assert render(_norm()) == GOLDEN_NORM


def test_module_has_the_header_once():
    text = render_module([_add_relu(), _norm()])
    assert text.startswith(HEADER)
    assert text.count("#include <math.h>") == 1
    assert "int32_t fused_add_relu(" in text and "int32_t fused_norm(" in text


def _store_kernel(value: E.Expr, dtype: str) -> Kernel:
    out = Buffer("out0", dtype, (1,), "output")
    i = E.Var("i")
    return Kernel("lit", [], [out], For(i, E.IntImm(1), BufferStore(out, i, value)))


@pytest.mark.parametrize("value,dtype,text", [
    (E.FloatImm(float("inf")), "float32", "INFINITY"),
    (E.FloatImm(-float("inf"), "float64"), "float64", "-HUGE_VAL"),
    (E.FloatImm(float("nan")), "float32", "NAN"),
    (E.FloatImm(0.1), "float32", "0.1f"),
    (E.FloatImm(3.0, "float64"), "float64", "3.0"),
    (E.IntImm(-(1 << 63), "int64"), "int64", "(-9223372036854775807ll - 1)"),
    (E.IntImm(1 << 40, "int64"), "int64", "1099511627776ll"),
    (E.IntImm(7, "uint64"), "uint64", "7ull"),
])
def test_literals(value, dtype, text):
    assert f"out0[i] = {text};" in render(_store_kernel(value, dtype))


def test_narrow_integer_arithmetic_wraps():
    a = E.Var("a", "int8")
    src = render(_store_kernel(a + a, "int8"))
    assert "(int8_t)(a + a)" in src


def test_user_names_never_reach_the_c_text_raw():
    x = relay.var("x", relay.TensorType(("for", 3), "float32"))
    kernel = lower_primitive(_prim([x], relay.exp(x)), "k")
    src = kernel.source
    assert "const int64_t v_for = dims[0];" in src
    assert " for = " not in src


def test_float16_kernels_are_guarded():
    x = relay.var("x", shape=(4,), dtype="float16")
    src = lower_primitive(_prim([x], relay.exp(x)), "h").source
    assert "#ifndef RL_HAVE_F16" in src and "rl_f16" in src


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="needs a C compiler")
def test_golden_kernels_compile_and_run():
    from relayir.codegen.native import compile_kernels

    fns = compile_kernels([_add_relu(), _norm()])
    x = np.arange(6, dtype="float32").reshape(2, 3) - 3
    b = np.array([1, -1, 0.5], "float32")
    (out,) = fns["fused_add_relu"](x, b)
    np.testing.assert_array_equal(out, np.maximum(x + b, 0))
    y = np.linspace(-1, 1, 40, dtype="float32").reshape(4, 10)
    (norm,) = fns["fused_norm"](y)
    np.testing.assert_allclose(norm, 2 * np.sqrt((y * y).sum(1)), rtol=1e-6)


def test_header_helpers_are_static_inline():
    for line in textwrap.dedent(HEADER).splitlines():
        if line.startswith("static") and "(" in line:
            assert line.startswith("static inline ")
