"""Loading compiled kernels and calling them through the kernel ABI (needs a C compiler)."""

import gc
import timeit

import numpy as np
import pytest

import relayir
from relayir.codegen import (
    LoadError,
    SharedLibrary,
    compile_source,
    find_compiler,
)
from relayir.errors import KernelError

# Every kernel: int32_t name(void* const* args, const int64_t* dims); inputs then outputs.
SOURCE = """
#include <math.h>
#include <stdint.h>

int32_t vadd(void* const* args, const int64_t* dims) {
    const float* a = args[0];
    const float* b = args[1];
    float* c = args[2];
    int64_t n = dims ? dims[0] : 16;  /* NULL dims: the static size */
    for (int64_t i = 0; i < n; i++) c[i] = a[i] + b[i];
    return 0;
}

int32_t par_exp(void* const* args, const int64_t* dims) {
    const double* x = args[0];
    double* y = args[1];
    int32_t* threads = args[2];
    int64_t n = dims[0];
    int32_t used = 1;
#pragma omp parallel for reduction(max : used)
    for (int64_t i = 0; i < n; i++) {
        y[i] = exp(x[i]);
#ifdef _OPENMP
        used = used > omp_get_num_threads() ? used : omp_get_num_threads();
#endif
    }
    threads[0] = used;
    return 0;
}

int32_t check_positive(void* const* args, const int64_t* dims) {
    const float* x = args[0];
    float* y = args[1];
    for (int64_t i = 0; i < dims[0]; i++) {
        if (!(x[i] > 0.0f)) return 7;
        y[i] = sqrtf(x[i]);
    }
    return 0;
}

int32_t nop(void* const* args, const int64_t* dims) { (void)args; (void)dims; return 0; }
"""


pytestmark = pytest.mark.needs_cc


@pytest.fixture(scope="module")
def lib_path(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        for var in ("CC", "RELAYIR_CFLAGS", "RELAYIR_NO_CACHE"):
            mp.delenv(var, raising=False)
        mp.setenv("RELAYIR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        src = SOURCE
        if find_compiler().openmp:
            src = "#include <omp.h>\n" + src
        return compile_source(src, name="loader_test")


@pytest.fixture
def lib(lib_path):
    return SharedLibrary(lib_path)


def test_vector_add_call_and_bind(lib):
    k = lib.kernel("vadd")
    a = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    b = np.linspace(-1, 1, 1000, dtype=np.float32)
    c = np.empty_like(a)
    k(a, b, c, dims=[1000])
    np.testing.assert_array_equal(c, a + b)

    c[:] = 0
    call = k.bind([a, b, c], dims=[1000])
    call()
    np.testing.assert_array_equal(c, a + b)
    a += 1  # bound pointers see the arrays' current contents
    call()
    np.testing.assert_array_equal(c, a + b)


def test_read_only_and_empty_arrays(lib):
    a = np.arange(16, dtype=np.float32)
    a.flags.writeable = False
    b = np.broadcast_to(np.float32(2), (16,)).copy()
    c = np.zeros(16, dtype=np.float32)
    lib.kernel("vadd")(a, b, c)
    np.testing.assert_array_equal(c, a + 2)
    empty = np.zeros(0, dtype=np.float32)
    lib.kernel("vadd")(empty, empty, empty, dims=[0])


def test_null_dims(lib):
    a, b = np.arange(16, dtype=np.float32), np.ones(16, dtype=np.float32)
    c = np.zeros(16, dtype=np.float32)
    lib.kernel("vadd").bind([a, b, c])()
    np.testing.assert_array_equal(c, a + 1)


def test_openmp_kernel(lib):
    x = np.linspace(-5, 5, 1 << 16)
    y = np.empty_like(x)
    threads = np.zeros(1, dtype=np.int32)
    lib.kernel("par_exp")(x, y, threads, dims=[x.size])
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-15)
    assert threads[0] >= 1
    print(f"par_exp ran on {threads[0]} OpenMP threads")


def test_nonzero_return_raises_naming_the_kernel(lib):
    k = lib.kernel("check_positive")
    x = np.array([4.0, -1.0], dtype=np.float32)
    y = np.empty_like(x)
    with pytest.raises(KernelError, match="'check_positive' returned error code 7") as info:
        k(x, y, dims=[2])
    assert isinstance(info.value, relayir.Error) and info.value.code == 7
    call = k.bind([x, y], dims=[2])
    with pytest.raises(KernelError, match="check_positive"):
        call()
    assert call.unchecked() == 7
    x[1] = 9
    call()
    np.testing.assert_array_equal(y, [2, 3])


def test_arguments_are_checked(lib):
    k = lib.kernel("vadd", num_args=3)
    a = np.zeros((4, 4), dtype=np.float32)
    with pytest.raises(KernelError, match="argument 1 .* not C-contiguous"):
        k.bind([a, a.T, a])
    with pytest.raises(KernelError, match="argument 2 must be a numpy array"):
        k.bind([a, a, [0.0] * 16])
    with pytest.raises(KernelError, match="takes 3 arrays, got 2"):
        k(a, a)
    raw = np.zeros(65, dtype=np.uint8)[1:].view(np.float32)  # misaligned float32 view
    if not raw.flags.aligned:
        with pytest.raises(KernelError, match="not aligned"):
            k.bind([raw, raw, raw])


def test_missing_kernel_and_bad_library(lib, tmp_path):
    assert lib.has_kernel("vadd") and not lib.has_kernel("nope")
    with pytest.raises(LoadError, match="no kernel named 'nope'"):
        lib.kernel("nope")
    bogus = tmp_path / "bogus.so"
    bogus.write_text("not an ELF file")
    with pytest.raises(LoadError, match="cannot load kernel library"):
        SharedLibrary(bogus)


def test_library_and_arrays_stay_alive_while_referenced(lib_path):
    call = (
        SharedLibrary(lib_path)
        .kernel("vadd")
        .bind([np.full(16, 2, np.float32), np.full(16, 3, np.float32), np.zeros(16, np.float32)])
    )
    gc.collect()  # only the bound call holds the library and the arrays now
    call()
    np.testing.assert_array_equal(call.arrays[2], 5)


def test_call_overhead(lib):
    """Not a benchmark: a loose bound that catches an accidental per-call rebuild."""
    x = np.zeros(1, np.float32)
    k = lib.kernel("nop")
    call = k.bind([x, x, x])
    n = 20000
    bound = min(timeit.repeat(call, number=n, repeat=5)) / n
    direct = min(timeit.repeat(lambda: k(x, x, x), number=n // 10, repeat=5)) / (n // 10)
    print(f"BoundCall {bound * 1e6:.2f} us, KernelFunction.__call__ {direct * 1e6:.2f} us")
    assert bound < 20e-6
