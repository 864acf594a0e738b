"""VM bytecode: instruction records, functions and the disassembler.

An instruction is ``Instruction(op, args)`` where ``args`` is a tuple of ints (registers,
indices, jump offsets), tuples of ints (register lists, shapes) and dtype strings, in
the order ``op.spec`` gives (``opcodes.py``, the opcode table). Jump offsets are
relative to the instruction, as in Relay's VM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .opcodes import (
    CONST,
    CTOR,
    DST,
    DTYPE,
    FUNC,
    IMM,
    JUMP,
    KERNEL,
    KILLS,
    MESSAGE,
    OUTS,
    SHAPE,
    SHAPE_FUNC,
    SRC,
    SRCS,
    Opcode,
)


@dataclass(frozen=True, slots=True)
class Instruction:
    op: Opcode
    args: tuple

    def operand(self, name: str):
        """The operand the opcode's table entry calls ``name``; ``None`` for an optional
        one left out."""
        i = self.op.spec.index[name]
        return self.args[i] if i < len(self.args) else None


def _regs(rs, exe=None) -> str:
    return ", ".join(f"$r{r}" for r in rs)


def _reg(r, exe=None) -> str:
    return f"$r{r}"


def _raw(value, exe=None):
    return value  # the template formats it (``goto {offset:+d}``)


def _shape(shape, exe=None) -> list:
    return list(shape)


def _name_in(table: str, attr: str | None = None, unnamed: str = "{}"):
    """An index operand written as the name of what it indexes in ``exe.<table>``."""

    def text(i, exe=None):
        if exe is None:
            return unnamed.format(i)
        item = getattr(exe, table)[i]
        return item if attr is None else getattr(item, attr)

    return text


_constructor_name = _name_in("constructors", "name_hint", "#{}")


def _constructor(i, exe=None) -> str:
    return "tuple" if i < 0 else _constructor_name(i, exe)


# how the disassembler writes an operand of each role
_TEXT = {DST: _reg, SRC: _reg, SRCS: _regs, OUTS: _regs, KILLS: _regs, IMM: _raw,
         JUMP: _raw, CONST: _raw, DTYPE: _raw, SHAPE: _shape,
         FUNC: _name_in("functions", "name"), KERNEL: _name_in("kernel_names"),
         SHAPE_FUNC: _name_in("shape_funcs", "name"), CTOR: _constructor,
         MESSAGE: _name_in("messages")}


def format_instruction(ins: Instruction, exe=None) -> str:
    """One line of disassembly (the opcode table's ``text``); ``exe`` (an
    ``Executable``) supplies names of functions, kernels, constructors, messages."""
    spec, args = ins.op.spec, ins.args
    operands = spec.operands[:len(args)]
    values = {o.name: _TEXT[o.role](a, exe) for o, a in zip(operands, args)}
    text = spec.text if isinstance(spec.text, str) else \
        spec.text({o.name: a for o, a in zip(operands, args)})
    line = text.format(**values)
    optional = tuple(zip(operands[spec.required:], args[spec.required:]))
    if optional and not any(o.role.many and not a for o, a in optional):
        line += spec.optional_text.format(**values)  # an empty pool list: nothing to say
    return line


@dataclass
class VMFunction:
    """One compiled function: ``params`` registers are ``0..num_params-1``."""

    name: str
    param_names: tuple
    param_types: tuple
    instructions: list
    num_regs: int
    closure: bool = False  # parameters are captured values then the closure's own
    # symbolic dim name -> (lo, hi or None): the range an input dim must lie in
    # (``@main``'s ``dim_ranges`` attribute; checked by ``shape_func.bind_input_dims``)
    dim_ranges: dict = field(default_factory=dict)


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
