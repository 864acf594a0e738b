"""How many threads the kernels called from THIS thread use.

The generated kernels size their thread teams from OpenMP's ``omp_get_max_threads()``,
which is per calling thread (OpenMP's nthreads ICV): ``set_num_threads(n)`` on a thread
limits the kernels that thread calls to ``n`` threads and leaves other threads' calls
alone (unlike ``torch.set_num_threads``, which is process-wide). A server running a
small model on its event loop's thread wants 1: a team of two costs more per call to
wake and join than the model gains (``benchmarks/serve_load.py``: an MLP request 115 us
of server work with a team of 2, 43 us with 1, on a 2-core Zen 4). ``OMP_NUM_THREADS``
sets every thread's starting value.
"""

from __future__ import annotations

import ctypes
import functools

from ..codegen.openmp_env import loaded_runtime, prepare_openmp
from ..errors import Error


@functools.cache
def _runtime():
    """The OpenMP runtime the kernels link against (loaded now if no kernel library has
    loaded it yet), or None where there is none: kernels then run on one thread."""
    prepare_openmp()  # its wait settings, before the runtime reads the environment
    for name in (loaded_runtime(), "libgomp.so.1", "libomp.so", "libiomp5.so"):
        if name is None:
            continue
        try:
            lib = ctypes.CDLL(name)
            lib.omp_set_num_threads.argtypes = [ctypes.c_int]
            lib.omp_get_max_threads.restype = ctypes.c_int
            return lib
        except (OSError, AttributeError):
            continue
    return None


def set_num_threads(n: int) -> None:
    """Kernels called from the calling thread use at most ``n`` threads from now on."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise Error(f"set_num_threads: a thread count >= 1 expected, found {n!r}")
    lib = _runtime()
    if lib is not None:
        lib.omp_set_num_threads(n)


def get_num_threads() -> int:
    """The most threads a kernel called from the calling thread uses."""
    lib = _runtime()
    return 1 if lib is None else int(lib.omp_get_max_threads())


__all__ = ["get_num_threads", "set_num_threads"]
