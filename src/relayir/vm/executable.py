"""``Executable``: the bytecode of every function, the constant pool and the kernels.

``exe.save(path)`` / ``Executable.load(path)`` write and read it as one file without
pickle (``serialize.py``); loading compiles nothing.
"""

from __future__ import annotations

import os

from .bytecode import Bytecode


class Executable:
    def __init__(self, functions, constants, kernels, kernel_names, constructors, messages,
                 kernel_library=None, target: str = "numpy", shape_funcs=None):
        self.functions = functions          # list[VMFunction]
        self.func_index = {f.name: i for i, f in enumerate(functions)}
        self.constants = constants          # list[np.ndarray]
        self.kernels = kernels              # list[Kernel | None], by index
        self.kernel_names = kernel_names
        self.constructors = constructors    # list[Constructor], by index
        self.messages = messages            # Fatal messages
        self.kernel_library = kernel_library
        self.target = target
        self.shape_funcs = list(shape_funcs or [])  # ShapeFunction, by index (shape_func.py)

    @property
    def bytecode(self) -> Bytecode:
        return Bytecode(self)

    def save(self, path: str | os.PathLike) -> None:
        """Write this executable to ``path`` as one archive (atomically)."""
        from .serialize import save

        save(self, path)

    @staticmethod
    def load(path: str | os.PathLike) -> Executable:
        """Read an executable written by ``save``; a wrong file or a newer format
        version is a ``relayir.runtime.module.ModuleFormatError``."""
        from .serialize import load

        return load(path)

    def storage_bytes(self) -> int:
        """Bytes of the ``AllocStorage`` buffers of one activation of every function (the
        arena the VM reuses across calls; planned by ``liveness.py``)."""
        from .liveness import storage_bytes

        return sum(storage_bytes(f) for f in self.functions)

    def __repr__(self) -> str:
        return (f"<Executable {len(self.functions)} functions, {len(self.kernels)} kernels, "
                f"{len(self.constants)} constants, target {self.target}>")


__all__ = ["Executable"]
