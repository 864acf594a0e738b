"""The C micro-kernels (codegen/microkernels.py) called directly: every tile shape variant
against numpy, with ragged row counts, accumulation, three reduce levels and NaN; and the
module text: each micro-kernel once, named, with its vector type."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from relayir.codegen.c_printer import HEADER
from relayir.codegen.compiler import compile_source, default_flags
from relayir.codegen.microkernels import microkernel_source, microkernel_sources
from relayir.tir.microkernel import MicroKernel

pytestmark = pytest.mark.needs_cc

# (mr, nv, lanes, kunroll): AVX-512 (16 lanes), AVX2 (8), NEON/portable (4), one-row
# GEMV tiles with several accumulator sets, a one-vector tile with many rows
VARIANTS = [(14, 2, 16, 1), (6, 4, 16, 1), (28, 1, 16, 1), (1, 2, 16, 4), (7, 3, 16, 1),
            (6, 2, 8, 1), (14, 1, 8, 1), (3, 2, 4, 2), (1, 1, 4, 4), (5, 1, 16, 2)]
_ARGS = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
         ctypes.c_void_p] + [ctypes.c_int64] * 9


def _library(kernels: list, dtype: str = "float32", flags=None):
    """Each micro-kernel behind a non-inline wrapper ``call_<name>`` that ctypes can call."""
    ctype = {"float32": "float", "float64": "double"}[dtype]
    wrappers = []
    for k in kernels:
        wrappers.append(
            f"void call_{k.name}({ctype}* c, int64_t first, int64_t rows, const {ctype}* a, "
            f"int64_t rsa, const {ctype}* b, int64_t n0, int64_t sa0, int64_t sb0, int64_t n1,"
            f" int64_t sa1, int64_t sb1, int64_t n2, int64_t sa2, int64_t sb2) {{ {k.name}(c, "
            f"first, rows, a, rsa, b, n0, sa0, sb0, n1, sa1, sb1, n2, sa2, sb2); }}")
    source = HEADER + microkernel_sources(kernels) + "\n".join(wrappers) + "\n"
    lib = ctypes.CDLL(str(compile_source(source, name="microkernel_test", flags=flags)))
    for k in kernels:
        getattr(lib, f"call_{k.name}").argtypes = _ARGS
    return lib


def _reference(c0, first, rows, a, rsa, b, levels, mr, nr):
    """``C[i][j] (+)= sum A[min(i, rows-1)*rsa + k.sa] * B[k.sb + j]`` in float64."""
    out = np.zeros((mr, nr)) if first else c0.astype(np.float64).reshape(mr, nr).copy()
    (n0, sa0, sb0), (n1, sa1, sb1), (n2, sa2, sb2) = levels
    for i in range(mr):
        row = min(i, rows - 1) * rsa
        for k0 in range(n0):
            for k1 in range(n1):
                for k2 in range(n2):
                    s = a[row + k0 * sa0 + k1 * sa1 + k2 * sa2]
                    o = k0 * sb0 + k1 * sb1 + k2 * sb2
                    out[i] += np.float64(s) * b[o:o + nr].astype(np.float64)
    return out


def _call(lib, k, c, first, rows, a, rsa, b, levels):
    flat = [x for level in levels for x in level]
    getattr(lib, f"call_{k.name}")(c.ctypes.data, first, rows, a.ctypes.data, rsa,
                                   b.ctypes.data, *flat)


@pytest.fixture(scope="module", params=["vector", "scalar"])
def variants_lib(request):
    """The kernels with GCC vector extensions, and the portable scalar fallback."""
    kernels = [MicroKernel("float32", mr, nv, lanes, ku) for mr, nv, lanes, ku in VARIANTS]
    flags = None if request.param == "vector" else [*default_flags(),
                                                     "-DRL_SCALAR_MICROKERNELS"]
    return kernels, _library(kernels, flags=flags)


@pytest.mark.parametrize("index", range(len(VARIANTS)))
def test_every_tile_shape_matches_numpy(variants_lib, index):
    kernels, lib = variants_lib
    k = kernels[index]
    rng = np.random.default_rng(index)
    # one level (a dense: k contiguous in A, panel rows of nr in B) and three levels (a
    # convolution: channels x window rows x window columns, strided A)
    for levels, rsa in (([(1, 0, 0), (1, 0, 0), (37, 1, k.nr)], 37),
                        ([(3, 50, 6 * k.nr), (2, 10, 3 * k.nr), (3, 1, k.nr)], 2)):
        a = rng.standard_normal(k.mr * rsa + 200).astype("float32")
        b = rng.standard_normal(levels[0][0] * levels[0][2] + 64 * k.nr).astype("float32")
        for rows in sorted({1, max(1, k.mr // 2), k.mr}):
            for first in (1, 0):
                c = rng.standard_normal(k.mr * k.nr).astype("float32")
                want = _reference(c, first, rows, a, rsa, b, levels, k.mr, k.nr)
                _call(lib, k, c, first, rows, a, rsa, b, levels)
                got = c.reshape(k.mr, k.nr)
                # rows past `rows` repeat the last valid row: the kernel never reads past it
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4,
                                           err_msg=f"{k.name} rows={rows} first={first}")


def test_zero_times_nan_stays_nan_and_inf_propagates(variants_lib):
    kernels, lib = variants_lib
    k = kernels[0]
    a = np.ones(k.mr * 8, "float32")
    a[3 * 8 + 2] = np.nan  # row 3, step 2
    a[5 * 8 + 1] = np.inf  # row 5, step 1
    b = np.zeros(8 * k.nr, "float32")  # all weights zero: 0 * NaN and 0 * inf are NaN
    c = np.empty(k.mr * k.nr, "float32")
    _call(lib, k, c, 1, k.mr, a, 8, b, [(1, 0, 0), (1, 0, 0), (8, 1, k.nr)])
    got = c.reshape(k.mr, k.nr)
    assert np.isnan(got[3]).all() and np.isnan(got[5]).all()
    others = np.delete(got, [3, 5], axis=0)
    assert (others == 0).all()


def test_float64_kernel():
    k = MicroKernel("float64", 4, 2, 8, 1)
    lib = _library([k], "float64")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(4 * 9), rng.standard_normal(9 * 16)
    c = np.empty(4 * 16)
    levels = [(1, 0, 0), (1, 0, 0), (9, 1, 16)]
    _call(lib, k, c, 1, 4, a, 9, b, levels)
    np.testing.assert_allclose(c.reshape(4, 16), a.reshape(4, 9) @ b.reshape(9, 16), rtol=1e-12)


def test_module_text_names_each_kernel_once_with_its_vector_type():
    k1, k2 = MicroKernel("float32", 14, 2, 16), MicroKernel("float32", 6, 2, 8)
    text = microkernel_sources([k1, k2, k1])
    assert text.count(f"void {k1.name}(") == 1 and text.count(f"void {k2.name}(") == 1
    assert k1.name == "rl_gemm_f32_14x32" and k2.name == "rl_gemm_f32_6x16"
    assert "vector_size(16 * sizeof(float))" in text and "vector_size(8 * sizeof(float))" in text
    assert "always_inline" in microkernel_source(k1)
    assert "RL_SCALAR_MICROKERNELS" in text and "#else" in microkernel_source(k1)  # fallback
    assert MicroKernel("float32", 1, 2, 16, 4).name == "rl_gemm_f32_1x32_k4"
    assert microkernel_sources([]) == ""
