"""Recording a VM run instruction by instruction: ``VirtualMachine.trace(...)``.

A traced run is the ordinary dispatch loop over a program of its own: the plain code
(one dispatch per instruction, as the profiler runs it) with a *marker* before every
instruction, a dispatch tuple ``(TRACE, recorder, function, pc, None)`` whose handler
hands the frame's registers to the recorder. Markers double every function's length,
so each jump offset is re-aimed to land on its target's marker; a call resumes at
``pc + 1`` of the call, which is the next instruction's marker. The code a normal run
dispatches has no markers, so a run that is not traced pays nothing for this.

At a marker, the previous instruction has just run: the recorder reads the registers it
wrote (the opcode table's ``DEF`` operands, a kernel's outputs, a callee's parameters on
entry, the caller's destination after ``ret``; those ``kill`` drops as ``CLEARED``) and
keeps a summary of each value (type, and a few numbers or the constructor), made then,
because planned storage is reused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime.values import ConstructorValue, RefValue
from .bytecode import format_instruction
from .opcodes import DEF, KILL, OUTS, Opcode

TRACE = 120  # a marker's dispatch code: above every opcode and decoder variant
RESULT = -1  # the "register" a trace step writes when it returns to Python
CLEARED = "(cleared)"  # the value of a register a kill dropped
_TEXT_BUDGET = 160  # characters of an ADT / tuple summary
_SHOWN = 6  # elements printed in full for a tensor this small


@dataclass(frozen=True)
class TraceStep:
    """One executed instruction: the frame ``depth`` (0: the function called from
    Python), the function's index and ``pc``, and the registers it wrote as
    ``(register, type, value)`` texts (``RESULT`` for the value returned to Python)."""

    depth: int
    func: int
    pc: int
    writes: tuple[tuple[int, str, str], ...]


@dataclass(frozen=True)
class VMTrace:
    """The steps of one run (the first ``limit`` of them), its result, and whether the
    run went on past the limit (``truncated``)."""

    exe: object
    steps: tuple[TraceStep, ...]
    result: object
    truncated: bool

    def instruction_text(self, step: TraceStep) -> str:
        fn = self.exe.functions[step.func]
        return format_instruction(fn.instructions[step.pc], self.exe)

    def format(self, limit: int | None = None) -> str:
        """One line per step: ``@function pc: instruction  $rN = value ...``."""
        lines = []
        for step in self.steps[:limit]:
            name = self.exe.functions[step.func].name
            writes = "  ".join(f"{'result' if r == RESULT else f'$r{r}'} = {v}"
                               for r, _, v in step.writes)
            lines.append(f"{'  ' * step.depth}@{name} {step.pc}: "
                         f"{self.instruction_text(step)}" + (f"   {writes}" if writes else ""))
        if self.truncated:
            lines.append(f"... the run went on past the first {len(self.steps)} steps")
        return "\n".join(lines)


class TraceRecorder:
    """What a traced run's markers call: ``recorder(func, pc, regs)``."""

    def __init__(self, exe, limit: int, closure_type: type | None = None):
        self.exe = exe
        self.instructions = [f.instructions for f in exe.functions]
        self.limit = limit
        self.closure_type = closure_type
        self.steps: list[list] = []  # [depth, func, pc, writes]
        self.truncated = False
        self._pending = None  # the last step's Instruction, its writes still to read
        self._depth = 0
        self._returns: list[int] = []  # destination register of each call in progress

    def __call__(self, func: int, pc: int, regs: list) -> None:
        if self._pending is not None:
            self._finish(regs)
        if len(self.steps) >= self.limit:
            self.truncated = True
            return
        self._pending = self.instructions[func][pc]
        self.steps.append([self._depth, func, pc, ()])

    def _finish(self, regs: list) -> None:
        ins, self._pending = self._pending, None
        op = ins.op
        written: list[int] = []
        cleared: list[int] = []
        if op in (Opcode.Invoke, Opcode.InvokeClosure):  # now in the callee's frame
            self._returns.append(ins.operand("dst"))
            self._depth += 1
            written = [r for r in range(len(regs)) if regs[r] is not None]  # its parameters
        elif op is Opcode.Ret:  # back in the caller's frame
            self._depth -= 1
            written = [self._returns.pop()]
        else:
            for o, a in zip(op.spec.operands, ins.args):
                if o.role.register == DEF or o.role is OUTS:
                    written.extend(a if o.role.many else (a,))
                elif o.role.register == KILL:
                    cleared.extend(a if o.role.many else (a,))
        self.steps[-1][3] = tuple((r, *self._summary(op, regs[r])) for r in written) + \
            tuple((r, "", CLEARED) for r in dict.fromkeys(cleared))

    def _summary(self, op: Opcode, value) -> tuple[str, str]:
        if op in (Opcode.AllocTensor, Opcode.AllocTensorReg) and isinstance(value, np.ndarray):
            return tensor_type(value), "allocated"
        if op is Opcode.AllocStorage and isinstance(value, np.ndarray):
            return "storage", f"{value.nbytes} bytes"
        return summarize(value, self.exe, self.closure_type)

    def finish(self, result) -> VMTrace:
        """The trace of a run that returned ``result`` to Python."""
        if self._pending is not None:  # the outermost ret
            self._pending = None
            self.steps[-1][3] = ((RESULT, *summarize(result, self.exe, self.closure_type)),)
        steps = tuple(TraceStep(d, f, pc, w) for d, f, pc, w in self.steps)
        return VMTrace(self.exe, steps, result, self.truncated)


