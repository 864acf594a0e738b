"""Loop IR → C99 source. Pure functions, no I/O.

``render(kernel)`` prints one kernel (its constant tables and its function);
``render_module(kernels)`` puts kernels in one translation unit after ``HEADER`` (the
includes and the ``static inline`` helpers they share). Every kernel has the ABI::

    int32_t NAME(void* const* args, const int64_t* dims)

``args`` points to the inputs then the outputs (contiguous, row-major; no output may
alias another argument: pointers are ``restrict``), ``dims`` holds the values of the
symbolic dimensions in ``kernel.dim_vars`` order (NULL when there are none). It returns
0, or -1 when a temporary could not be allocated.

C semantics follow the numpy references: integer division and remainder go through
helpers that give 0 for a zero divisor (numpy's result) and wrap ``INT_MIN / -1``
instead of trapping; float ``max``/``min`` follow ``np.maximum``/``np.minimum`` (a NaN
operand wins, also in reductions; the second operand on a tie such as ``-0.0`` vs
``0.0``); float to integer casts truncate, give 0 for NaN and saturate out-of-range
values (numpy leaves those undefined; its reference pins the same rule); float16 is
stored as ``_Float16`` and computed in float; bool is stored as one byte (0/1); narrow
integer arithmetic is cast back to its type after each operation, so it wraps like
numpy's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..te import expr as E
from ..te.visit import children, post_order
from ..tir import microkernel as MK
from ..tir import stmt as S
from ..tir.names import C_MATH_FUNCTIONS, c_identifier
from .microkernels import microkernel_sources
from .openmp_env import team_guard_source
from .routines import routine_sources

_CTYPE = {
    "float16": "float",
    "float32": "float",
    "float64": "double",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "uint8_t",
}
_STORAGE = {**_CTYPE, "float16": "rl_f16"}
_SUFFIX = {
    "float16": "f32",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "u8",
}
_NARROW = {"int8", "int16", "uint8", "uint16"}
_MATH = C_MATH_FUNCTIONS  # libm functions an ``E.Call`` may name

# precedence: higher binds tighter
_PREC = {
    "?:": 3,
    "||": 4,
    "&&": 5,
    "|": 6,
    "^": 7,
    "&": 8,
    "==": 9,
    "!=": 9,
    "<": 10,
    "<=": 10,
    ">": 10,
    ">=": 10,
    "<<": 11,
    ">>": 11,
    "+": 12,
    "-": 12,
    "*": 13,
    "/": 13,
    "%": 13,
}
_CALL = 16
_UNARY = 14

def _helpers() -> str:
    types = [
        ("f32", "float"),
        ("f64", "double"),
        ("i8", "int8_t"),
        ("i16", "int16_t"),
        ("i32", "int32_t"),
        ("i64", "int64_t"),
        ("u8", "uint8_t"),
        ("u16", "uint16_t"),
        ("u32", "uint32_t"),
        ("u64", "uint64_t"),
    ]
    out = []
    for s, t in types[:2]:  # numpy's rules: a NaN operand wins, b on a tie (-0.0 vs 0.0)
        for op, cmp, ident in (("min", "<", "INFINITY"), ("max", ">", "-INFINITY")):
            flip = ">=" if op == "min" else "<="
            # maxps/minps (NaN in b) then a blend (NaN in a): loops stay vectorised; a
            # constant b that is not NaN (relu, clip) needs one compare and one blend
            out.append(f"static inline {t} rl_{op}_{s}({t} a, {t} b) {{ "
                       f"if (__builtin_constant_p(b) && b == b) return a {flip} b ? b : a; "
                       f"{t} m = a {cmp} b ? a : b; return a != a ? a : m; }}")
            # an accumulator update ``acc = max(acc, x)``: the same NaN rule with the
            # compare-and-blend chain through ``acc`` one instruction shorter (a tie
            # keeps ``acc``: reductions leave the sign of a zero result open)
            out.append(f"static inline {t} rl_{op}r_{s}({t} acc, {t} x) "
                       f"{{ {t} m = x {cmp} acc ? x : acc; return x != x ? x : m; }}")
            # OpenMP's own max/min reductions merge lanes with maxps/minps, which drop
            # NaN: float reductions name these instead (``_omp_reduction``)
            out.append(f"#pragma omp declare reduction(rl_{op}_{s} : {t} : omp_out = "
                       f"rl_{op}_{s}(omp_out, omp_in)) initializer(omp_priv = {ident})")
    for s, t in types[2:]:
        out.append(f"static inline {t} rl_min_{s}({t} a, {t} b) {{ return a < b ? a : b; }}")
        out.append(f"static inline {t} rl_max_{s}({t} a, {t} b) {{ return a > b ? a : b; }}")
    for s, t in types[2:]:
        bits = s[1:]
        u = f"uint{bits}_t" if bits != "8" and bits != "16" else "uint32_t"
        if s.startswith("u"):
            out.append(
                f"static inline {t} rl_div_{s}({t} a, {t} b) "
                f"{{ return b == 0 ? 0 : ({t})(a / b); }}"
            )
            out.append(
                f"static inline {t} rl_mod_{s}({t} a, {t} b) "
                f"{{ return b == 0 ? 0 : ({t})(a % b); }}"
            )
            out.append(
                f"static inline {t} rl_floordiv_{s}({t} a, {t} b) {{ return rl_div_{s}(a, b); }}"
            )
            out.append(
                f"static inline {t} rl_floormod_{s}({t} a, {t} b) {{ return rl_mod_{s}(a, b); }}"
            )
            neg = "return 0;"
        else:
            out.append(
                f"static inline {t} rl_div_{s}({t} a, {t} b) {{ return b == 0 ? 0 : "
                f"(b == -1 ? ({t})(0u - ({u})a) : ({t})(a / b)); }}"
            )
            out.append(
                f"static inline {t} rl_mod_{s}({t} a, {t} b) "
                f"{{ return (b == 0 || b == -1) ? 0 : ({t})(a % b); }}"
            )
            out.append(
                f"static inline {t} rl_floordiv_{s}({t} a, {t} b) {{ {t} q = "
                f"rl_div_{s}(a, b); return (b != 0 && ({t})(q * b) != a && "
                f"((a < 0) != (b < 0))) ? ({t})(q - 1) : q; }}"
            )
            out.append(
                f"static inline {t} rl_floormod_{s}({t} a, {t} b) {{ {t} r = "
                f"rl_mod_{s}(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? "
                f"({t})(r + b) : r; }}"
            )
            neg = "return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);"
        out.append(
            f"static inline {t} rl_pow_{s}({t} a, {t} b) {{ if (b < 0) {{ {neg} }} "
            f"{u} r = 1, x = ({u})a; while (b) {{ if (b & 1) r *= x; x *= x; "
            f"b = ({t})(b >> 1); }} return ({t})r; }}"
        )
    for s, t, f, c in (("f32", "float", "fmodf", "copysignf"),
                       ("f64", "double", "fmod", "copysign")):
        out.append(  # numpy's: a zero remainder takes the divisor's sign
            f"static inline {t} rl_floormod_{s}({t} a, {t} b) {{ {t} r = {f}(a, b); "
            f"return r == 0 ? {c}(0, b) : (((r < 0) != (b < 0)) ? r + b : r); }}"
        )
    out.extend(_float_to_int_helpers())
    out.extend(_never_minus_zero_helpers())
    return "\n".join(out)


def _never_minus_zero_helpers() -> list[str]:
    """``rl_<float>_of_<int>`` and ``rl_fabs[f]``: an integer-to-float conversion and an
    absolute value behind a call. gcc 12's front end folds ``0.0 - X`` to ``-X`` when X
    is one of those (it reasons X is never -0.0; the fold needs X never +0.0), so
    ``0.0 - (float)i`` and ``0.0 + -1.0 * (double)i`` (arange) gave -0.0 where IEEE
    says +0.0 (fuzz seed 131782). The fold does not look into a call; inlined, these
    are the same instructions."""
    out = ["static inline float rl_fabsf(float x) { return fabsf(x); }",
           "static inline double rl_fabs(double x) { return fabs(x); }"]
    for fs, ft in (("f32", "float"), ("f64", "double")):
        for s, t in (("i64", "int64_t"), ("u64", "uint64_t")):  # every integer, exactly
            out.append(f"static inline {ft} rl_{fs}_of_{s}({t} x) {{ return ({ft})x; }}")
    return out


def _float_to_int_helpers() -> list[str]:
    """``rl_cast_<float>_<int>``: float to integer conversion, defined for every input
    (C leaves NaN and out-of-range values undefined, and x86 gives different answers
    in scalar and vector code): truncation toward zero, NaN gives 0, values beyond the
    range saturate to its ends. ``op/transform/convert.py`` pins the same rule."""
    out = []
    for fs, ft in (("f32", "float"), ("f64", "double")):
        for bits in (8, 16, 32, 64):
            for signed in (True, False):
                s, t = f"{'i' if signed else 'u'}{bits}", f"{'' if signed else 'u'}int{bits}_t"
                if signed:  # both bounds are powers of two, exact in every float type
                    hi, lo, top, bottom = f"0x1p{bits - 1}", f"-0x1p{bits - 1}", \
                        f"INT{bits}_MAX", f"INT{bits}_MIN"
                else:
                    hi, lo, top, bottom = f"0x1p{bits}", "-1", f"UINT{bits}_MAX", "0"
                out.append(
                    f"static inline {t} rl_cast_{fs}_{s}({ft} x) {{ return x != x ? 0 : "
                    f"(x >= {hi} ? {top} : (x <= {lo} ? {bottom} : ({t})x)); }}"
                )
    return out


_WORKSPACE = r"""
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define RL_THREAD_LOCAL _Thread_local
#else
#define RL_THREAD_LOCAL __thread
#endif
/* Scratch memory of the calling thread, shared by every kernel of this library (kernels
   run one at a time per thread), kept between calls and grown on demand. */
