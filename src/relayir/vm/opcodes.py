"""The VM's opcode table: each opcode's number, disassembly and operands, once.

``Opcode`` is the table. A member is its number (the dispatch code; saved files name
it) and its ``spec``: the operands in order, each with a name and a ``Role`` (which
register it writes or reads, which ``Executable`` list it indexes, or what kind of
immediate it is), the optional trailing ones, and the disassembly text. Everything
that needs to know an opcode's operands reads ``spec``:

- ``bytecode.py``: the disassembler (``format_instruction``) and ``Instruction.operand``;
- ``liveness.py``: defs and uses, register renaming, successors, re-aiming jumps;
- ``decode.py``: turning operands into the objects the dispatch loop uses, jump targets;
- ``serialize.py``: load-time validation of every operand.

So adding an operand to an opcode is one change here, plus the compiler that emits it
and the interpreter's handler that runs it (``tests/vm/test_opcode_table.py`` checks
that every reader covers every opcode and role).
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

# how an instruction touches the register(s) an operand names
DEF = "def"    # writes it
USE = "use"    # reads it (a kernel's outputs too: it fills their tensors in place)
KILL = "kill"  # clears it: to liveness, a last read


@dataclass(frozen=True, eq=False)  # roles compare (and hash) by identity
class Role:
    """What an operand is. ``register``: ``DEF`` / ``USE`` / ``KILL`` for a register
    operand (``many``: a tuple of registers); ``table``: the ``Executable`` list an index
    operand points into, ``first`` its least valid value."""

    name: str
    register: str | None = None
    many: bool = False
    table: str | None = None
    first: int = 0

    def __call__(self, name: str) -> Operand:
        return Operand(name, self)

    def __repr__(self) -> str:
        return f"<role {self.name}>"


DST = Role("destination register", register=DEF)
SRC = Role("source register", register=USE)
SRCS = Role("registers read", register=USE, many=True)
OUTS = Role("output registers (tensors filled in place)", register=USE, many=True)
KILLS = Role("registers cleared", register=KILL, many=True)
IMM = Role("immediate int")
SHAPE = Role("shape")
DTYPE = Role("dtype")
JUMP = Role("jump offset")  # relative to the instruction, as in Relay's VM
FUNC = Role("function index", table="functions")
KERNEL = Role("kernel index", table="kernels")
CONST = Role("constant index", table="constants")
SHAPE_FUNC = Role("shape function index", table="shape_funcs")
CTOR = Role("constructor index", table="constructors", first=-1)  # -1: a tuple
MESSAGE = Role("message index", table="messages")
ROLES = (DST, SRC, SRCS, OUTS, KILLS, IMM, SHAPE, DTYPE, JUMP, FUNC, KERNEL, CONST,
         SHAPE_FUNC, CTOR, MESSAGE)


@dataclass(frozen=True, slots=True)
class Operand:
    name: str
    role: Role


@dataclass(frozen=True)
class OpcodeSpec:
    """An opcode's operands in order: the first ``required`` always present, the rest
    (its optional operands) all present or all absent. ``text`` formats the operands
    by name into one line of disassembly (a callable picks the template from the raw
    operands by name); ``optional_text`` is appended when the optional operands are
    present and none of them is an empty register tuple. ``falls_through``: control
    may go on to the next instruction (besides its jumps)."""

    text: str | Callable[[dict], str]
    operands: tuple[Operand, ...]
    required: int
    optional_text: str = ""
    falls_through: bool = True
    # derived from ``operands`` once: what liveness and the decoder ask per instruction
    index: dict[str, int] = field(init=False, repr=False, compare=False)
    registers: tuple[tuple[int, str, bool], ...] = field(init=False, repr=False,
                                                         compare=False)
    jumps: tuple[int, ...] = field(init=False, repr=False, compare=False)

    @staticmethod
    def of(text: str | Callable[[dict], str], *operands: Operand,
           optional: tuple[Operand, ...] = (), optional_text: str = "",
           falls_through: bool = True) -> OpcodeSpec:
        return OpcodeSpec(text, tuple(operands) + tuple(optional), len(operands),
                          optional_text, falls_through)

    def __post_init__(self):
        names = [o.name for o in self.operands]
        if len(set(names)) != len(names):
            raise ValueError(f"opcode operands {names}: names repeat")
        required, optional = set(names[:self.required]), set(names[self.required:])
        if isinstance(self.text, str) and _fields(self.text) != required:
            raise ValueError(f"disassembly {self.text!r} must name each of the operands "
                             f"{sorted(required)} and no other")
        if _fields(self.optional_text) != optional:
            raise ValueError(f"optional disassembly {self.optional_text!r} must name each "
                             f"of the optional operands {sorted(optional)} and no other")
        object.__setattr__(self, "index", {n: i for i, n in enumerate(names)})
        object.__setattr__(self, "registers", tuple(
            (i, o.role.register, o.role.many) for i, o in enumerate(self.operands)
            if o.role.register is not None))
        object.__setattr__(self, "jumps", tuple(
            i for i, o in enumerate(self.operands) if o.role is JUMP))

    @property
    def arities(self) -> tuple[int, ...]:
        """The valid operand counts: without and with the optional operands."""
        return tuple(sorted({self.required, len(self.operands)}))

    def defs_uses(self, args: tuple) -> tuple[list[int], list[int]]:
        """The registers ``args`` write, and those they read (cleared ones: read)."""
        defs, uses = [], []
        n = len(args)
        for i, access, many in self.registers:
            if i >= n:
                break  # optional operands left out
            out = defs if access == DEF else uses
            if many:
                out.extend(args[i])
            else:
                out.append(args[i])
        return defs, uses

    def clobbered(self, args: tuple) -> list[int]:
        """The registers whose value ``args`` change (written or cleared)."""
        out: list[int] = []
        for i, access, many in self.registers:
            if i < len(args) and access != USE:
                out.extend(args[i] if many else (args[i],))
        return out

    def renamed(self, args: tuple, new: dict[int, int]) -> tuple:
        """``args`` with every register ``r`` replaced by ``new[r]``."""
        out = list(args)
        for i, _, many in self.registers:
            if i < len(out):
                out[i] = tuple(new[r] for r in out[i]) if many else new[out[i]]
        return tuple(out)

    def successors(self, pc: int, args: tuple) -> tuple[int, ...]:
        """Where control goes after the instruction at ``pc``: its jumps, in operand
        order, then the next instruction if it falls through."""
        targets = tuple(pc + args[i] for i in self.jumps)
        return targets + (pc + 1,) if self.falls_through else targets


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template)
            if name is not None}


def _alloc_adt_text(operands: dict) -> str:
    if operands["ctor"] < 0:
        return "alloc_tuple {dst} ({fields})"
    return "alloc_adt {dst} {ctor}({fields})"


_op = OpcodeSpec.of


class Opcode(IntEnum):
    """Every VM opcode: its number, then its ``OpcodeSpec``."""

    spec: OpcodeSpec

    def __new__(cls, number: int, spec: OpcodeSpec):
        member = int.__new__(cls, number)
        member._value_ = number
        member.spec = spec
        return member

    Move = 0, _op("move {dst} {src}", DST("dst"), SRC("src"))
    Ret = 1, _op("ret {result}", SRC("result"), falls_through=False)
    Invoke = 2, _op("invoke {dst} @{func}({args})", FUNC("func"), SRCS("args"), DST("dst"))
    InvokeClosure = 3, _op("invoke_closure {dst} {closure}({args})",
                           SRC("closure"), SRCS("args"), DST("dst"))
    InvokePacked = 4, _op("invoke_packed {kernel} in({inputs}) out({outputs})",
                          KERNEL("kernel"), SRCS("inputs"), OUTS("outputs"))
    # with storage and offset (liveness.py plans them): a view of that storage's buffer
    AllocTensor = 5, _op("alloc_tensor {dst} {shape} {dtype}",
                         DST("dst"), SHAPE("shape"), DTYPE("dtype"),
                         optional=(SRC("storage"), IMM("offset")),
                         optional_text=" storage {storage} offset {offset}")
    AllocADT = 6, _op(_alloc_adt_text, DST("dst"), CTOR("ctor"), SRCS("fields"))
    AllocClosure = 7, _op("alloc_closure {dst} @{func}({captured})",
                          DST("dst"), FUNC("func"), SRCS("captured"))
    GetField = 8, _op("get_field {dst} {obj}[{index}]", DST("dst"), SRC("obj"), IMM("index"))
    GetTag = 9, _op("get_tag {dst} {obj}", DST("dst"), SRC("obj"))
    If = 10, _op("if {test} == {target} then +{true} else +{false}",
                 SRC("test"), SRC("target"), JUMP("true"), JUMP("false"), falls_through=False)
    Goto = 11, _op("goto {offset:+d}", JUMP("offset"), falls_through=False)
    LoadConst = 12, _op("load_const {dst} const[{const}]", DST("dst"), CONST("const"))
    LoadConsti = 13, _op("load_consti {dst} {value}", DST("dst"), IMM("value"))
    Fatal = 14, _op("fatal {message!r}", MESSAGE("message"), falls_through=False)
    # drop values; pooled (a subset): their tensors go back to the pool (liveness.py)
    KillRegister = 15, _op("kill {registers}", KILLS("registers"),
                           optional=(KILLS("pooled"),), optional_text=" (to pool: {pooled})")
    # dynamic shapes (shape_func.py). InvokeShapeFunc: dst gets a tuple of output shapes;
    # ReshapeTensor: a view, no copy; InvokeDataDependent: dst gets a tuple of fresh
    # outputs; ShapeOf: the tensor's shape as a 1-D tensor
    InvokeShapeFunc = 16, _op("invoke_shape_func {dst} {shape_func}({inputs})",
                              SHAPE_FUNC("shape_func"), SRCS("inputs"), DST("dst"))
    AllocTensorReg = 17, _op("alloc_tensor_reg {dst} shape {shape} {dtype}",
                             DST("dst"), SRC("shape"), DTYPE("dtype"))
    ReshapeTensor = 18, _op("reshape_tensor {dst} {tensor} shape {shape}",
                            DST("dst"), SRC("tensor"), SRC("shape"))
    InvokeDataDependent = 19, _op("invoke_data_dependent {dst} {kernel}({inputs})",
                                  KERNEL("kernel"), SRCS("inputs"), DST("dst"))
    ShapeOf = 20, _op("shape_of {dst} {tensor} {dtype}",
                      DST("dst"), SRC("tensor"), DTYPE("dtype"))
    # the frame arena's buffer ``slot``
    AllocStorage = 21, _op("alloc_storage {dst} {nbytes} bytes align {alignment} slot {slot}",
                           DST("dst"), IMM("nbytes"), IMM("alignment"), IMM("slot"))
    # references (``ref(v)``, ``r^``, ``r := v``): a cell is ``runtime.values.RefValue``
    RefCreate = 22, _op("ref_create {dst} {src}", DST("dst"), SRC("src"))
    RefRead = 23, _op("ref_read {dst} {ref}", DST("dst"), SRC("ref"))
    # the cell is mutated, not redefined (a read); dst, if any, gets the unit ()
    RefWrite = 24, _op("ref_write {ref} {src}", SRC("ref"), SRC("src"),
                       optional=(DST("dst"),), optional_text=" unit {dst}")


__all__ = ["CONST", "CTOR", "DEF", "DST", "DTYPE", "FUNC", "IMM", "JUMP", "KERNEL", "KILL",
           "KILLS", "MESSAGE", "OUTS", "ROLES", "SHAPE", "SHAPE_FUNC", "SRC", "SRCS", "USE",
           "Opcode", "OpcodeSpec", "Operand", "Role"]
