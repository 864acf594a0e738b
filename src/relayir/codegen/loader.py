"""Load a compiled shared object with ctypes and call its kernels.

Every generated kernel has one C signature::

    int32_t name(void* const* args, const int64_t* dims);

``args`` points to the data pointers of the input buffers then the output
buffers; ``dims`` holds the values of the symbolic dimensions (may be NULL);
the kernel returns 0 on success and a nonzero error code otherwise. One
signature for all kernels keeps the loader generic and makes a pre-bound call
a single ctypes call.

Lifetime: a :class:`KernelFunction` holds its :class:`SharedLibrary`, and a
:class:`BoundCall` holds its kernel and its arrays, so neither the shared
object nor a buffer can go away while something can still call into it.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import Error, KernelError
from .openmp_env import prepare_openmp

__all__ = ["BoundCall", "KernelFunction", "LoadError", "SharedLibrary"]


class LoadError(Error):
    """A shared object could not be loaded, or has no kernel of that name."""


class SharedLibrary:
    """A loaded shared object (``RTLD_LOCAL``: kernels of two libraries never clash);
    :meth:`kernel` gives its kernels."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        prepare_openmp()  # before the first library brings the OpenMP runtime in
        try:
            self._cdll = ctypes.CDLL(str(self.path))
        except OSError as e:
            raise LoadError(f"cannot load kernel library {self.path}: {e}") from None
        self._kernels: dict[str, KernelFunction] = {}

    def has_kernel(self, name: str) -> bool:
        try:
            self._cdll[name]
        except AttributeError:
            return False
        return True

    def kernel(self, name: str, num_args: int | None = None) -> KernelFunction:
        """The kernel ``name``. With ``num_args``, calls check the argument count."""
        fn = self._kernels.get(name)
        if fn is None:
            try:
                cfunc = self._cdll[name]  # a fresh function object, not shared with others
            except AttributeError:
                raise LoadError(
                    f"kernel library {self.path} has no kernel named {name!r}"
                ) from None
            cfunc.restype = ctypes.c_int32
            cfunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            fn = self._kernels[name] = KernelFunction(self, name, cfunc)
        if num_args is not None:
            fn = KernelFunction(self, name, fn._cfunc, num_args)
        return fn

    def __getitem__(self, name: str) -> KernelFunction:
        return self.kernel(name)

    def __repr__(self) -> str:
        return f"SharedLibrary({str(self.path)!r})"


class KernelFunction:
    """One kernel of a :class:`SharedLibrary`."""

    __slots__ = ("library", "name", "num_args", "_cfunc")

    def __init__(self, library: SharedLibrary, name: str, cfunc, num_args: int | None = None):
        self.library = library  # keeps the CDLL alive
        self.name = name
        self.num_args = num_args
        self._cfunc = cfunc

    def bind(self, arrays: Sequence[np.ndarray], dims: Sequence[int] | None = None) -> BoundCall:
        """Check the arrays once and build the pointer array once; the returned
        call then costs one ctypes call. The arrays must keep their buffers
        (no resize) for as long as the call is used."""
        return BoundCall(self, arrays, dims)

    def __call__(self, *arrays: np.ndarray, dims: Sequence[int] | None = None) -> None:
        """Convenience: check and build the pointers on every call (a few µs)."""
        ptrs = (ctypes.c_void_p * len(arrays))(*_pointers(self, arrays))
        dims_arg = None if dims is None else (ctypes.c_int64 * len(dims))(*dims)
        rc = self._cfunc(ptrs, dims_arg)
        if rc:
            _fail(self.name, rc)

    def __repr__(self) -> str:
        return f"<kernel {self.name} of {self.library.path.name}>"


class BoundCall:
    """A kernel with its arguments fixed. ``call()`` runs it and raises
    :class:`KernelError` on a nonzero status; ``call.unchecked()`` runs it and
    returns the status, for run loops that check in bulk."""

    __slots__ = ("kernel", "arrays", "dims", "unchecked", "_keep")

    def __init__(self, kernel: KernelFunction, arrays: Sequence[np.ndarray], dims=None):
        self.kernel = kernel
        self.arrays = tuple(arrays)  # keeps the buffers alive
        self.dims = None if dims is None else tuple(int(d) for d in dims)
        ptrs = (ctypes.c_void_p * len(self.arrays))(*_pointers(kernel, self.arrays))
        dims_arr = None if self.dims is None else (ctypes.c_int64 * len(self.dims))(*self.dims)
        self._keep = (ptrs, dims_arr)
        # c_void_p instances pass through argtypes=[c_void_p, ...] without conversion,
        # the cheapest argument ctypes has; partial avoids a Python frame.
        ptrs_arg = ctypes.c_void_p(ctypes.addressof(ptrs))
        dims_arg = ctypes.c_void_p(None if dims_arr is None else ctypes.addressof(dims_arr))
        self.unchecked = functools.partial(kernel._cfunc, ptrs_arg, dims_arg)
        # the partial may outlive this object (run loops keep only it): it must keep the
        # pointer array and the buffers alive itself
        self.unchecked.keep = (self._keep, self.arrays, kernel)
        # the argument slots, for an executor that points one at a caller's array for a
        # call (``ptrs[i] = address``; it keeps that array alive meanwhile)
        self.unchecked.pointers = ptrs

    def __call__(self) -> None:
        rc = self.unchecked()
        if rc:
            _fail(self.kernel.name, rc)

    def __repr__(self) -> str:
        return f"<bound call of {self.kernel.name} with {len(self.arrays)} arrays>"


def _pointers(kernel: KernelFunction, arrays: Sequence[np.ndarray]) -> list[int]:
    if kernel.num_args is not None and len(arrays) != kernel.num_args:
        raise KernelError(
            f"kernel {kernel.name!r} takes {kernel.num_args} arrays, got {len(arrays)}",
            kernel.name,
        )
    out = []
    for i, a in enumerate(arrays):
        if not isinstance(a, np.ndarray):
            raise KernelError(
                f"kernel {kernel.name!r}: argument {i} must be a numpy array, "
                f"got {type(a).__name__}",
                kernel.name,
            )
        flags = a.flags
        if not (flags.c_contiguous and flags.aligned):
            what = "C-contiguous" if not flags.c_contiguous else "aligned"
            raise KernelError(
                f"kernel {kernel.name!r}: argument {i} (shape {a.shape}, dtype {a.dtype}) "
                f"is not {what}; pass np.ascontiguousarray(...) or a fresh array",
                kernel.name,
            )
        # The buffer protocol gives the address ~5x faster than ``a.ctypes.data``; it
        # needs a writeable, non-empty buffer, which most kernel arguments are.
        out.append(_address(_char_at(a)) if flags.writeable and a.nbytes else a.ctypes.data)
    return out


_address = ctypes.addressof
_char_at = ctypes.c_char.from_buffer


def _fail(name: str, code: int):
    raise KernelError(f"kernel {name!r} returned error code {code}", name, code)