#ifdef _OPENMP
#include <omp.h>
static inline int rl_max_threads(void) { return omp_get_max_threads(); }
static inline int rl_thread_num(void) { return omp_get_thread_num(); }
#else
static inline int rl_max_threads(void) { return 1; }
static inline int rl_thread_num(void) { return 0; }
#endif
static RL_THREAD_LOCAL char* rl_arena = NULL; /* as malloc returned it */
static RL_THREAD_LOCAL char* rl_arena_aligned = NULL;
static RL_THREAD_LOCAL size_t rl_arena_size = 0;
static inline char* rl_workspace(size_t bytes) {
  bytes = bytes ? bytes : 64;
  if (bytes > rl_arena_size) {
    free(rl_arena);
    rl_arena = (char*)malloc(bytes + 64);
    rl_arena_aligned = rl_arena ? (char*)(((uintptr_t)rl_arena + 63) & ~(uintptr_t)63) : NULL;
    rl_arena_size = rl_arena ? bytes : 0;
  }
  return rl_arena_aligned;
}
"""

_MATH_F32 = r"""
static inline float rl_bits_f32(int32_t i) { float f; memcpy(&f, &i, sizeof f); return f; }
/* exp, tanh, erf in float32 without libm calls, so loops that use them vectorise.
   Cephes-style range reduction and polynomials: exp and tanh within 1 ulp of the
   correctly rounded result, erf within 3 ulp; inf, nan and subnormal results as libm. */
