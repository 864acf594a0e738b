"""Decoding: an ``Executable``'s bytecode → the dispatch tuples ``VirtualMachine`` runs.

The interface: ``decode(exe, constants) -> DecodedProgram``, ``Variant`` (dispatch codes
of the decoded-only instructions), ``address`` (an array's data pointer, as the loop
takes it), ``planned_storage`` (a function's arena layout, checked; ``serialize.py``
checks a loaded file with it) and ``VMError``.

Each instruction becomes a ``(code, a, b, c, d)`` tuple of plain Python objects: ``code``
is the opcode's number and ``a``..``d`` its operands in the opcode table's order, each
turned by its role into what the loop uses (``_operand_decoders``: register tuples and
shapes become tuples, dtypes numpy dtypes, constant / constructor / message /
shape-function / kernel indices the objects; an optional operand left out becomes
``()`` for a register tuple, else ``None``). Some instructions become variants chosen
once here (``Variant``: C kernel calls with reusable pointer arrays, folded runs and
chains, planned-storage views, tail calls). The function's arena layout (its
``AllocStorage`` buffers and planned views) comes out with its code.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from enum import IntEnum

import numpy as np

from ..backend.target import Target
from ..errors import Error
from ..runtime.numpy_kernels import NumpyKernel
from ..runtime.tensors import aligned_empty
from .liveness import stable_registers
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
from .specialize import Specializer


class VMError(Error):
    """A run-time failure of the VM (a failed match, a failed kernel, a bad input)."""


class Variant(IntEnum):
    """Dispatch codes of instructions the decoder chooses (never in bytecode; above
    every opcode's number, which is the code of an instruction decoded as is)."""

    PackedC = 100           # C kernel: pointer array + last-seen arrays
    PackedCDims = 101       # C kernel with symbolic dims
    AllocSlot = 102         # AllocTensor on planned storage: a view the frame's arena holds
    PackedRun = 103         # LoadConst / AllocTensor ... then a C kernel, in one dispatch
    TailInvoke = 104        # Invoke whose result the function returns: reuses the frame
    TailInvokeClosure = 105
    PackedChain = 106       # C kernel calls with fixed pointers (and their operands' loads)


_addressof = ctypes.addressof
_char_at = ctypes.c_char.from_buffer


def address(a: np.ndarray) -> int:
    """``a``'s data pointer, as a kernel's pointer array holds it."""
    # the buffer protocol is ~5x faster than ``a.ctypes.data`` but needs a writeable,
    # non-empty buffer; inputs and constants may be read-only
    if a.flags.writeable and a.nbytes:
        return _addressof(_char_at(a))
    return a.ctypes.data


class _PackedCall:
    """Per-instruction state of a C kernel call: its pointer array, its dims array, and
    ``seen``: the arrays last passed in the positions whose addresses are reused (kept
    alive while their addresses are in use)."""

    __slots__ = ("name", "call", "ptrs", "seen", "dims", "dim_sources", "shape_func",
                 "reference", "target")

    def __init__(self, kernel, n: int, target: str = "cpu"):
        function = kernel.function
        self.name = kernel.name
        self.target = target
        self.ptrs = (ctypes.c_void_p * n)()
        self.seen = [None] * n
        self.dim_sources = _dim_sources(kernel)
        self.dims = (ctypes.c_int64 * max(len(self.dim_sources), 1))()
        ptrs_arg = ctypes.c_void_p(ctypes.addressof(self.ptrs))
        dims_arg = ctypes.c_void_p(ctypes.addressof(self.dims) if self.dim_sources else None)
        # c_void_p arguments pass through argtypes without conversion; a zero-argument
        # partial is the cheapest ctypes call there is
        self.call = functools.partial(function._cfunc, ptrs_arg, dims_arg)
        self.call.keep = (self.ptrs, self.dims, function)  # the partial may outlive self
        # the shape function of this call, and the primitive function's reference for
        # the shapes it says the kernel cannot take (made on first use)
        self.shape_func = None
        self.reference = None

    def run_reference(self, arrays) -> bool:
        """A call at shapes the kernel cannot take (a dim of 1 it reads as equal dims):
        the function compiled for these static shapes (``specialize.py``), or, where
        that fails, its reference; whether the reference ran."""
        if self.reference is None:
            self.reference = Specializer(self.name, self.shape_func.func, self.target)
        return self.reference.call_unchecked(*arrays)

    def refresh_dims(self, arrays) -> None:
        dims = self.dims
        for j, (pos, axis) in enumerate(self.dim_sources):
            dims[j] = arrays[pos].shape[axis]


def _dim_sources(kernel) -> tuple:
    """``(operand position, axis)`` giving each of a kernel's symbolic dims, in the
    order of its ``dim_names`` (the order of the C ``dims`` argument)."""
    names = list(getattr(kernel, "dim_names", None) or ())
    if not names:
        return ()
    where: dict = {}
    for pos, t in enumerate(tuple(kernel.input_types) + tuple(kernel.output_types)):
        for axis, d in enumerate(t.shape):
            if not isinstance(d, int):
                where.setdefault(getattr(d, "name", str(d)), (pos, axis))
    missing = [n for n in names if n not in where]
    if missing:
        raise VMError(f"kernel {kernel.name}: symbolic dims {missing} appear in no argument")
    return tuple(where[n] for n in names)


class _Arena:
    """The storage buffers of one activation of a function (``AllocStorage`` slots), and
    a view per planned ``AllocTensor`` (indexed as the decoded instruction says)."""

    __slots__ = ("buffers", "views")

    def __init__(self, storages: list[tuple[int, int]], allocs: list[tuple]):
        self.buffers = [aligned_empty(n, align) for n, align in storages]
        self.views = [self.buffers[slot][offset: offset + _nbytes(shape, dtype)]
                      .view(dtype).reshape(shape) for slot, offset, shape, dtype in allocs]

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self.buffers)


