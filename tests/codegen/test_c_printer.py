"""The C printer: golden text of small kernels, literals, names, and a compile check."""

import shutil
import sys
import textwrap

import numpy as np
import pytest

import relayir as relay
from relayir.codegen.c_printer import HEADER, RENDER, render, render_module
from relayir.ir.module import IRModule
from relayir.te import expr as E
from relayir.tir.lower import lower_primitive
from relayir.tir.names import C_RESERVED
from relayir.tir.stmt import Buffer, BufferLoad, BufferStore, For, PrimFunc
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


def _store_kernel(value: E.Expr, dtype: str) -> PrimFunc:
    out = Buffer("out0", dtype, (1,), "output")
    i = E.Var("i")
    return PrimFunc("lit", [], [out], For(i, E.IntImm(1), BufferStore(out, i, value)))


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


def _expression_cases():
    a, b = E.Var("a", "int32"), E.Var("b", "int32")
    x, y = E.Var("x", "float32"), E.Var("y", "float32")
    c, u = E.Var("c", "int8"), E.Var("u", "uint8")
    return [
        (E.TruncDiv(a, E.IntImm(4, "int32")), "int32", "a / 4"),
        (E.TruncDiv(a, b), "int32", "rl_div_i32(a, b)"),
        (E.TruncMod(a, E.IntImm(4, "int32")), "int32", "a % 4"),
        (E.TruncMod(a, b), "int32", "rl_mod_i32(a, b)"),
        (E.FloorDiv(a, E.IntImm(4, "int32")), "int32", "rl_floordiv_i32(a, 4)"),
        (E.FloorMod(a, b), "int32", "rl_floormod_i32(a, b)"),
        (E.TruncDiv(c, E.IntImm(3, "int8")), "int8", "(int8_t)(c / 3)"),
        (E.FloorMod(x, y), "float32", "rl_floormod_f32(x, y)"),
        (E.FloorDiv(x, y), "float32", "floorf(x / y)"),
        (E.TruncMod(x, y), "float32", "fmodf(x, y)"),
        (E.TruncDiv(x, y), "float32", "x / y"),
        (E.Min(x, y), "float32", "rl_min_f32(x, y)"),
        (E.Max(a, b), "int32", "rl_max_i32(a, b)"),
        (E.Sub(x, E.Sub(y, x)), "float32", "x - (y - x)"),
        (E.Mul(E.Add(x, y), x), "float32", "(x + y) * x"),
        (E.Select(E.LT(x, y), x, E.Select(E.GE(x, y), y, x)), "float32",
         "x < y ? x : x >= y ? y : x"),
        (E.Cast("bool", x), "bool", "(uint8_t)(x != 0)"),
        (E.Cast("int32", x), "int32", "rl_cast_f32_i32(x)"),
        (E.Cast("float16", x), "float16", "(rl_f16)((float)(rl_f16)x)"),
        (E.Cast("int64", a), "int64", "(int64_t)a"),
        (E.Not(E.And(E.EQ(a, b), E.Or(E.NE(a, b), E.LE(a, b)))), "bool",
         "(uint8_t)(!(a == b && (a != b || a <= b)))"),
        (E.BitXor(E.BitAnd(a, b), E.ShiftLeft(a, E.ShiftRight(b, E.IntImm(1, "int32")))),
         "int32", "a & b ^ a << (b >> 1)"),
        (E.BitOr(u, u), "uint8", "(uint8_t)(u | u)"),
        (E.Add(c, c), "int8", "(int8_t)(c + c)"),
        (E.Call("exp", [x], "float32"), "float32", "rl_expf(x)"),
        (E.Call("pow", [a, b], "int32"), "int32", "rl_pow_i32(a, b)"),
        (E.Call("isnan", [x], "bool"), "bool", "(uint8_t)((isnan(x) != 0))"),
        (E.Call("sqrt", [E.Cast("float64", x)], "float64"), "float64", "sqrt((double)x)"),
        (E.Sub(E.FloatImm(-1.5), x), "float32", "-1.5f - x"),
    ]


@pytest.mark.parametrize("value,dtype,text", _expression_cases())
def test_expression_text(value, dtype, text):
    # the texts the printer gave before its table: kernels' cache keys hash this text
    assert f"out0[i] = {text};" in render(_store_kernel(value, dtype))


def _node_classes(cls=E.Expr):
    for sub in cls.__subclasses__():
        yield from _node_classes(sub) if sub.__subclasses__() else (sub,)


def test_every_scalar_node_class_has_one_render_entry():
    # reads and reductions never reach C: lowering turns them into loads and loops
    printable = set(_node_classes()) - {E.TensorRead, E.Reduce}
    assert BufferLoad in printable
    assert printable <= set(RENDER), printable - set(RENDER)


def test_a_deep_expression_prints_without_recursion():
    x = E.Var("x", "float32")
    e = x
    for k in range(20_000):
        e = E.Max(e, x) if k % 2 else E.Sub(E.FloatImm(0.0), e)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # CPython's default
    try:
        src = render(_store_kernel(e, "float32"))
    finally:
        sys.setrecursionlimit(old)
    assert src.count("rl_max_f32(") == 10_000 and src.count("0.0f - ") == 10_000


def test_narrow_integer_arithmetic_wraps():
    a = E.Var("a", "int8")
    src = render(_store_kernel(a + a, "int8"))
    assert "(int8_t)(a + a)" in src


def test_user_names_never_reach_the_c_text_raw():
    x = relay.var("x", relay.TensorType(("for", 3), "float32"))
    kernel = lower_primitive(_prim([x], relay.exp(x)), "k")
    src = render(kernel)
    assert "const int64_t v_for = dims[0];" in src
    assert " for = " not in src


def _loop_kernel(var: E.Var) -> PrimFunc:
    out = Buffer("out0", "float32", (1,), "output")
    return PrimFunc("lit", [], [out],
                  For(var, E.IntImm(1), BufferStore(out, var, E.Cast("float32", var))))


@pytest.mark.parametrize("hint", [*sorted(C_RESERVED), "omp_lock", "__x", "rl_max_f32"])
def test_reserved_names_never_name_a_local(hint):
    # the same list keeps kernel names off these (tir.names.c_identifier)
    assert f"int64_t v_{hint} = 0;" in render(_loop_kernel(E.Var(hint)))


def test_float16_kernels_are_guarded():
    x = relay.var("x", shape=(4,), dtype="float16")
    src = render(lower_primitive(_prim([x], relay.exp(x)), "h"))
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