static inline float rl_expf(float x) {
  float xc = x < -103.972084f ? -103.972084f : (x > 88.7228394f ? 88.7228394f : x);
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float e = p * r * r + r + 1.0f;
  int32_t k = (int32_t)n;
  int32_t k1 = k / 2; /* 2^k = 2^k1 * 2^(k - k1): both factors stay normal */
  float s = e * rl_bits_f32((k1 + 127) << 23) * rl_bits_f32((k - k1 + 127) << 23);
  s = x > 88.7228394f ? INFINITY : s;
  return __builtin_isunordered(x, x) ? x : s;
}
static inline float rl_tanhf(float x) {
  float a = x < 0 ? -x : x;
  float z = x * x;
  float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z
                 + 1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
  /* clamped where the result has rounded to 1 (tanh(10) is 1.0f), so that tanh(+-inf)
     is exactly +-1 and exp cannot overflow */
  float big = 1.0f - 2.0f / (rl_expf(2.0f * (a > 10.0f ? 10.0f : a)) + 1.0f);
  big = x < 0 ? -big : big;
  return copysignf(a < 0.625f ? small : big, x); /* tanh(-0.0) is -0.0 */
}
static inline float rl_erff(float x) {
  float a = x < 0 ? -x : x;
  float z = x * x;
  float small = x * (1.12837916709551257f + z * (-0.376126389031837525f
                + z * (0.112837916709551257f + z * (-0.0268661706451312516f
                + z * (0.00522397762544218779f + z * -0.000854832702345085286f)))));
  float t = 1.0f / (1.0f + 0.5f * a);
  float y = t * rl_expf(-z - 1.26551223f + t * (1.00002368f + t * (0.37409196f
            + t * (0.09678418f + t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f
            + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))))));
  float big = 1.0f - y;
  big = x < 0 ? -big : big;
  return a < 0.5f ? small : big;
}
"""

HEADER = f"""/* Generated by relayir. */
#if defined(__GNUC__) && !defined(__clang__)
/* Lets gcc if-convert selects whose arms compute (leaky_relu, the math helpers): no
   result changes, only floating-point exception flags, which nothing reads. */
#pragma GCC optimize ("no-trapping-math")
/* gcc 12.2 miscompiles a vectorised max over a window with a padding guard after its
   early value-range pass (a max_pool3d, NDHWC, found by the fuzzer: seed 2843), so the
   pass is off. Measured without it, kernels move both ways (resnet18 1.04x faster with
   it off, BERT 1.06x slower): RL_VRP turns it back on for a routine it speeds up
   (layer_norm: 3.2x). */
#pragma GCC optimize ("no-tree-vrp")
#define RL_VRP __attribute__((optimize("tree-vrp")))
/* gcc 12.2 -O3 miscompiles a variable shift under its range guard once loop
   if-conversion vectorises it with masks (left_shift of a 4x5x5 int32 tensor gave 0 for
   2 << 2; found by the fuzzer under a random schedule, seed 193): a kernel with a shift
   is compiled without that pass. */
#define RL_SHIFTS __attribute__((optimize("no-tree-loop-if-convert")))
/* A schedule without simd (``vectorize=False``) gets scalar loops: gcc -O3 would
   vectorise them on its own (its ``omp simd`` loops still are), so the tuner's knob
   measured nothing, and gcc 12.2 miscompiles one such nest: an NWC avg_pool1d of 3
   channels, padded, a row of double accumulators, its output loop vectorised with its
   padding guard if-converted, dropped the first tap (fuzz seed 34284). */
#define RL_SCALAR __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define RL_VRP
#define RL_SHIFTS
#define RL_SCALAR
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#if defined(__FLT16_MAX__)
typedef _Float16 rl_f16;
#define RL_HAVE_F16 1
#endif