class _ViewBinding:
    """The arena whose planned views a function's pointer arrays hold: a call in
    another activation of the function (recursion) points them all at its own arena's."""

    __slots__ = ("arena", "targets")

    def __init__(self):
        self.arena = None
        self.targets: list = []  # (pointer array, ((position, view index), ...))

    def bind(self, arena) -> None:
        views = arena.views
        for ptrs, where in self.targets:
            for i, k in where:
                ptrs[i] = address(views[k])
        self.arena = arena  # arenas live as long as the VM: the addresses stay valid


class DecodedProgram:
    """What ``decode`` makes of an executable, per function (by index): ``code``, the
    dispatch tuples the loop runs (runs folded and chained, tail calls marked);
    ``plain``, one dispatch per instruction (the profiler's view); ``arena_factories``:
    a fresh arena for one activation, or ``None`` for a function without planned
    storage."""

    __slots__ = ("code", "plain", "arena_factories")

    def __init__(self, code: list, plain: list, arena_factories: list):
        self.code = code
        self.plain = plain
        self.arena_factories = arena_factories


def decode(exe, constants: list) -> DecodedProgram:
    """Decode every function of ``exe``; ``constants`` replace ``exe.constants`` (the
    interpreter passes them aligned for the kernels' raw pointers)."""
    decoder = _Decoder(exe, constants)
    plain, factories = [], []
    for fn in exe.functions:
        code, storages, allocs = decoder.function(fn)
        plain.append(code)
        factories.append(functools.partial(_Arena, storages, allocs) if storages else None)
    code = [_tail_calls(_fold(fn, _chain(fn, c))) for fn, c in zip(exe.functions, plain)]
    return DecodedProgram(code, plain, factories)


def _same(x):
    return x


def _operand_decoders(exe, constants: list) -> dict:
    """How an operand of each role becomes what the dispatch loop uses."""

    def constructor(i: int):
        return exe.constructors[i] if i >= 0 else None  # -1: a tuple

    return {DST: _same, SRC: _same, IMM: _same, JUMP: _same, FUNC: _same,
            SRCS: tuple, OUTS: tuple, KILLS: tuple, SHAPE: tuple, DTYPE: np.dtype,
            CONST: constants.__getitem__, CTOR: constructor,
            MESSAGE: exe.messages.__getitem__, SHAPE_FUNC: exe.shape_funcs.__getitem__,
            KERNEL: exe.kernels.__getitem__}


