"""Decoding: an ``Executable``'s bytecode → the dispatch tuples ``VirtualMachine`` runs.

Each instruction becomes an ``(opcode, a, b, c, d)`` tuple of plain Python objects;
some become variants chosen once here (opcodes >= 100: C kernel calls with reusable
pointer arrays, folded runs and chains, planned-storage views, tail calls). The
function's arena layout (its ``AllocStorage`` buffers and planned views) comes out
with its code.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from ..errors import Error
from .bytecode import Opcode
from .liveness import OPERANDS, defs_uses, stable_registers, successors


class VMError(Error):
    """A run-time failure of the VM (a failed match, a failed kernel, a bad input)."""


_MOVE, _RET, _INVOKE, _INVOKE_CLOSURE, _INVOKE_PACKED, _ALLOC_TENSOR, _ALLOC_ADT, \
    _ALLOC_CLOSURE, _GET_FIELD, _GET_TAG, _IF, _GOTO, _LOAD_CONST, _LOAD_CONSTI, _FATAL = \
    (int(Opcode[n]) for n in (
        "Move", "Ret", "Invoke", "InvokeClosure", "InvokePacked", "AllocTensor", "AllocADT",
        "AllocClosure", "GetField", "GetTag", "If", "Goto", "LoadConst", "LoadConsti",
        "Fatal"))
_KILL = int(Opcode.KillRegister)
_SHAPE_FUNC, _ALLOC_TENSOR_REG, _RESHAPE_TENSOR, _DATA_DEPENDENT, _SHAPE_OF = (
    int(Opcode.InvokeShapeFunc), int(Opcode.AllocTensorReg), int(Opcode.ReshapeTensor),
    int(Opcode.InvokeDataDependent), int(Opcode.ShapeOf))
_ALLOC_STORAGE = int(Opcode.AllocStorage)
_REF_CREATE, _REF_READ, _REF_WRITE = (
    int(Opcode.RefCreate), int(Opcode.RefRead), int(Opcode.RefWrite))
# decoded-only opcodes (never in bytecode): variants chosen once at decode time
_PACKED_C = 100        # C kernel: pointer array + last-seen arrays
_PACKED_C_DIMS = 101   # C kernel with symbolic dims
_ALLOC_SLOT = 102      # AllocTensor on planned storage: a view the frame's arena holds
_PACKED_RUN = 103      # LoadConst / AllocTensor ... then a C kernel, in one dispatch
_TAIL_INVOKE = 104     # Invoke whose result the function returns: reuses the frame
_TAIL_INVOKE_CLOSURE = 105
_PACKED_CHAIN = 106    # C kernel calls with fixed pointers (and their operands' loads)
_POOL_DEPTH = 4        # buffers kept per (shape, dtype): more are left to the GC
_POOL_KEYS = 256       # shapes kept; past this (many lengths seen) the pool starts over

_addressof = ctypes.addressof
_char_at = ctypes.c_char.from_buffer


def _address(a: np.ndarray) -> int:
    # the buffer protocol is ~5x faster than ``a.ctypes.data`` but needs a writeable,
    # non-empty buffer; inputs and constants may be read-only
    if a.flags.writeable and a.nbytes:
        return _addressof(_char_at(a))
    return a.ctypes.data


class _PackedCall:
    """Per-instruction state of a C kernel call: its pointer array, its dims array, and
    ``seen``: the arrays last passed in the positions whose addresses are reused (kept
    alive while their addresses are in use)."""

    __slots__ = ("name", "call", "ptrs", "seen", "dims", "dim_sources")

    def __init__(self, kernel, n: int):
        function = kernel.function
        self.name = kernel.name
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
        self.buffers = [_aligned_buffer(n, align) for n, align in storages]
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
                ptrs[i] = _address(views[k])
        self.arena = arena  # arenas live as long as the VM: the addresses stay valid


class _Decoder:
    """Turns one function's instructions into dispatch tuples (and its arena layout)."""

    def __init__(self, exe, constants):
        self.exe = exe
        self.constants = constants

    def function(self, fn) -> tuple[list, list, list]:
        code, storages, allocs = [], [], []
        stable = stable_registers(fn)
        bound = _storage_bindings(fn)  # storage register -> (slot, nbytes, alignment)
        for slot, nbytes, align in sorted(bound.values()):
            storages.extend([(0, 1)] * (slot + 1 - len(storages)))
            storages[slot] = (nbytes, align)
        targets = _jump_targets(fn)
        self.binding = _ViewBinding()
        known: dict = {}  # register -> ("const", index) / ("view", index), this block only
        for pc, ins in enumerate(fn.instructions):
            op, a = ins.op, ins.args
            if pc in targets:
                known.clear()
            if op is Opcode.InvokePacked:
                code.append(self.invoke_packed(ins, 0 if stable is None else stable[pc],
                                               known))
            elif op is Opcode.AllocTensor and len(a) > 3:
                code.append((_ALLOC_SLOT, a[0], len(allocs), None, None))
                allocs.append(_planned_view(fn, pc, bound))
            elif op is Opcode.AllocStorage:
                code.append((_ALLOC_STORAGE, a[0], a[3], None, None))
            else:
                code.append(self.instruction(ins))
            if op not in OPERANDS or successors(pc, ins) != (pc + 1,):
                known.clear()
                continue
            for r in defs_uses(ins)[0] if op is not Opcode.KillRegister else a[0]:
                known.pop(r, None)
            if op is Opcode.LoadConst:
                known[a[0]] = ("const", a[1])
            elif code[-1][0] == _ALLOC_SLOT:
                known[a[0]] = ("view", code[-1][2])
        return code, storages, allocs

    @staticmethod
    def chain(fn, code: list) -> list:
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
                if op == _PACKED_C and not code[j][2] and not code[j][4]:
                    end = j + 1
                elif op not in (_LOAD_CONST, _ALLOC_SLOT):
                    break
                j += 1
            if end is None:
                i = max(j, i + 1)
                continue
            final: dict = {}  # register -> the run's last (opcode, value) for it
            calls, binding = [], None
            for ins in code[i:end]:
                if ins[0] == _PACKED_C:
                    calls.append(ins[1])
                    if ins[3][2]:
                        binding = ins[3][3]
                else:
                    final[ins[1]] = (ins[0], ins[2])
            consts = tuple((r, v) for r, (op, v) in final.items() if op == _LOAD_CONST)
            slots = tuple((r, v) for r, (op, v) in final.items() if op == _ALLOC_SLOT)
            out[i] = (_PACKED_CHAIN, tuple(calls), consts, slots, (binding, end - i))
            i = end
        return out

    @staticmethod
    def fold(fn, code: list) -> list:
        """Fold each straight run of ``LoadConst`` / ``AllocTensor`` ending in a C
        kernel call into one dispatch that sets the same registers, then calls (the
        run's later instructions stay, reachable only by a jump, and no jump lands
        inside a folded run)."""
        targets = _jump_targets(fn)
        out = list(code)
        i, n = 0, len(code)
        while i < n:
            j = i
            while j < n and code[j][0] in (_LOAD_CONST, _ALLOC_SLOT, _ALLOC_TENSOR) and (
                    j == i or j not in targets):
                j += 1
            defined = [c[1] for c in code[i:j]]
            if j == i or j >= n or code[j][0] != _PACKED_C or j in targets or \
                    len(set(defined)) < len(defined):  # the fold sets them out of order
                i = max(j, i + 1)
                continue
            consts = tuple((c[1], c[2]) for c in code[i:j] if c[0] == _LOAD_CONST)
            slots = tuple((c[1], c[2]) for c in code[i:j] if c[0] == _ALLOC_SLOT)
            fresh = tuple((c[1], c[2], c[3]) for c in code[i:j] if c[0] == _ALLOC_TENSOR)
            _, call, kept, arrays, changing = code[j]
            out[i] = (_PACKED_RUN, call, kept, arrays,
                      (consts, slots, fresh, changing, j + 1 - i))
            i = j + 1
        return out

    def invoke_packed(self, ins, stable: int, known: dict) -> tuple:
        """A C kernel call's pointer array is filled at decode time for the operands
        that are surely a given constant here (``known``), and once per arena for those
        surely a given planned view; of the others, it keeps the arrays of the operands in
        ``stable`` (a bitset of registers holding constants, planned views or parameters:
        the same objects every run) to skip their address when unchanged; the rest's
        addresses are taken on every call, and their arrays are not kept alive."""
        a = ins.args
        kernel = self.exe.kernels[a[0]]
        operands = tuple(a[1]) + tuple(a[2])
        if not (hasattr(kernel, "function") and hasattr(kernel.function, "_cfunc")):
            # arrays come from typed AllocTensor and checked inputs
            return (_INVOKE_PACKED, kernel.call_unchecked, operands,
                    self.exe.kernel_names[a[0]], None)
        packed = _PackedCall(kernel, len(operands))
        if packed.dim_sources:
            return (_PACKED_C_DIMS, packed, operands, None, None)
        kept, changing, views = [], [], []
        for i, r in enumerate(operands):
            kind, index = known.get(r, (None, None))
            if kind == "const":
                packed.seen[i] = self.constants[index]  # kept alive with the call
                packed.ptrs[i] = _address(packed.seen[i])
            elif kind == "view":
                views.append((i, index))
            elif stable >> r & 1:
                kept.append((i, r))
            else:
                changing.append((i, r))
        if views:
            self.binding.targets.append((packed.ptrs, tuple(views)))
        state = (packed.seen, packed.ptrs, tuple(views), self.binding)
        return (_PACKED_C, packed.call, tuple(kept), state, tuple(changing))

    def instruction(self, ins) -> tuple:
        op, a = ins.op, ins.args
        exe = self.exe
        if op is Opcode.AllocTensor:
            return (_ALLOC_TENSOR, a[0], tuple(a[1]), np.dtype(a[2]), None)
        if op is Opcode.AllocADT:
            ctor = exe.constructors[a[1]] if a[1] >= 0 else None
            return (_ALLOC_ADT, a[0], ctor, tuple(a[2]), None)
        if op is Opcode.LoadConst:
            return (_LOAD_CONST, a[0], self.constants[a[1]], None, None)
        if op is Opcode.Fatal:
            return (_FATAL, exe.messages[a[0]], None, None, None)
        if op is Opcode.KillRegister:
            return (_KILL, tuple(a[0]), tuple(a[1]) if len(a) > 1 else (), None, None)
        if op is Opcode.InvokeShapeFunc:  # shape_func.py: output shapes, cached
            return (_SHAPE_FUNC, exe.shape_funcs[a[0]], tuple(a[1]), a[2], None)
        if op is Opcode.AllocTensorReg:
            return (_ALLOC_TENSOR_REG, a[0], a[1], np.dtype(a[2]), None)
        if op is Opcode.ShapeOf:
            return (_SHAPE_OF, a[0], a[1], np.dtype(a[2]), None)
        if op is Opcode.InvokeDataDependent:  # the kernel returns fresh outputs
            return (_DATA_DEPENDENT, exe.kernels[a[0]].evaluate, tuple(a[1]), a[2], None)
        args = tuple(tuple(x) if isinstance(x, list) else x for x in a)
        return (int(op),) + args + (None,) * (4 - len(args))