{_helpers()}
{_WORKSPACE}
{team_guard_source()}
{_MATH_F32}"""
# The helpers are always inlined: a function compiled with other options (RL_VRP) would
# otherwise call them out of line (measured on a max_pool given other options: 18x).
HEADER = HEADER.replace("static inline ", "static inline __attribute__((always_inline)) ")


# ---------------------------------------------------------------- literals


def _float_literal(v: float, dtype: str) -> str:
    single = dtype != "float64"
    if math.isnan(v):
        return "NAN" if single else "((double)NAN)"
    if math.isinf(v):
        inf = "INFINITY" if single else "HUGE_VAL"
        return inf if v > 0 else f"-{inf}"
    text = str(np.float32(v)) if single else repr(float(v))
    if not any(c in text for c in ".en"):
        text += ".0"
    return text + ("f" if single else "")


def _int_literal(v: int, dtype: str) -> str:
    if dtype == "uint64":
        return f"{v}ull"
    if dtype == "int64" and v == -(1 << 63):
        return "(-9223372036854775807ll - 1)"
    if -(1 << 31) <= v < (1 << 31):
        return str(v)
    return f"{v}ll" if dtype != "uint32" else f"{v}u"


def _const_literal(v, dtype: str) -> str:
    if E.is_float(dtype):
        v = float(v)
        if math.isfinite(v):
            return float(np.float32(v) if dtype != "float64" else v).hex() + (
                "f" if dtype != "float64" else ""
            )
        return _float_literal(v, dtype)
    return _int_literal(int(v), dtype)


# ---------------------------------------------------------------- names


class _Names:
    def __init__(self, reserved=()):
        self.used = set(reserved)
        self.of: dict[int, str] = {}
        self.keep: list = []

    def get(self, obj, hint: str) -> str:
        key = id(obj)
        name = self.of.get(key)
        if name is None:
            base = c_identifier(hint, prefix="v_", fallback="v", max_len=None)
            name, n = base, 1
            while name in self.used:
                name, n = f"{base}_{n}", n + 1
            self.used.add(name)
            self.of[key] = name
            self.keep.append(obj)
        return name


# ---------------------------------------------------------------- expressions


# Each node class renders through one entry of ``RENDER``: ``render(printer, e, kids)``
# gets ``kids``, the ``(text, precedence)`` of ``e``'s children (``te.visit.children``
# order), and returns ``e``'s own; ``_wrap`` parenthesises a child that binds looser
# than its slot needs. The printer renders children first from an explicit stack, so
# a kernel's expression may be as deep as its fused chain is long.

Rendered = tuple[str, int]


def _wrap(kid: Rendered, ctx: int) -> str:
    text, prec = kid
    return f"({text})" if prec < ctx else text


def _literal(text: str) -> Rendered:
    return text, (_UNARY if text.startswith("-") else _CALL)


def _narrow(text: str, prec: int, dtype: str) -> Rendered:
    """Narrow integer arithmetic is cast back to its type, so it wraps like numpy."""
    if dtype in _NARROW:
        return f"({_CTYPE[dtype]})({text})", _UNARY
    return text, prec


def _infix(kids: list, symbol: str) -> str:
    prec = _PREC[symbol]
    # left-associative: the right operand needs strictly tighter binding
    return f"{_wrap(kids[0], prec)} {symbol} {_wrap(kids[1], prec + 1)}"


def _arith(r, e, kids) -> Rendered:
    return _narrow(_infix(kids, e.symbol), _PREC[e.symbol], e.dtype)


def _shift(r, e, kids) -> Rendered:
    r.shifts = True  # the kernel is compiled with RL_SHIFTS (see HEADER)
    return _arith(r, e, kids)


def _logic(r, e, kids) -> Rendered:
    """Comparisons, ``&&`` and ``||``: a 0/1 result, never narrowed."""
    return _infix(kids, e.symbol), _PREC[e.symbol]


def _helper_call(prefix: str):
    """``rl_<op>_<suffix>(a, b)``: a ``HEADER`` helper per operand type."""
    def render(r, e, kids) -> Rendered:
        return f"{prefix}{_SUFFIX[e.a.dtype]}({_wrap(kids[0], 0)}, {_wrap(kids[1], 0)})", _CALL
    return render


def _min_max(op: str):
    """``rl_max_<suffix>(a, b)``; ``rl_maxr_`` for a float accumulator's update (the
    statement printer marks it, see ``_accumulation``)."""
    plain, update = _helper_call(f"rl_{op}_"), _helper_call(f"rl_{op}r_")

    def render(r, e, kids) -> Rendered:
        return (update if e is r.accumulating else plain)(r, e, kids)
    return render


def _int_div_mod(symbol: str, helper: str, float_render):
    """Integer division and remainder: C's operator for a positive constant divisor,
    else a ``HEADER`` helper (0 for a zero divisor, numpy's floor semantics)."""
    call = _helper_call(helper)

    def render(r, e, kids) -> Rendered:
        dtype = e.a.dtype
        if E.is_float(dtype):
            return float_render(r, e, kids)
        c = E.const_value(e.b)
        if symbol and isinstance(c, int) and c > 0:
            return _narrow(f"{_wrap(kids[0], 13)} {symbol} {_wrap(kids[1], 14)}", 13, dtype)
        return call(r, e, kids)
    return render


def _float_floordiv(r, e, kids) -> Rendered:
    fn = "floorf" if e.a.dtype != "float64" else "floor"
    return f"{fn}({_wrap(kids[0], 13)} / {_wrap(kids[1], 14)})", _CALL


def _float_fmod(r, e, kids) -> Rendered:
    fn = "fmodf" if e.a.dtype != "float64" else "fmod"
    return f"{fn}({_wrap(kids[0], 0)}, {_wrap(kids[1], 0)})", _CALL


def _buffer_load(r, e, kids) -> Rendered:
    text = f"{r.bufname(e.buffer)}[{_wrap(kids[0], 0)}]"
    return (f"(float){text}", _UNARY) if e.dtype == "float16" else (text, _CALL)


def _cast(r, e, kids) -> Rendered:
    src, dst = e.value.dtype, e.dtype
    if dst == "bool":
        return f"{_wrap(kids[0], 9)} != 0", _PREC["!="]
    if dst == "float16":
        return f"(float)(rl_f16){_wrap(kids[0], _UNARY)}", _UNARY
    if _CTYPE[src] == _CTYPE[dst] and src != "float16":
        return kids[0]
    if E.is_float(src) and not E.is_float(dst):  # defined for NaN and out-of-range values
        return f"rl_cast_{_SUFFIX[src]}_{_SUFFIX[dst]}({_wrap(kids[0], 0)})", _CALL
    if E.is_float(dst) and not E.is_float(src) and dst in ("float32", "float64"):
        # behind a call: see _never_minus_zero_helpers
        via = "u64" if src.startswith("uint") else "i64"
        return f"rl_{_SUFFIX[dst]}_of_{via}({_wrap(kids[0], 0)})", _CALL
    return f"({_CTYPE[dst]}){_wrap(kids[0], _UNARY)}", _UNARY


def _intrinsic(r, e, kids) -> Rendered:
    args = ", ".join(_wrap(k, 0) for k in kids)
    dtype = e.args[0].dtype
    if e.name in ("isnan", "isinf", "isfinite"):
        # C99 promises only "nonzero": glibc's isinf gives -1 for -inf, so that a cast
        # of the bool to float would read -1.0; compare to make it 0 or 1
        return f"({e.name}({args}) != 0)", _CALL
    if e.name == "pow" and not E.is_float(dtype):
        return f"rl_pow_{_SUFFIX[dtype]}({args})", _CALL
    if e.name not in _MATH:
        raise TypeError(f"the C printer has no intrinsic {e.name!r}")
    if e.name == "fabs":  # behind a call: see _never_minus_zero_helpers
        return f"rl_fabs{'f' if dtype != 'float64' else ''}({args})", _CALL
    if dtype != "float64" and e.name in ("exp", "tanh", "erf"):
        return f"rl_{e.name}f({args})", _CALL  # vectorisable versions in HEADER
    return f"{e.name}{'f' if dtype != 'float64' else ''}({args})", _CALL


RENDER: dict[type, Callable[[_ExprPrinter, E.Expr, list], Rendered]] = {
    E.IntImm: lambda r, e, kids: _literal(_int_literal(e.value, e.dtype)),
    E.FloatImm: lambda r, e, kids: _literal(_float_literal(e.value, e.dtype)),
    E.Var: lambda r, e, kids: (r.names.get(e, e.name), _CALL),
    S.BufferLoad: _buffer_load,
    E.Not: lambda r, e, kids: (f"!{_wrap(kids[0], _UNARY)}", _UNARY),
    E.Select: lambda r, e, kids: (
        f"{_wrap(kids[0], 4)} ? {_wrap(kids[1], 3)} : {_wrap(kids[2], 3)}", _PREC["?:"]),
    E.Cast: _cast,
    E.Call: _intrinsic,
    **dict.fromkeys((E.Add, E.Sub, E.Mul, E.Div, E.BitAnd, E.BitOr, E.BitXor), _arith),
    **dict.fromkeys((E.ShiftLeft, E.ShiftRight), _shift),
    **dict.fromkeys((E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE, E.And, E.Or), _logic),
    E.Min: _min_max("min"),
    E.Max: _min_max("max"),
    E.TruncDiv: _int_div_mod("/", "rl_div_", _arith),
    E.TruncMod: _int_div_mod("%", "rl_mod_", _float_fmod),
    E.FloorDiv: _int_div_mod("", "rl_floordiv_", _float_floordiv),
    E.FloorMod: _int_div_mod("", "rl_floormod_", _helper_call("rl_floormod_")),
}


class _ExprPrinter:
    def __init__(self, names: _Names, bufname):
        self.names = names
        self.bufname = bufname
        self.hoisted: dict = {}  # expr -> C name of a hoisted common subexpression
        self.accumulating = None  # the float max/min updating an accumulator, if any
        self.shifts = False  # whether a shift was printed (the kernel gets RL_SHIFTS)

    def __call__(self, e: E.Expr) -> str:
        return self.p(e, 0)

    def p(self, e: E.Expr, ctx: int) -> str:
        return _wrap(self.emit(e), ctx)

    def emit(self, root: E.Expr) -> Rendered:
        """``root``'s text and precedence. Children are rendered first, left to right (the
        order names are given in), each distinct node once; a hoisted node is its name."""
        done: dict[int, tuple] = {}  # id(node) -> (node, rendered): keeps node alive
        stack = [(root, None)]
        while stack:
            e, cs = stack[-1]
            if cs is None:  # first visit
                if id(e) in done:
                    stack.pop()
                    continue
                name = self.hoisted.get(e)
                if name is not None:
                    stack.pop()
                    done[id(e)] = (e, (name, _CALL))
                    continue
                if type(e) not in RENDER:
                    raise TypeError(f"the C printer cannot print {type(e).__name__}: {e!r}")
                if type(e) is S.BufferLoad:
                    self.bufname(e.buffer)  # named before its offset's variables, as ever
                cs = children(e)
                stack[-1] = (e, cs)
                stack.extend((c, None) for c in reversed(cs) if id(c) not in done)
                continue
            stack.pop()
            if id(e) not in done:
                done[id(e)] = (e, RENDER[type(e)](self, e, [done[id(c)][1] for c in cs]))
        return done[id(root)][1]


def _common_subexpressions(roots) -> list:
    """Subexpressions worth computing once: used twice or more, and evaluated on every
    path (a node reached only through a select's branches may be guarded, e.g. a read
    that is in bounds only when the condition holds). Index arithmetic is left inline."""
    refs: dict = {}
    order: list = []
    seen: set = set()
    stack = list(roots)
    for r in roots:
        refs[r] = refs.get(r, 0) + 1
    while stack:  # distinct nodes; each parent slot counts one reference
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        order.append(x)
        for c in children(x):
            refs[c] = refs.get(c, 0) + 1
            stack.append(c)
    unguarded: set = set()
    stack = list(roots)
    while stack:
        x = stack.pop()
        if x in unguarded:
            continue
        unguarded.add(x)
        stack.extend((x.cond,) if isinstance(x, E.Select) else children(x))
    picked = [
        x
        for x in order
        if refs[x] > 1
        and x in unguarded
        and x.dtype != E.INDEX
        and not isinstance(x, (E.IntImm, E.FloatImm, E.Var))
    ]
    if not picked:
        return picked
    depth: dict = {}  # children before parents when printed
    for r in roots:
        for x in post_order(r):
            if x not in depth:
                depth[x] = 1 + max((depth[c] for c in children(x)), default=0)
    return sorted(picked, key=depth.__getitem__)


# ---------------------------------------------------------------- statements


def _accumulation(value: E.Expr, is_target) -> E.Expr | None:
    """``value`` when it is ``max(target, x)``/``min(target, x)`` of floats: the update
    of an accumulator (``is_target(a)``: whether ``a`` reads the location stored to)."""
    if type(value) in (E.Max, E.Min) and E.is_float(value.dtype) and is_target(value.a):
        return value
    return None


def _omp_reduction(op: str, dtype: str) -> str:
    """The OpenMP reduction identifier of a reduction loop: a float max/min names the
    NaN-propagating one declared in ``HEADER``."""
    if op in ("max", "min") and E.is_float(dtype):
        return f"rl_{op}_{_SUFFIX[dtype]}"
    return op


class _Printer:
    def __init__(self, kernel: S.PrimFunc):
        self.k = kernel
        self.lines: list[str] = []
        self.bufnames: dict = {}
        reserved = set()
        for b in (*kernel.inputs, *kernel.outputs):
            reserved.add(b.name)
        for b in kernel.constants:
            reserved.add(f"{kernel.name}_{b.name}")
        self.names = _Names(reserved)
        self.ex = _ExprPrinter(self.names, self.bufname)
        self.temps = 0
        self.offsets: dict = {}
        self.scratch: dict = {}
        self.scalar = False  # a loop's schedule has no simd (the kernel gets RL_SCALAR)
        self.local_arrays: list[int] = []  # lines declaring local non-double arrays

    def bufname(self, buf: S.Buffer) -> str:
        name = self.bufnames.get(buf)
        if name is None:
            if buf.kind == "const":
                name = f"{self.k.name}_{buf.name}"
                self.names.used.add(name)
            elif buf.kind in ("input", "output"):
                name = buf.name
            else:
                name = self.names.get(buf, buf.name)
            self.bufnames[buf] = name
        return name

    def line(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def expr_with_cse(self, depth: int, *roots) -> list[str]:
        saved = dict(self.ex.hoisted)
        for x in _common_subexpressions(roots):
            if x in self.ex.hoisted:
                continue
            text = self.ex(x)
            # a name per hoisting, not per expression: two stores of one block that share
            # a subexpression (a short axis written out) declare it twice (fuzz seed 30676)
            name = self.names.get(object(), f"_c{self.temps}")
            self.temps += 1
            self.line(depth, f"const {_CTYPE[x.dtype]} {name} = {text};")
            self.ex.hoisted[x] = name
        out = [self.ex(r) for r in roots]
        self.ex.hoisted = saved
        return out

    # ------------------------------------------------------------ statements

    def stmt(self, s: S.Stmt, depth: int) -> None:
        t = type(s)
        if t is S.SeqStmt:
            for x in s.stmts:
                self.stmt(x, depth)
        elif t is S.For:
            self.loop(s, depth)
        elif t is S.BufferStore:
            self.ex.accumulating = _accumulation(s.value, lambda a: isinstance(
                a, S.BufferLoad) and a.buffer is s.buffer and a.offset == s.offset)
            (value,) = self.expr_with_cse(depth, s.value)
            self.ex.accumulating = None
            buf = s.buffer
            if buf.dtype == "float16":
                value = f"(rl_f16)({value})"
            elif buf.dtype == "bool":
                value = f"(uint8_t)({value})"
            self.line(depth, f"{self.bufname(buf)}[{self.ex(s.offset)}] = {value};")
        elif t is S.Declare:
            (init,) = self.expr_with_cse(depth, s.init)
            name = self.names.get(s.var, s.var.name)
            self.line(depth, f"{_CTYPE[s.var.dtype]} {name} = {init};")
            self.stmt(s.body, depth)
        elif t is S.LetStmt:
            (value,) = self.expr_with_cse(depth, s.value)
            name = self.names.get(s.var, s.var.name)
            self.line(depth, f"const {_CTYPE[s.var.dtype]} {name} = {value};")
            self.stmt(s.body, depth)
        elif t is S.Assign:
            self.ex.accumulating = _accumulation(s.value, lambda a: a is s.var)
            (value,) = self.expr_with_cse(depth, s.value)
            self.ex.accumulating = None
            self.line(depth, f"{self.names.get(s.var, s.var.name)} = {value};")
        elif t is S.IfThenElse:
            (cond,) = self.expr_with_cse(depth, s.cond)
            self.line(depth, f"if ({cond}) {{")
            self.stmt(s.then_case, depth + 1)
            if s.else_case is not None:
                self.line(depth, "} else {")
                self.stmt(s.else_case, depth + 1)
            self.line(depth, "}")
        elif t is S.Allocate:
            self.allocate(s, depth)
        elif t is MK.CallMicroKernel:  # tir/microkernel.py: pointers and int64 scalars
            args = [f"{self.bufname(x.buffer)} + {self.ex(x.offset)}" if type(x) is MK.Pointer
                    else self.ex(x) for x in s.args]
            self.line(depth, f"{s.kernel.name}({', '.join(args)});")
        elif t is S.CallRoutine:
            args = [self.bufname(b) for b in s.buffers]
            args += [self.ex(x) for x in s.scalars] + [str(int(s.min_work))]
            self.line(depth, f"if ({s.routine}({', '.join(args)}) != 0) return -1;")
        else:
            raise TypeError(f"the C printer cannot print statement {type(s).__name__}")

    def loop(self, s: S.For, depth: int) -> None:
        ann = s.annotations
        self.scalar |= bool(ann.get("scalar"))
        clauses = []
        if ann.get("collapse"):
            clauses.append(f"collapse({ann['collapse']})")
        if ann.get("parallel_if") is not None and s.kind != S.PARALLEL:
            clauses.append(f"if({self.ex(ann['parallel_if'])})")
        if ann.get("reduction"):
            op, var = ann["reduction"]
            clauses.append(f"reduction({_omp_reduction(op, var.dtype)}:"
                           f"{self.names.get(var, var.name)})")
        if ann.get("simdlen"):
            clauses.append(f"simdlen({ann['simdlen']})")
        tail = (" " + " ".join(clauses)) if clauses else ""
        if s.kind == S.PARALLEL:  # a team only while helper threads start on time
            cond = ann.get("parallel_if")
            guard = (f"({self.ex(cond)}) && " if cond is not None else "") + "rl_team_ok()"
            self.line(depth, f"#pragma omp parallel if({guard})")
            self.line(depth, "{")
            depth += 1
            self.line(depth, "rl_team_arrive();")
            what = "for simd" if ann.get("simd") else "for"
            self.line(depth, f"#pragma omp {what} schedule(static) nowait{tail}")
        elif ann.get("simd"):
            self.line(depth, f"#pragma omp simd{tail}")
        # gcc takes no other pragma between an OpenMP loop pragma and its loop: a loop that
        # is simd or a team's loop keeps that, and unrolling is the vectoriser's choice
        if ann.get("unroll") and not ann.get("simd") and s.kind != S.PARALLEL:
            self.line(depth, f"#pragma GCC unroll {int(ann['unroll'])}")
        v = self.names.get(s.var, s.var.name)
        self.line(depth, f"for (int64_t {v} = 0; {v} < {self.ex(s.extent)}; ++{v}) {{")
        self.stmt(s.body, depth + 1)
        self.line(depth, "}")
        if s.kind == S.PARALLEL:
            self.line(depth - 1, "}")

    def allocate(self, s: S.Allocate, depth: int) -> None:
        buf = s.buffer
        name = self.bufname(buf)
        ctype = _STORAGE[buf.dtype]
        if buf.kind == "local":
            # 64-byte aligned where gcc 12.2 moved 16 bytes with an aligned vmovdqa to or
            # from a stack array at 8 mod 16 (a SIGSEGV): double arrays (`double acc[6]`,
            # fuzz seed 33750), and every array of a kernel under a function optimize
            # attribute (RL_SCALAR, RL_SHIFTS: a max_pool3d's `float acc[20]`, seed
            # 32872), which loses the stack realignment; see kernel(). Elsewhere gcc
            # realigns by itself, and aligning every array slowed resnet18 by 1.35x.
            align = " __attribute__((aligned(64)))" if buf.dtype == "float64" else ""
            if not align:
                self.local_arrays.append(len(self.lines))
            self.line(depth, f"{ctype} {name}[{self.ex(buf.size())}]{align};")
        elif buf.kind == "scratch":  # this thread's slice of the workspace
            self.line(depth, f"{ctype}* restrict {name} = ({ctype}*)(rl_ws + "
                             f"{self.offsets[buf]} + (size_t)rl_thread_num() * "
                             f"{self.scratch[buf]});")
        else:  # a slice of the workspace (see workspace())
            self.line(depth, f"{ctype}* restrict {name} = ({ctype}*)(rl_ws + "
                             f"{self.offsets[buf]});")
        self.stmt(s.body, depth)

    def workspace(self) -> None:
        """Temporaries live in one per-thread arena (``rl_workspace`` in ``HEADER``):
        no allocation per call once it has grown, and no page faults on fresh memory."""
        temps = _temporaries(self.k.body)
        if not temps:
            return
        static, symbolic = 0, []  # 64-byte aligned slices
        for buf in temps:
            self.offsets[buf] = " + ".join([str(static)] * bool(static or not symbolic)
                                           + symbolic)
            n = E.const_value(buf.size())
            if n is not None:
                size = -(-int(n) * np.dtype(buf.dtype).itemsize // 64) * 64
                if buf.kind == "scratch":  # one slice per thread
                    self.scratch[buf] = size
                    symbolic.append(f"(size_t)rl_max_threads() * {size}")
                else:
                    static += size
            else:
                if buf.kind == "scratch":
                    raise ValueError(f"scratch buffer {buf.name} needs a static size")
                symbolic.append(f"(((size_t)({self.ex(buf.size())}) * "
                                f"sizeof({_STORAGE[buf.dtype]}) + 63) & ~(size_t)63)")
        total = " + ".join([str(static)] * bool(static or not symbolic) + symbolic)
        self.line(1, f"char* rl_ws = rl_workspace({total});")
        self.line(1, "if (!rl_ws) return -1;")

    # ------------------------------------------------------------ the function

    def function(self) -> str:
        k = self.k
        out = []
        for b in k.constants:
            out.append(self.constant(b))
        signature = len(self.lines)
        self.line(0, f"int32_t {k.name}(void* const* args, const int64_t* dims) {{")
        for n, b in enumerate(k.inputs):
            t = _STORAGE[b.dtype]
            self.line(1, f"const {t}* restrict {self.bufname(b)} = (const {t}*)args[{n}];")
        for n, b in enumerate(k.outputs, len(k.inputs)):
            t = _STORAGE[b.dtype]
            self.line(1, f"{t}* restrict {self.bufname(b)} = ({t}*)args[{n}];")
        for n, v in enumerate(k.dim_vars):
            self.line(1, f"const int64_t {self.names.get(v, v.name)} = dims[{n}];")
        if not k.dim_vars:
            self.line(1, "(void)dims;")
        self.workspace()
        self.stmt(k.body, 1)
        self.line(1, "return 0;")
        self.line(0, "}")
        if self.ex.shifts:
            self.lines[signature] = "RL_SHIFTS " + self.lines[signature]
        if self.scalar:
            self.lines[signature] = "RL_SCALAR " + self.lines[signature]
        if self.ex.shifts or self.scalar:  # an optimize attribute: align (see allocate())
            for i in self.local_arrays:
                self.lines[i] = self.lines[i][:-1] + " __attribute__((aligned(64)));"
        uses_f16 = any(b.dtype == "float16" for b in (*k.inputs, *k.outputs, *k.constants))
        guard = (
            (
                '#ifndef RL_HAVE_F16\n#error "float16 kernels need a C compiler with '
                '_Float16 (gcc >= 12 or clang on x86-64/arm64)"\n#endif\n'
            )
            if uses_f16
            else ""
        )
        return guard + "".join(out) + "\n".join(self.lines) + "\n"

    def constant(self, b: S.Buffer) -> str:
        values = np.asarray(b.data).reshape(-1)
        items = ", ".join(_const_literal(v, b.dtype) for v in values.tolist()) or "0"
        n = max(values.size, 1)
        return f"static const {_STORAGE[b.dtype]} {self.bufname(b)}[{n}] = {{{items}}};\n"


def _temporaries(stmt: S.Stmt, in_loop: bool = False) -> list:
    """The ``temp`` buffers a kernel allocates (never inside a loop: they are per call) and
    its ``scratch`` buffers (one slice per thread, used inside a parallel loop)."""
    out, stack = [], [(stmt, in_loop)]
    while stack:
        s, looped = stack.pop()
        if isinstance(s, S.SeqStmt):
            stack.extend((x, looped) for x in reversed(s.stmts))
        elif isinstance(s, S.Allocate):
            if s.buffer.kind == "temp" and looped:
                raise ValueError(f"temporary {s.buffer.name} is allocated inside a loop")
            if s.buffer.kind in ("temp", "scratch"):
                out.append(s.buffer)
            stack.append((s.body, looped))
        elif isinstance(s, S.For):
            stack.append((s.body, True))
        elif isinstance(s, (S.LetStmt, S.Declare)):
            stack.append((s.body, looped))
        elif isinstance(s, S.IfThenElse):
            stack.append((s.then_case, looped))
            if s.else_case is not None:
                stack.append((s.else_case, looped))
    return out


def render(kernel: S.PrimFunc) -> str:
    """The C text of one kernel: its constant tables and its function."""
    return _Printer(kernel).function()


def _routines(stmt: S.Stmt) -> list[str]:
    """The hand-written C routines (``CallRoutine``) a kernel calls, in order."""
    out, stack = [], [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, S.CallRoutine):
            out.append(s.routine)
        elif isinstance(s, S.SeqStmt):
            stack.extend(reversed(s.stmts))
        elif isinstance(s, S.IfThenElse):
            stack.extend(x for x in (s.else_case, s.then_case) if x is not None)
        elif isinstance(s, (S.For, S.Allocate, S.LetStmt, S.Declare)):
            stack.append(s.body)
    return out


def render_module(kernels) -> str:
    """One translation unit: ``HEADER``, the C routines and micro-kernels the kernels call
    (each once), then every kernel."""
    kernels = list(kernels)
    routines = routine_sources([r for k in kernels for r in _routines(k.body)])
    micro = microkernel_sources([m for k in kernels for m in MK.microkernels_used(k.body)])
    return HEADER + "\n" + routines + micro + "\n".join(render(k) for k in kernels)
