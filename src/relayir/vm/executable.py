"""``Executable``: the bytecode of every function, the constant pool and the kernels."""

from __future__ import annotations

from .bytecode import Bytecode


class Executable:
    def __init__(self, functions, constants, kernels, kernel_names, constructors, messages,
                 kernel_library=None, target: str = "numpy"):
        self.functions = functions          # list[VMFunction]
        self.func_index = {f.name: i for i, f in enumerate(functions)}
        self.constants = constants          # list[np.ndarray]
        self.kernels = kernels              # list[Kernel], by index
        self.kernel_names = kernel_names
        self.constructors = constructors    # list[Constructor], by index
        self.messages = messages            # Fatal messages
        self.kernel_library = kernel_library
        self.target = target

    @property
    def bytecode(self) -> Bytecode:
        return Bytecode(self)

    def __repr__(self) -> str:
        return (f"<Executable {len(self.functions)} functions, {len(self.kernels)} kernels, "
                f"{len(self.constants)} constants, target {self.target}>")


__all__ = ["Executable"]