class _Decoder:
    """Turns one function's instructions into dispatch tuples (and its arena layout)."""

    def __init__(self, exe, constants):
        self.exe = exe
        self.constants = constants
        self.decoders: dict[object, Callable] = _operand_decoders(exe, constants)
        self.shape_funcs = {sf.name: sf for sf in getattr(exe, "shape_funcs", ())}

    def specializer(self, kernel):
        """A reference kernel of a function the VM compiler left to run time (no reason
        given: data-dependent, or dynamic beyond the C back end) on the cpu target:
        compiled per call signature (``specialize.py``), one per executable (shared by
        its VMs). Other kernels are returned as they are."""
        if not isinstance(kernel, NumpyKernel) or kernel.reason or \
                Target.parse(self.exe.target).kind != "cpu":
            return kernel
        made = self.exe.__dict__.setdefault("specializers", {})
        if kernel.name not in made:
            made[kernel.name] = Specializer(kernel.name, kernel.func, self.exe.target)
        return made[kernel.name]

    def function(self, fn) -> tuple[list, list, list]:
        code = []
        stable = stable_registers(fn)
        storages, views = planned_storage(fn)
        view_index = {pc: k for k, pc in enumerate(views)}
        targets = _jump_targets(fn)
        self.binding = _ViewBinding()
        known: dict = {}  # register -> ("const", index) / ("view", index), this block only
        for pc, ins in enumerate(fn.instructions):
            op, spec = ins.op, ins.op.spec
            if pc in targets:
                known.clear()
            if op is Opcode.InvokePacked:
                code.append(self.invoke_packed(ins, stable[pc], known))
            elif pc in view_index:
                code.append((int(Variant.AllocSlot), ins.operand("dst"), view_index[pc],
                             None, None))
            else:
                code.append(self.instruction(ins))
            if spec.successors(pc, ins.args) != (pc + 1,):
                known.clear()
                continue
            for r in spec.clobbered(ins.args):
                known.pop(r, None)
            if op is Opcode.LoadConst:
                known[ins.operand("dst")] = ("const", ins.operand("const"))
            elif pc in view_index:
                known[ins.operand("dst")] = ("view", view_index[pc])
        return code, storages, list(views.values())

    def invoke_packed(self, ins, stable: int, known: dict) -> tuple:
        """A C kernel call's pointer array is filled at decode time for the operands
        that are surely a given constant here (``known``), and once per arena for those
        surely a given planned view; of the others, it keeps the arrays of the operands in
        ``stable`` (a bitset of registers holding constants, planned views or parameters:
        the same objects every run) to skip their address when unchanged; the rest's
        addresses are taken on every call, and their arrays are not kept alive."""
        index = ins.operand("kernel")
        kernel = self.exe.kernels[index]
        operands = tuple(ins.operand("inputs")) + tuple(ins.operand("outputs"))
        if not (hasattr(kernel, "function") and hasattr(kernel.function, "_cfunc")):
            # arrays come from typed AllocTensor and checked inputs; a dynamic function
            # the C back end could not lower with symbolic dims: C per call's shapes
            kernel = self.specializer(kernel)
            call = kernel.run if isinstance(kernel, Specializer) else kernel.call_unchecked
            return (int(Opcode.InvokePacked), call, operands,
                    self.exe.kernel_names[index], None)
        packed = _PackedCall(kernel, len(operands), self.exe.target)
        if packed.dim_sources:
            packed.shape_func = self.shape_funcs.get(kernel.name)
            return (int(Variant.PackedCDims), packed, operands, None, None)
        kept, changing, views = [], [], []
        for i, r in enumerate(operands):
            kind, where = known.get(r, (None, None))
            if kind == "const":
                packed.seen[i] = self.constants[where]  # kept alive with the call
                packed.ptrs[i] = address(packed.seen[i])
            elif kind == "view":
                views.append((i, where))
            elif stable >> r & 1:
                kept.append((i, r))
            else:
                changing.append((i, r))
        if views:
            self.binding.targets.append((packed.ptrs, tuple(views)))
        state = (packed.seen, packed.ptrs, tuple(views), self.binding)
        return (int(Variant.PackedC), packed.call, tuple(kept), state, tuple(changing))

    def instruction(self, ins) -> tuple:
        """``(opcode number, operands...)``, each operand decoded by its role."""
        spec, args = ins.op.spec, ins.args
        decoders = self.decoders
        if len(args) > 4:
            raise VMError(f"{ins.op.name} with {len(args)} operands: a dispatch tuple "
                          f"holds 4 (decode it as a variant)")
        out = [decoders[o.role](a) for o, a in zip(spec.operands, args)]
        if ins.op is Opcode.InvokeDataDependent:
            out[0] = self.specializer(out[0])
        out += [() if o.role.many else None for o in spec.operands[len(args):4]]
        return (int(ins.op), *out) + (None,) * (4 - len(out))


