"""VM bytecode: the ``Opcode`` enum, instruction records and the disassembler.

An instruction is ``Instruction(op, args)`` where ``args`` is a tuple of ints (registers,
indices, jump offsets) and tuples of ints (register lists, shapes). Jump offsets are
relative to the instruction, as in Relay's VM.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Opcode(IntEnum):
    Move = 0            # dst, src
    Ret = 1             # result
    Invoke = 2          # func_index, (args...), dst
    InvokeClosure = 3   # closure, (args...), dst
    InvokePacked = 4    # kernel_index, (inputs...), (outputs...)
    AllocTensor = 5     # dst, shape, dtype[, storage register, byte offset: liveness.py]
    AllocADT = 6        # dst, constructor_index (-1: tuple), (fields...)
    AllocClosure = 7    # dst, func_index, (captured...)
    GetField = 8        # dst, obj, index
    GetTag = 9          # dst, obj
    If = 10             # test, target, true_offset, false_offset
    Goto = 11           # offset
    LoadConst = 12      # dst, const_index
    LoadConsti = 13     # dst, value
    Fatal = 14          # message_index
    KillRegister = 15   # (registers...), (pooled...): drop values; pooled: reuse (liveness.py)
    # dynamic shapes (shape_func.py)
    InvokeShapeFunc = 16      # shape_func_index, (inputs...), dst: tuple of output shapes
    AllocTensorReg = 17       # dst, shape register, dtype
    ReshapeTensor = 18        # dst, tensor, shape register: a view, no copy
    InvokeDataDependent = 19  # kernel_index, (inputs...), dst: tuple of fresh outputs
    ShapeOf = 20              # dst, tensor, dtype: its shape as a 1-D tensor
    AllocStorage = 21   # dst, nbytes, alignment, slot: the frame arena's buffer ``slot``
    # references (Relay's ``ref(v)``, ``r^``, ``r := v``): a cell is ``runtime.values.RefValue``
    RefCreate = 22      # dst, src: a fresh mutable cell holding the value of src
    RefRead = 23        # dst, ref: the value the cell holds now
    RefWrite = 24       # ref, src[, dst]: the cell now holds src; dst, if any, gets the unit ()


@dataclass(frozen=True, slots=True)
class Instruction:
    op: Opcode
    args: tuple


def _regs(rs) -> str:
    return ", ".join(f"$r{r}" for r in rs)


def format_instruction(ins: Instruction, exe=None) -> str:
    """One line of disassembly; ``exe`` (an ``Executable``) supplies names."""
    op, a = ins.op, ins.args

    def fname(i):
        return exe.functions[i].name if exe is not None else str(i)

    if op is Opcode.Move:
        return f"move $r{a[0]} $r{a[1]}"
    if op is Opcode.Ret:
        return f"ret $r{a[0]}"
    if op is Opcode.Invoke:
        return f"invoke $r{a[2]} @{fname(a[0])}({_regs(a[1])})"
    if op is Opcode.InvokeClosure:
        return f"invoke_closure $r{a[2]} $r{a[0]}({_regs(a[1])})"
    if op is Opcode.InvokePacked:
        name = exe.kernel_names[a[0]] if exe is not None else str(a[0])
        return f"invoke_packed {name} in({_regs(a[1])}) out({_regs(a[2])})"
    if op is Opcode.AllocTensor:
        at = f" storage $r{a[3]} offset {a[4]}" if len(a) > 3 else ""  # a planned view
        return f"alloc_tensor $r{a[0]} {list(a[1])} {a[2]}{at}"
    if op is Opcode.AllocStorage:
        return f"alloc_storage $r{a[0]} {a[1]} bytes align {a[2]} slot {a[3]}"
    if op is Opcode.AllocADT:
        if a[1] < 0:
            return f"alloc_tuple $r{a[0]} ({_regs(a[2])})"
        name = exe.constructors[a[1]].name_hint if exe is not None else f"#{a[1]}"
        return f"alloc_adt $r{a[0]} {name}({_regs(a[2])})"
    if op is Opcode.AllocClosure:
        return f"alloc_closure $r{a[0]} @{fname(a[1])}({_regs(a[2])})"
    if op is Opcode.GetField:
        return f"get_field $r{a[0]} $r{a[1]}[{a[2]}]"
    if op is Opcode.GetTag:
        return f"get_tag $r{a[0]} $r{a[1]}"
    if op is Opcode.If:
        return f"if $r{a[0]} == $r{a[1]} then +{a[2]} else +{a[3]}"
    if op is Opcode.Goto:
        return f"goto {a[0]:+d}"
    if op is Opcode.LoadConst:
        return f"load_const $r{a[0]} const[{a[1]}]"
    if op is Opcode.LoadConsti:
        return f"load_consti $r{a[0]} {a[1]}"
    if op is Opcode.Fatal:
        msg = exe.messages[a[0]] if exe is not None else str(a[0])
        return f"fatal {msg!r}"
    if op is Opcode.KillRegister:
        pooled = f" (to pool: {_regs(a[1])})" if len(a) > 1 and a[1] else ""
        return f"kill {_regs(a[0])}{pooled}"
    if op is Opcode.InvokeShapeFunc:
        name = exe.shape_funcs[a[0]].name if exe is not None else str(a[0])
        return f"invoke_shape_func $r{a[2]} {name}({_regs(a[1])})"
    if op is Opcode.AllocTensorReg:
        return f"alloc_tensor_reg $r{a[0]} shape $r{a[1]} {a[2]}"
    if op is Opcode.ReshapeTensor:
        return f"reshape_tensor $r{a[0]} $r{a[1]} shape $r{a[2]}"
    if op is Opcode.InvokeDataDependent:
        name = exe.kernel_names[a[0]] if exe is not None else str(a[0])
        return f"invoke_data_dependent $r{a[2]} {name}({_regs(a[1])})"
    if op is Opcode.ShapeOf:
        return f"shape_of $r{a[0]} $r{a[1]} {a[2]}"
    if op is Opcode.RefCreate:
        return f"ref_create $r{a[0]} $r{a[1]}"
    if op is Opcode.RefRead:
        return f"ref_read $r{a[0]} $r{a[1]}"
    if op is Opcode.RefWrite:
        unit = f" unit $r{a[2]}" if len(a) > 2 else ""  # liveness drops an unread unit
        return f"ref_write $r{a[0]} $r{a[1]}{unit}"
    raise ValueError(f"unknown opcode {op}")


@dataclass
class VMFunction:
    """One compiled function: ``params`` registers are ``0..num_params-1``."""

    name: str
    param_names: tuple
    param_types: tuple
    instructions: list
    num_regs: int
    closure: bool = False  # parameters are captured values then the closure's own


class Bytecode:
    """What ``exe.bytecode`` is: ``str()`` disassembles every function."""

    def __init__(self, exe):
        self.exe = exe

    def function_text(self, name: str) -> str:
        fn = self.exe.functions[self.exe.func_index[name]]
        params = ", ".join(f"$r{i}" for i in range(len(fn.param_names)))
        lines = [f"VM Function[{self.exe.func_index[name]}]: {fn.name}({params})"
                 + (" closure" if fn.closure else ""),
                 f"# reg file size = {fn.num_regs}",
                 f"# instruction count = {len(fn.instructions)}"]
        for i, ins in enumerate(fn.instructions):
            lines.append(f"{i}: {format_instruction(ins, self.exe)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return "\n\n".join(self.function_text(f.name) for f in self.exe.functions) + "\n"

    __repr__ = __str__


__all__ = ["Bytecode", "Instruction", "Opcode", "VMFunction", "format_instruction"]