def _jump_targets(fn) -> set[int]:
    targets = set()
    for i, ins in enumerate(fn.instructions):
        if ins.op is Opcode.If:
            targets.update((i + ins.args[2], i + ins.args[3]))
        elif ins.op is Opcode.Goto:
            targets.add(i + ins.args[0])
    return targets


def _tail_calls(code: list) -> list:
    """Mark each ``Invoke`` / ``InvokeClosure`` whose result the function returns as a
    tail call: from it, only ``KillRegister`` (the frame's end frees everything), ``Move``
    of the result (an ``if``'s join register) and ``Goto`` lead to ``Ret`` of it."""
    out = list(code)
    for i, ins in enumerate(code):
        if ins[0] not in (_INVOKE, _INVOKE_CLOSURE):
            continue
        value, j = ins[3], i + 1
        for _ in range(len(code)):  # each step moves forward; bounded anyway
            op = code[j][0] if j < len(code) else None
            if op == _KILL and value not in code[j][1]:
                j += 1
            elif op == _MOVE and code[j][2] == value:
                value, j = code[j][1], j + 1
            elif op == _GOTO and code[j][1] > 0:
                j += code[j][1]
            else:
                break
        if j < len(code) and code[j][0] == _RET and code[j][1] == value:
            out[i] = (_TAIL_INVOKE if ins[0] == _INVOKE else _TAIL_INVOKE_CLOSURE,) + ins[1:]
    return out


def _storage_bindings(fn) -> dict[int, tuple[int, int, int]]:
    """Storage register → ``(slot, nbytes, alignment)`` of the ``AllocStorage`` that
    binds it; each register and slot must be bound once."""
    bound: dict[int, tuple[int, int, int]] = {}
    for ins in fn.instructions:
        if ins.op is Opcode.AllocStorage:
            dst, nbytes, align, slot = ins.args
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
    dst, shape, dtype, storage, offset = fn.instructions[pc].args
    shape, dtype = tuple(shape), np.dtype(dtype)
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


def _aligned_buffer(nbytes: int, align: int) -> np.ndarray:
    """``nbytes`` (at least 1) of uint8 starting at a multiple of ``align``."""
    raw = np.empty(max(nbytes, 1) + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start: start + max(nbytes, 1)]