def _chain(fn, code: list) -> list:
    """Fold each straight run of ``LoadConst`` / planned ``AllocTensor`` / C kernel
    calls whose every pointer is fixed (``invoke_packed``) into one dispatch: it sets
    the registers as the run leaves them, then makes the calls back to back, as the
    graph executor does (the run's instructions stay, reachable by no jump)."""
    targets = _jump_targets(fn)
    out = list(code)
    i, n = 0, len(code)
    while i < n:
        j, end = i, None
        while j < n and (j == i or j not in targets):
            op = code[j][0]
            if op == Variant.PackedC and not code[j][2] and not code[j][4]:
                end = j + 1
            elif op not in (Opcode.LoadConst, Variant.AllocSlot):
                break
            j += 1
        if end is None:
            i = max(j, i + 1)
            continue
        final: dict = {}  # register -> the run's last (opcode, value) for it
        calls, binding = [], None
        for ins in code[i:end]:
            if ins[0] == Variant.PackedC:
                calls.append(ins[1])
                if ins[3][2]:
                    binding = ins[3][3]
            else:
                final[ins[1]] = (ins[0], ins[2])
        consts = tuple((r, v) for r, (op, v) in final.items() if op == Opcode.LoadConst)
        slots = tuple((r, v) for r, (op, v) in final.items() if op == Variant.AllocSlot)
        out[i] = (int(Variant.PackedChain), tuple(calls), consts, slots, (binding, end - i))
        i = end
    return out


def _fold(fn, code: list) -> list:
    """Fold each straight run of ``LoadConst`` / ``AllocTensor`` ending in a C
    kernel call into one dispatch that sets the same registers, then calls (the
    run's later instructions stay, reachable only by a jump, and no jump lands
    inside a folded run)."""
    targets = _jump_targets(fn)
    out = list(code)
    i, n = 0, len(code)
    loads = (Opcode.LoadConst, Variant.AllocSlot, Opcode.AllocTensor)
    while i < n:
        j = i
        while j < n and code[j][0] in loads and (j == i or j not in targets):
            j += 1
        defined = [c[1] for c in code[i:j]]
        if j == i or j >= n or code[j][0] != Variant.PackedC or j in targets or \
                len(set(defined)) < len(defined):  # the fold sets them out of order
            i = max(j, i + 1)
            continue
        consts = tuple((c[1], c[2]) for c in code[i:j] if c[0] == Opcode.LoadConst)
        slots = tuple((c[1], c[2]) for c in code[i:j] if c[0] == Variant.AllocSlot)
        fresh = tuple((c[1], c[2], c[3]) for c in code[i:j] if c[0] == Opcode.AllocTensor)
        _, call, kept, arrays, changing = code[j]
        out[i] = (int(Variant.PackedRun), call, kept, arrays,
                  (consts, slots, fresh, changing, j + 1 - i))
        i = j + 1
    return out


def _jump_targets(fn) -> set[int]:
    targets = set()
    for pc, ins in enumerate(fn.instructions):
        for p in ins.op.spec.jumps:
            targets.add(pc + ins.args[p])
    return targets


