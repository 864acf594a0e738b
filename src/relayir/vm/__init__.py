"""The Relay virtual machine: bytecode compiler and interpreter.

``compile(mod, target, params) -> Executable`` (``liveness.py`` reuses registers and
storage); ``exe.save(path)`` / ``Executable.load(path)``; ``VirtualMachine(exe)``:
``run(*args)``, ``invoke(name, *args)``, ``set_input``, ``benchmark``, ``profile``;
``create_executor("vm", mod, target=...)``.
"""

from __future__ import annotations

from ..errors import Error
from ..executor import register_executor
from .bytecode import Bytecode, Instruction, Opcode, VMFunction
from .compiler import VMCompileError, compile  # noqa: A004
from .executable import Executable
from .interpreter import VirtualMachine, VMClosure, VMError
from .profiler import VMProfileReport


class VMExecutor:
    """``create_executor("vm", mod, target=...)``: compiles ``@main`` once."""

    def __init__(self, mod, target: str = "numpy", device=None):
        self.mod = mod
        self.target = target
        self.executable = None
        self.vm = None

    def evaluate(self, expr=None):
        if expr is not None:
            raise Error("the vm executor evaluates the module's @main only")
        if self.vm is None:
            self.executable = compile(self.mod, target=self.target)
            self.vm = VirtualMachine(self.executable)
        vm = self.vm
        params = self.executable.functions[self.executable.func_index["main"]].param_names

        def run(*args, **kwargs):
            args = list(args)
            for p in params[len(args):]:
                if p not in kwargs:
                    raise Error(f"missing input {p}")
                args.append(kwargs.pop(p))
            if kwargs:
                raise Error(f"unknown inputs {', '.join(kwargs)}")
            return vm.run(*args)

        return run


register_executor("vm", VMExecutor)

__all__ = ["Bytecode", "Executable", "Instruction", "Opcode", "VMClosure", "VMCompileError",
           "VMError", "VMExecutor", "VMFunction", "VMProfileReport", "VirtualMachine", "compile"]
