"""The ``cpu`` target: primitive functions → C kernels in one shared library.

``lower_cpu`` lowers every primitive function of a built module to loop IR
(``tir.lower_primitive``), renders them into ONE translation unit, compiles it once
(cached) and loads it. Each kernel's ``bind`` builds the argument pointer array once
and returns the ctypes call, so the graph executor's run loop is one native call per
kernel. ``export_library`` stores the shared object's bytes; loading writes them to
the cache directory and loads them again, with no recompilation.

A primitive function holding an op with no compute (``te.computes.REFERENCE_ONLY``:
sorting, ...) runs as the numpy target's kernel inside the same library, and is saved
as its Relay text, as the numpy target saves it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..backend.build_module import register_lowering
from ..backend.kernels import (
    Kernel,
    KernelError,
    KernelLibrary,
    NumpyKernel,
    register_library_loader,
)
from ..backend.kernels import load_library as load_kernel_library
from ..ir.expr import Call, Function, Op
from ..ir.functor import post_order
from ..ir.types import TensorType, is_low_precision
from .c_printer import render_module
from .cache import cache_dir, host_fingerprint
from .compiler import compile_source
from .loader import Library, load_library


class CKernel(Kernel):
    """A compiled kernel; ``bind`` pre-builds its pointer array (static shapes only).
    A kernel with ``dim_names`` (the VM's dynamic shapes) is called through
    ``call_dims_unchecked`` (see ``backend.kernels``)."""

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

    def __init__(self, kernels: dict[str, CKernel], target: str, library: Library,
                 so_bytes: bytes, source: str):
        super().__init__(kernels, target)
        self.library = library  # keeps the shared object loaded
        self.so_bytes = so_bytes
        self.source = source

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
        return table

    def get_source(self) -> str:
        """The C source of every kernel (one translation unit)."""
        return self.source


def lower_cpu(functions: Sequence[tuple[str, Function]], target) -> CKernelLibrary:
    """The graph executor's lowering: static shapes only (the VM, which also compiles
    kernels with symbolic dims, calls ``build_c_library``)."""
    from ..tir import lower_primitive

    host = [(name, fn) for name, fn in functions if uses_reference_only(fn)]
    lowered = [lower_primitive(fn, name) for name, fn in functions
               if not uses_reference_only(fn)]
    for k in lowered:
        if k.dim_names:
            raise KernelError(
                f"kernel {k.name} has symbolic dimensions {list(k.dim_names)}; the graph "
                f"executor runs static shapes (use the VM for dynamic ones)")
    lib = (build_c_library(lowered, target) if lowered
           else CKernelLibrary({}, str(target), None, b"", ""))
    lib.kernels.update({name: NumpyKernel(name, fn) for name, fn in host})
    return lib


def uses_reference_only(fn: Function) -> bool:
    """Whether the numpy reference runs ``fn``: it calls an op without a compute, or
    touches a dtype C has no type for (bfloat16, float8, int4, ...: ``is_low_precision``)."""
    from ..te.computes import REFERENCE_ONLY

    nodes = [*fn.params, *post_order(fn.body)]
    return any(type(n) is Call and type(n.op) is Op and n.op.name in REFERENCE_ONLY
               for n in nodes) or any(_has_low_precision(n) for n in nodes)


def _has_low_precision(node) -> bool:
    if not node.has_type:
        return False
    stack = [node.checked_type]
    while stack:
        t = stack.pop()
        if isinstance(t, TensorType) and is_low_precision(t.dtype):
            return True
        stack.extend(getattr(t, "fields", ()))
    return False


def build_c_library(lowered: Sequence, target) -> CKernelLibrary:
    """Render lowered kernels (``tir.Kernel``) into one C file, compile (cached) and load
    it. Kernels with symbolic dims take them in ``dims`` (``CKernel.dim_names``)."""
    source = render_module(lowered)
    path = compile_source(source, name="model")
    library = load_library(path)
    kernels = {
        k.name: CKernel(k.name, library.kernel(k.name), k.input_types, k.output_types,
                        k.dim_names)
        for k in lowered
    }
    return CKernelLibrary(kernels, str(target), library, Path(path).read_bytes(), source)


def _load_c(table: list[dict], files: dict[str, bytes], target: str) -> CKernelLibrary:
    host = [entry for entry in table if "source" in entry]
    table = [entry for entry in table if "source" not in entry]
    kernels = dict(load_kernel_library("numpy", host, files, target).kernels)
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
    path = _materialise(so_bytes)
    library = load_library(path)
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


register_lowering("cpu", lower_cpu)
register_library_loader("c", _load_c)