def _tail_calls(code: list) -> list:
    """Mark each ``Invoke`` / ``InvokeClosure`` whose result the function returns as a
    tail call: from it, only ``KillRegister`` (the frame's end frees everything), ``Move``
    of the result (an ``if``'s join register) and ``Goto`` lead to ``Ret`` of it."""
    out = list(code)
    for i, ins in enumerate(code):
        if ins[0] not in (Opcode.Invoke, Opcode.InvokeClosure):
            continue
        value, j = ins[3], i + 1
        for _ in range(len(code)):  # each step moves forward; bounded anyway
            op = code[j][0] if j < len(code) else None
            if op == Opcode.KillRegister and value not in code[j][1]:
                j += 1
            elif op == Opcode.Move and code[j][2] == value:
                value, j = code[j][1], j + 1
            elif op == Opcode.Goto and code[j][1] > 0:
                j += code[j][1]
            else:
                break
        if j < len(code) and code[j][0] == Opcode.Ret and code[j][1] == value:
            tail = Variant.TailInvoke if ins[0] == Opcode.Invoke else Variant.TailInvokeClosure
            out[i] = (int(tail),) + ins[1:]
    return out


def planned_storage(fn) -> tuple[list[tuple[int, int]], dict[int, tuple]]:
    """A function's arena layout: each storage slot's ``(nbytes, alignment)``, and for
    each ``AllocTensor`` on planned storage (by instruction index) its ``(slot, offset,
    shape, dtype)``. Checked: each storage register and slot is bound once, and each
    view lies inside its buffer at an aligned offset (a ``VMError`` otherwise)."""
    bound = _storage_bindings(fn)  # storage register -> (slot, nbytes, alignment)
    storages: list[tuple[int, int]] = []
    for slot, nbytes, align in sorted(bound.values()):
        storages.extend([(0, 1)] * (slot + 1 - len(storages)))
        storages[slot] = (nbytes, align)
    views = {pc: _planned_view(fn, pc, bound) for pc, ins in enumerate(fn.instructions)
             if ins.op is Opcode.AllocTensor and ins.operand("storage") is not None}
    return storages, views


def _storage_bindings(fn) -> dict[int, tuple[int, int, int]]:
    """Storage register → ``(slot, nbytes, alignment)`` of the ``AllocStorage`` that
    binds it; each register and slot must be bound once."""
    bound: dict[int, tuple[int, int, int]] = {}
    for ins in fn.instructions:
        if ins.op is Opcode.AllocStorage:
            dst, nbytes, align, slot = (ins.operand(n)
                                        for n in ("dst", "nbytes", "alignment", "slot"))
            if dst in bound or slot in {s for s, _, _ in bound.values()} or slot < 0 \
                    or nbytes < 0 or align < 1 or align & (align - 1):
                raise VMError(f"@{fn.name}: alloc_storage $r{dst} (slot {slot}, {nbytes} "
                              f"bytes, align {align}): each storage register and slot is "
                              f"bound once, with a power-of-two alignment")
            bound[dst] = (slot, nbytes, align)
    return bound


def _planned_view(fn, pc: int, bound: dict) -> tuple:
    """``(slot, offset, shape, dtype)`` of the ``AllocTensor`` at ``pc`` on planned
    storage, checked to lie inside its buffer at an aligned offset."""
    ins = fn.instructions[pc]
    dst, storage, offset = ins.operand("dst"), ins.operand("storage"), ins.operand("offset")
    shape, dtype = tuple(ins.operand("shape")), np.dtype(ins.operand("dtype"))
    if storage not in bound:
        raise VMError(f"@{fn.name} instruction {pc}: alloc_tensor $r{dst} reads storage "
                      f"$r{storage}, which no alloc_storage binds")
    slot, nbytes, align = bound[storage]
    need = _nbytes(shape, dtype)
    if offset < 0 or offset % align or offset % dtype.itemsize or offset + need > nbytes:
        raise VMError(f"@{fn.name} instruction {pc}: alloc_tensor $r{dst} of {need} bytes "
                      f"at offset {offset} does not fit storage $r{storage} of {nbytes} "
                      f"bytes (alignment {align})")
    return slot, offset, shape, dtype


def _nbytes(shape: tuple, dtype: np.dtype) -> int:
    return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize


__all__ = ["DecodedProgram", "Variant", "VMError", "address", "decode",
           "planned_storage"]
