"""The Relay virtual machine: bytecode compiler and interpreter.

``compile(mod, target, params) -> Executable`` (``liveness.py`` reuses registers and
storage); ``exe.save(path)`` / ``Executable.load(path)``; ``VirtualMachine(exe)``:
``run(*args)``, ``invoke(name, *args)``, ``set_input``, ``benchmark``, ``profile``;
``relayir.create_executor("vm", mod, target=...)`` wraps them.
"""

from __future__ import annotations

from .bytecode import Bytecode, Instruction, Opcode, VMFunction
from .compiler import VMCompileError, compile  # noqa: A004
from .executable import Executable
from .interpreter import VirtualMachine, VMClosure, VMError
from .model import VMModel
from .profiler import VMProfileReport

__all__ = ["Bytecode", "Executable", "Instruction", "Opcode", "VMClosure", "VMCompileError",
           "VMError", "VMFunction", "VMModel", "VMProfileReport", "VirtualMachine", "compile"]
