"""``VirtualMachine``: runs an ``Executable``'s bytecode.

The dispatch loop runs over pre-decoded instructions (``(opcode, a, b, c, d)`` tuples
of plain ints), with one register list per frame and an explicit frame stack: a Relay
call pushes a frame, ``Ret`` pops it, so Relay recursion never recurses in Python.
"""

from __future__ import annotations

import numpy as np

from ..errors import Error
from ..executor import check_tensor_arg
from ..ir.types import TensorType, TupleType
from ..runtime.values import ConstructorValue
from .bytecode import Opcode


class VMError(Error):
    """A run-time failure of the VM (a failed match, a failed kernel, a bad input)."""


class VMClosure:
    """A closure: a VM function index and its captured values."""

    __slots__ = ("func", "env")

    def __init__(self, func: int, env: tuple):
        self.func = func
        self.env = env

    def __repr__(self) -> str:
        return f"<vm closure of function {self.func}, {len(self.env)} captured>"


_MOVE, _RET, _INVOKE, _INVOKE_CLOSURE, _INVOKE_PACKED, _ALLOC_TENSOR, _ALLOC_ADT, \
    _ALLOC_CLOSURE, _GET_FIELD, _GET_TAG, _IF, _GOTO, _LOAD_CONST, _LOAD_CONSTI, _FATAL = \
    (int(o) for o in Opcode)


def _decode(ins, exe) -> tuple:
    op, a = ins.op, ins.args
    if op is Opcode.AllocTensor:
        return (_ALLOC_TENSOR, a[0], a[1], np.dtype(a[2]), None)
    if op is Opcode.AllocADT:
        ctor = exe.constructors[a[1]] if a[1] >= 0 else None
        return (_ALLOC_ADT, a[0], ctor, a[2], None)
    if op is Opcode.InvokePacked:
        kernel = exe.kernels[a[0]]  # arrays come from typed AllocTensor and checked inputs
        return (_INVOKE_PACKED, kernel.call_unchecked, a[1] + a[2], exe.kernel_names[a[0]], None)
    if op is Opcode.LoadConst:
        return (_LOAD_CONST, a[0], exe.constants[a[1]], None, None)
    if op is Opcode.Fatal:
        return (_FATAL, exe.messages[a[0]], None, None, None)
    return (int(op),) + tuple(a) + (None,) * (4 - len(a))


class VirtualMachine:
    def __init__(self, exe, device=None):
        self.exe = exe
        self.code = [[_decode(i, exe) for i in f.instructions] for f in exe.functions]
        self.num_regs = [f.num_regs for f in exe.functions]

    # -- entry points
    def invoke(self, name: str, *args):
        exe = self.exe
        if name not in exe.func_index:
            raise VMError(f"the executable has no function @{name}")
        idx = exe.func_index[name]
        fn = exe.functions[idx]
        if fn.closure:
            raise VMError(f"@{name} is a closure's body; it cannot be invoked by name")
        if len(args) != len(fn.param_names):
            raise VMError(f"@{name} takes {len(fn.param_names)} inputs, found {len(args)}")
        checked = [_check_arg(f"{n} of @{name}", t, a)
                   for n, t, a in zip(fn.param_names, fn.param_types, args)]
        return self._run(idx, checked)

    def run(self, *args):
        return self.invoke("main", *args)

    # -- the dispatch loop
    def _run(self, func: int, args: list):
        codes = self.code
        nregs = self.num_regs
        code = codes[func]
        regs = args + [None] * (nregs[func] - len(args))
        pc = 0
        stack: list = []  # (code, regs, pc to resume at, caller's destination register)
        while True:
            op, a, b, c, d = code[pc]
            if op == _INVOKE_PACKED:
                arrays = [regs[r] for r in b]
                status = a(*arrays)
                if status:
                    raise VMError(f"kernel {c} failed with status {status}")
                pc += 1
            elif op == _ALLOC_TENSOR:
                regs[a] = np.empty(b, c)
                pc += 1
            elif op == _MOVE:
                regs[a] = regs[b]
                pc += 1
            elif op == _GET_FIELD:
                obj = regs[b]
                regs[a] = obj[c] if type(obj) is tuple else obj.fields[c]
                pc += 1
            elif op == _GET_TAG:
                regs[a] = regs[b].tag
                pc += 1
            elif op == _LOAD_CONSTI:
                regs[a] = b
                pc += 1
            elif op == _IF:
                pc += c if bool(regs[a] == regs[b]) else d
            elif op == _GOTO:
                pc += a
            elif op == _LOAD_CONST:
                regs[a] = b
                pc += 1
            elif op == _ALLOC_ADT:
                fields = tuple([regs[r] for r in c])
                regs[a] = fields if b is None else ConstructorValue(b.tag, fields, b)
                pc += 1
            elif op == _ALLOC_CLOSURE:
                regs[a] = VMClosure(b, tuple([regs[r] for r in c]))
                pc += 1
            elif op == _INVOKE:
                new = [regs[r] for r in b]
                new.extend([None] * (nregs[a] - len(new)))
                stack.append((code, regs, pc + 1, c))
                code = codes[a]
                regs = new
                pc = 0
            elif op == _INVOKE_CLOSURE:
                clo = regs[a]
                callee = clo.func
                new = list(clo.env)
                new.extend([regs[r] for r in b])
                new.extend([None] * (nregs[callee] - len(new)))
                stack.append((code, regs, pc + 1, c))
                code = codes[callee]
                regs = new
                pc = 0
            elif op == _RET:
                value = regs[a]
                if not stack:
                    return value
                code, regs, pc, dst = stack.pop()
                regs[dst] = value
            elif op == _FATAL:
                raise VMError(a)
            else:
                raise VMError(f"unknown opcode {op}")


def _check_arg(name: str, ty, value):
    if isinstance(ty, TensorType):
        return check_tensor_arg(name, ty, value)
    if isinstance(ty, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(ty.fields):
            raise VMError(f"input {name}: expected a tuple of {len(ty.fields)} fields, "
                          f"found {type(value).__name__}")
        return tuple(_check_arg(f"{name}[{i}]", t, v)
                     for i, (t, v) in enumerate(zip(ty.fields, value)))
    return value


__all__ = ["VMClosure", "VMError", "VirtualMachine"]
