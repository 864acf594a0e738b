"""The ``cpu`` target: primitive functions → C kernels in one shared library.

``lower_cpu`` lowers every primitive function of a built module to loop IR
(``tir.lower_primitive``), renders them into ONE translation unit, compiles it once
(cached) and loads it. Each kernel's ``bind`` builds the argument pointer array once
and returns the ctypes call, so the graph executor's run loop is one native call per
kernel. ``export_library`` stores the shared object's bytes; loading writes them to
the cache directory and loads them again, with no recompilation.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..backend.build_module import register_lowering
from ..backend.kernels import Kernel, KernelError, KernelLibrary, register_library_loader
from ..ir.expr import Function
from ..ir.types import TensorType
from .c_printer import render_module
from .cache import cache_dir, host_fingerprint
from .compiler import compile_source
from .loader import Library, load_library


class CKernel(Kernel):
    """A compiled kernel; ``bind`` pre-builds its pointer array (static shapes only)."""

    def __init__(self, name: str, function, input_types, output_types):
        self.name = name
        self.function = function
        self.input_types = tuple(input_types)
        self.output_types = tuple(output_types)

    def bind(self, arrays: Sequence[np.ndarray]):
        self.check(arrays)
        return self.function.bind(arrays).unchecked

    def call_unchecked(self, *arrays: np.ndarray) -> None:
        self.function(*arrays)  # pointers built per call (a few µs); raises on failure


class CKernelLibrary(KernelLibrary):
    kind = "c"

    def __init__(self, kernels: dict[str, CKernel], target: str, library: Library,
                 so_bytes: bytes, source: str):
        super().__init__(kernels, target)
        self.library = library  # keeps the shared object loaded
        self.so_bytes = so_bytes
        self.source = source

    def files(self) -> dict[str, bytes]:
        # the object is built for this CPU (-march=native): record which, so that loading
        # elsewhere is a clear error instead of an illegal-instruction crash
        return {"lib.so": self.so_bytes, "kernels.c": self.source.encode(),
                "cpu.txt": host_fingerprint().encode()}

    def get_source(self) -> str:
        """The C source of every kernel (one translation unit)."""
        return self.source


def lower_cpu(functions: Sequence[tuple[str, Function]], target) -> CKernelLibrary:
    from ..tir import lower_primitive

    lowered = [lower_primitive(fn, name) for name, fn in functions]
    for k in lowered:
        if k.dim_names:
            raise KernelError(
                f"kernel {k.name} has symbolic dimensions {list(k.dim_names)}; the graph "
                f"executor runs static shapes (use the VM for dynamic ones)")
    source = render_module(lowered)
    path = compile_source(source, name="model")
    library = load_library(path)
    kernels = {
        k.name: CKernel(k.name, library.kernel(k.name), k.input_types, k.output_types)
        for k in lowered
    }
    return CKernelLibrary(kernels, str(target), library, Path(path).read_bytes(), source)


def _load_c(table: list[dict], files: dict[str, bytes], target: str) -> CKernelLibrary:
    try:
        so_bytes = files["lib.so"]
    except KeyError:
        raise KernelError("the saved module has no lib.so for its C kernels") from None
    built_for = files.get("cpu.txt", b"").decode()
    if built_for != host_fingerprint():
        raise KernelError(
            "the saved module's C kernels were compiled for another CPU (-march=native); "
            "rebuild it on this machine with relayir.build, or save it with target=\"numpy\"")
    path = _materialise(so_bytes)
    library = load_library(path)
    kernels = {}
    for entry in table:
        types = [[TensorType(tuple(s), d) for s, d in entry[k]] for k in ("inputs", "outputs")]
        kernels[entry["name"]] = CKernel(entry["name"], library.kernel(entry["name"]), *types)
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


register_lowering("cpu", lower_cpu)
register_library_loader("c", _load_c)
