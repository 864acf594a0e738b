"""Compile lowered kernels and call them on numpy arrays (tests, benchmarks, debugging).

``compile_kernels(kernels)`` renders all kernels into one translation unit, compiles it
once (through the cached compiler) and returns a callable per kernel
that allocates the outputs: ``outs = fns["k"](x, y)``. The graph executor does not use
this: it binds pre-allocated buffers once.
"""

from __future__ import annotations

import numpy as np

from ..tir.stmt import PrimFunc
from .c_printer import render_module
from .compiler import compile_source
from .loader import SharedLibrary


class NativeKernel:
    """A compiled kernel: ``kernel(*inputs, dims=None) -> list of output arrays``."""

    def __init__(self, kernel: PrimFunc, function):
        self.kernel = kernel
        self.function = function

    def output_shapes(self, dims) -> list[tuple]:
        env = dict(zip(self.kernel.dim_names, dims or ()))
        shapes = []
        for t in self.kernel.output_types:
            shapes.append(tuple(d if isinstance(d, int) else env[getattr(d, "name", d)]
                                for d in t.shape))
        return shapes

    def __call__(self, *inputs, dims=None) -> list:
        arrays = [np.ascontiguousarray(x) for x in inputs]
        for x, t in zip(arrays, self.kernel.input_types):
            if x.dtype.name != t.dtype:
                raise TypeError(f"{self.kernel.name}: input of dtype {x.dtype} where "
                                f"{t.dtype} is expected")
        outs = [np.empty(s, t.dtype)
                for s, t in zip(self.output_shapes(dims), self.kernel.output_types)]
        self.function(*arrays, *outs, dims=dims)
        return outs


def compile_kernels(kernels: list, flags=None) -> dict:
    """``{kernel name: NativeKernel}`` from one compiled translation unit."""
    path = compile_source(render_module(kernels), flags=flags, name="tir_kernels")
    lib = SharedLibrary(path)
    return {k.name: NativeKernel(k, lib.kernel(k.name)) for k in kernels}
