"""C kernels at run time: a compiled shared object's kernels behind the ``Kernel``
interface, and loading a saved one.

``CKernel.bind`` checks the arrays once and pre-builds the pointer array, so the graph
executor's run loop is one ctypes call per kernel. A library saved by
``export_library`` holds the shared object's bytes (``lib.so``), its C source and the
CPU it was compiled for (``-march=native``): loading it on another CPU is a clear error,
never an illegal-instruction crash. Primitive functions the C back end does not lower
(reference-only ops) sit in the same library as numpy kernels, saved as Relay text.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..codegen.cache import cache_dir, host_fingerprint
from ..codegen.compiler import assemble_source
from ..codegen.loader import SharedLibrary
from ..ir.types import TensorType
from .kernels import Kernel, KernelError, KernelLibrary
from .numpy_kernels import NumpyKernel, load_numpy_library


class CKernel(Kernel):
    """A compiled kernel; ``bind`` pre-builds its pointer array (static shapes only).
    A kernel with ``dim_names`` (the VM's dynamic shapes) is called through
    ``call_dims_unchecked`` (see ``runtime.kernels``)."""

    def __init__(self, name: str, function, input_types, output_types, dim_names=()):
        self.name = name
        self.function = function
        self.input_types = tuple(input_types)
        self.output_types = tuple(output_types)
        self.dim_names = tuple(dim_names)

    def bind(self, arrays: Sequence[np.ndarray]):
        self.check(arrays)
        return self.function.bind(arrays).unchecked

    def call_unchecked(self, *arrays: np.ndarray) -> None:
        self.function(*arrays)  # pointers built per call (a few µs); raises on failure

    def call_dims_unchecked(self, dims, *arrays: np.ndarray) -> None:
        self.function(*arrays, dims=dims)


class CKernelLibrary(KernelLibrary):
    kind = "c"

    def __init__(self, kernels: dict[str, Kernel], target: str, library: SharedLibrary | None,
                 so_bytes: bytes, source: str, flags: Sequence[str] | None = None):
        super().__init__(kernels, target)
        self.library = library  # keeps the shared object loaded
        self.so_bytes = so_bytes
        self.source = source
        self.flags = None if flags is None else list(flags)  # as compiled (None: defaults)

    def files(self) -> dict[str, bytes]:
        if not self.so_bytes:  # only reference (numpy) kernels
            return {}
        # the object is built for this CPU (-march=native): record which, so that loading
        # elsewhere is a clear error instead of an illegal-instruction crash
        return {"lib.so": self.so_bytes, "kernels.c": self.source.encode(),
                "cpu.txt": host_fingerprint().encode()}

    def kernel_table(self) -> list[dict]:
        table = super().kernel_table()
        for entry in table:
            kernel = self.kernels[entry["name"]]
            if isinstance(kernel, NumpyKernel):
                entry["source"] = kernel.source()
                entry["reason"] = kernel.reason
        return table

    def get_source(self, fmt: str = "c") -> str:
        """The C source of every kernel (one translation unit), or with ``fmt="asm"`` the
        assembly the C compiler makes of it with the library's flags."""
        if fmt in ("", "c"):
            return self.source
        if fmt in ("asm", "s"):
            return assemble_source(self.source, flags=self.flags) if self.source else ""
        raise KernelError(f"get_source: fmt must be 'c' or 'asm', found {fmt!r}")


def c_kernel_library(path: str, lowered_types: Sequence[tuple], target: str,
                     source: str, flags: Sequence[str] | None = None) -> CKernelLibrary:
    """Load the compiled shared object at ``path``: one ``CKernel`` per
    ``(name, input types, output types, dim names)``."""
    library = SharedLibrary(path)
    kernels = {name: CKernel(name, library.kernel(name), ins, outs, dims)
               for name, ins, outs, dims in lowered_types}
    return CKernelLibrary(kernels, target, library, Path(path).read_bytes(), source, flags)


def load_c_library(table: list[dict], files: dict[str, bytes], target: str) -> CKernelLibrary:
    """Rebuild a saved C kernel library (``kernel_table`` + ``files``)."""
    host = [entry for entry in table if "source" in entry]
    table = [entry for entry in table if "source" not in entry]
    kernels = dict(load_numpy_library(host, files, target).kernels)
    if not table:
        return CKernelLibrary(kernels, target, None, b"", "")
    try:
        so_bytes = files["lib.so"]
    except KeyError:
        raise KernelError("the saved module has no lib.so for its C kernels") from None
    built_for = files.get("cpu.txt", b"").decode()
    if built_for != host_fingerprint():
        raise KernelError(
            "the saved module's C kernels were compiled for another CPU (-march=native); "
            "rebuild it on this machine with relayir.build, or save it with target=\"numpy\"")
    library = SharedLibrary(_materialise(so_bytes))
    for entry in table:
        types = [[TensorType(tuple(s), d) for s, d in entry[k]] for k in ("inputs", "outputs")]
        kernels[entry["name"]] = CKernel(entry["name"], library.kernel(entry["name"]), *types,
                                         entry.get("dims", ()))
    source = files.get("kernels.c", b"").decode()
    return CKernelLibrary(kernels, target, library, so_bytes, source)


def _materialise(so_bytes: bytes) -> str:
    """Write a saved shared object where ctypes can load it (content-addressed, atomic)."""
    digest = hashlib.sha256(so_bytes).hexdigest()[:32]
    folder = cache_dir() / "loaded"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="relayir-loaded-"))
    path = folder / f"module-{digest}.so"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".so")
        with os.fdopen(fd, "wb") as f:
            f.write(so_bytes)
        os.replace(tmp, path)
    return str(path)


__all__ = ["CKernel", "CKernelLibrary", "c_kernel_library", "load_c_library"]