def traced_code(plain: list[list[tuple]], recorder: TraceRecorder) -> list[list[tuple]]:
    """Every function's plain code with a marker before each instruction, jumps
    re-aimed at the markers."""
    out = []
    for func, code in enumerate(plain):
        traced: list[tuple] = []
        for pc, ins in enumerate(code):
            traced.append((TRACE, recorder, func, pc, None))
            traced.append(_reaimed(ins))
        out.append(traced)
    return out


def _reaimed(ins: tuple) -> tuple:
    """A jump from position ``2i + 1`` by ``k`` instructions goes to the target's marker
    at ``2(i + k)``: by ``2k - 1``."""
    op = ins[0]
    if op not in _JUMPS:
        return ins
    out = list(ins)
    for p in _JUMPS[op]:
        out[p + 1] = 2 * out[p + 1] - 1
    return tuple(out)


_JUMPS = {int(op): op.spec.jumps for op in Opcode if op.spec.jumps}


# ---------------------------------------------------------------- value summaries


def tensor_type(a: np.ndarray) -> str:
    return f"{a.dtype.name}[{', '.join(map(str, a.shape))}]" if a.ndim else a.dtype.name


def _number(x) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def tensor_text(a: np.ndarray) -> str:
    """All values of a small tensor; of a big one, its range, mean and first values."""
    if a.size <= _SHOWN:
        return np.array2string(a, precision=4, separator=", ", threshold=_SHOWN)
    flat = a.reshape(-1)
    head = ", ".join(_number(x) for x in flat[:3].tolist())
    if a.dtype.kind in "fc" or a.dtype.kind in "iub":
        lo, hi = flat.min(), flat.max()
        mean = flat.mean(dtype=np.float64)
        return f"[{head}, ...] min {_number(lo.item())} max {_number(hi.item())} " \
               f"mean {mean:.4g}"
    return f"[{head}, ...]"


def summarize(value, exe=None, closure_type: type | None = None) -> tuple[str, str]:
    """``(type, value)`` texts of a run-time value. ADT values and tuples are written
    depth first up to a length budget, with an explicit stack (a long list would
    recurse as deep as it is long)."""
    if isinstance(value, np.ndarray):
        return tensor_type(value), tensor_text(value)
    if isinstance(value, (bool, int, np.integer)):
        return "int", str(int(value))
    if isinstance(value, ConstructorValue):
        kind = value.name
    elif isinstance(value, tuple):
        kind = "tuple"
    elif isinstance(value, RefValue):
        kind = "ref"
    elif closure_type is not None and isinstance(value, closure_type):
        name = exe.functions[value.func].name if exe is not None else f"#{value.func}"
        return "closure", f"closure @{name} ({len(value.env)} captured)"
    else:
        return type(value).__name__, repr(value)[:_TEXT_BUDGET]
    return kind, _structure_text(value)


def _structure_text(value) -> str:
    parts: list[str] = []
    size = 0
    stack: list = [value]  # values to write, and ", " / ")" strings between them
    while stack and size < _TEXT_BUDGET:
        item = stack.pop()
        if isinstance(item, str):
            text = item
        elif isinstance(item, ConstructorValue):
            text = item.name + ("(" if item.fields else "")
            if item.fields:
                stack.append(")")
                stack.extend(_between(item.fields))
        elif isinstance(item, tuple):
            text = "("
            stack.append(")")
            stack.extend(_between(item))
        elif isinstance(item, RefValue):
            text = "ref("
            stack.append(")")
            stack.append(item.value)
        elif isinstance(item, np.ndarray):
            text = np.array2string(item, precision=3, separator=", ", threshold=4) \
                if item.size <= 4 else tensor_type(item)
        else:
            text = repr(item)
        parts.append(text)
        size += len(text)
    return "".join(parts) + ("..." if stack else "")


def _between(fields: tuple) -> list:
    """``fields`` with ", " between them, reversed for a stack."""
    out: list = []
    for i, f in enumerate(fields):
        if i:
            out.append(", ")
        out.append(f)
    return out[::-1]


__all__ = ["CLEARED", "RESULT", "TRACE", "TraceRecorder", "TraceStep", "VMTrace", "summarize",
           "tensor_text", "tensor_type", "traced_code"]
