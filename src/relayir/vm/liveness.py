"""Liveness over VM bytecode: register reuse, planned storage and ``KillRegister``.

A post-pass over each function's emitted instructions (``optimize_function``):

1. **Dataflow liveness** over the instruction control-flow graph (``If`` and ``Goto``
   branch, ``Ret`` and ``Fatal`` end a path): the classic backward fixpoint over sparse
   register sets (live sets are small; a 100,000-instruction function takes seconds,
   not minutes).
2. **Register renumbering.** Two registers interfere when one is defined where the
   other is live; a greedy colouring (in order of first definition, ``Move``\\ s
   coalesced when they can be) gives registers that never interfere the same slot.
   Parameters keep registers ``0..n-1``.
3. **Planned storage** (compile-time storage reuse). A static-shape ``AllocTensor``
   whose register has that one definition and is read only by ``InvokePacked`` (never
   moved, returned, passed to a function, or put in a tuple, ADT, closure or ref) holds a
   tensor that nothing outlives the frame: it gets a byte offset in the function's one
   storage buffer, packed by ``runtime.memory_plan.pack_offsets`` so that tensors whose
   live ranges overlap (they interfere) never share bytes. The function then starts
   with ``AllocStorage(s, nbytes, alignment, slot 0)`` binding a fresh register ``s`` to
   the frame arena's buffer, and the instruction becomes ``AllocTensor(dst, shape,
   dtype, s, offset)``: a view. The interpreter keeps arenas per function for later
   calls, so a static model allocates only its result after the first run.
4. **KillRegister** after the instruction where a register holding run-time memory (a
   fresh tensor, a call's result, a tuple / ADT / closure) dies, unless the next
   instruction overwrites that register anyway or returns. A unit ``()`` nothing reads
   (an empty ``AllocADT``, a ``RefWrite``'s result) is dropped. A dying *private* fresh tensor
   (``private_tensors``: only kernels saw it; dynamic shapes, or static ones without
   planned storage) is named as pooled: the interpreter keeps its buffer for the next
   ``AllocTensor`` / ``AllocTensorReg`` of that shape and dtype, so a dynamic model run
   at a length it has seen allocates nothing new. Registers that die on a branch edge
   are freed with the frame.

Which operands are registers the instruction defines or reads, and where it jumps,
comes from the opcode table (``opcodes.py``); the rules here about which results hold
memory and which reads keep a tensor private are this pass's own, keyed by opcode.

``PassContext(disabled_pass=["VMLiveness"])`` turns the whole pass off;
``disabled_pass=["VMStorageReuse"]`` keeps register reuse and kills but plans no
storage.
"""

from __future__ import annotations

import dataclasses
from collections import deque

import numpy as np

from ..runtime.memory_plan import pack_offsets
from ..transform.pass_infra import PassContext
from .bytecode import Instruction, Opcode, VMFunction

# registers defined by these hold no memory of their own: never worth a kill
_NO_MEMORY = {Opcode.LoadConst, Opcode.LoadConsti, Opcode.GetTag}
# results that own a reference to run-time memory
_HOLDS_MEMORY = {Opcode.AllocTensor, Opcode.Invoke, Opcode.InvokeClosure, Opcode.AllocADT,
                 Opcode.AllocClosure, Opcode.GetField, Opcode.Move, Opcode.AllocTensorReg,
                 Opcode.ReshapeTensor, Opcode.InvokeDataDependent, Opcode.RefCreate,
                 Opcode.RefRead}

_ALIGN = 64
# opcodes only this pass emits: a function holding one was optimised already
_OPTIMISED = {Opcode.KillRegister, Opcode.AllocStorage}


def defs_uses(ins: Instruction) -> tuple[list[int], list[int]]:
    """The registers ``ins`` defines, and those it reads (the opcode table's roles)."""
    return ins.op.spec.defs_uses(ins.args)


def successors(i: int, ins: Instruction) -> tuple[int, ...]:
    return ins.op.spec.successors(i, ins.args)


class Liveness:
    """``live_in[i]`` / ``live_out[i]``: the sets of registers live before / after
    instruction ``i``."""

    def __init__(self, fn: VMFunction):
        code = fn.instructions
        n = len(code)
        self.defs, self.uses = [], []
        for ins in code:
            d, u = defs_uses(ins)
            self.defs.append(frozenset(d))
            self.uses.append(frozenset(u))
        self.succ = [successors(i, ins) for i, ins in enumerate(code)]
        preds: list[list[int]] = [[] for _ in range(n)]
        for i, ss in enumerate(self.succ):
            for s in ss:
                preds[s].append(i)
        empty = frozenset()
        self.live_in = [empty] * n
        self.live_out = [empty] * n
        work = deque(range(n - 1, -1, -1))  # backward order: one sweep on a DAG
        queued = [True] * n
        while work:
            i = work.popleft()
            queued[i] = False
            succ = self.succ[i]
            out = self.live_in[succ[0]] if len(succ) == 1 else empty.union(
                *[self.live_in[s] for s in succ])
            new_in = self.uses[i] | (out - self.defs[i])
            self.live_out[i] = out
            if new_in != self.live_in[i]:
                self.live_in[i] = new_in
                for p in preds[i]:
                    if not queued[p]:
                        queued[p] = True
                        work.append(p)
        self.n = n


def _bits(regs) -> int:
    b = 0
    for r in regs:
        b |= 1 << r
    return b


def _members(bits: int):
    while bits:  # lowest set bit first: cost per member, not per register
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


def interference(fn: VMFunction, live: Liveness) -> dict[int, set[int]]:
    """Register → the registers it interferes with."""
    graph: dict[int, set[int]] = {}

    def add(a: int, others) -> None:
        graph.setdefault(a, set()).update(others)
        for b in others:
            graph.setdefault(b, set()).add(a)

    nparams = len(fn.param_names)
    entry = set(range(nparams)) | (live.live_in[0] if live.n else set())
    for p in range(nparams):
        add(p, entry - {p})
    for i in range(live.n):
        for d in live.defs[i]:
            add(d, live.live_out[i] - {d})
    return graph


def _colour(fn: VMFunction, graph: dict[int, set[int]]) -> dict[int, int]:
    """Old register → new register (params keep theirs; the others take the lowest
    register none of their neighbours has, their ``Move`` source's when free)."""
    nparams = len(fn.param_names)
    colour = {p: p for p in range(nparams)}
    order: list[int] = []
    seen = set(colour)
    prefer: dict[int, int] = {}
    for ins in fn.instructions:
        defs, uses = defs_uses(ins)
        for r in defs + uses:
            if r not in seen:
                seen.add(r)
                order.append(r)
        if ins.op is Opcode.Move:
            prefer.setdefault(ins.operand("dst"), ins.operand("src"))
    for r in order:
        taken = {colour[n] for n in graph.get(r, ()) if n in colour}
        want = colour.get(prefer.get(r, -1))
        if want is not None and want not in taken:
            colour[r] = want
            continue
        c = 0
        while c in taken:
            c += 1
        colour[r] = c
    return colour


# readers that look at a tensor's shape only, or copy it into a kernel's outputs
_PRIVATE_USES = {Opcode.InvokePacked, Opcode.ShapeOf, Opcode.InvokeShapeFunc}


def private_tensors(fn: VMFunction) -> set[int]:
    """Registers defined once, by ``AllocTensor`` / ``AllocTensorReg``, whose tensor
    nothing but kernels (and shape reads) ever sees: never moved, returned, passed to a
    function, put in a tuple / ADT / closure / reference cell, reshaped (a view) or given to a
    data-dependent kernel (whose numpy result may be a view of it). Such a tensor is
    dead when its register is."""
    ndefs: dict[int, int] = {}
    escapes: set[int] = set(range(len(fn.param_names)))
    allocs = []
    for ins in fn.instructions:
        defs, uses = defs_uses(ins)
        for r in defs:
            ndefs[r] = ndefs.get(r, 0) + 1
        if ins.op is Opcode.AllocTensor or ins.op is Opcode.AllocTensorReg:
            allocs.append(ins.operand("dst"))
        if ins.op not in _PRIVATE_USES:
            escapes.update(uses)
    return {r for r in allocs if ndefs[r] == 1 and r not in escapes}


def storage_offsets(fn: VMFunction, graph: dict[int, set[int]]) -> tuple[dict[int, int], int]:
    """Instruction index of each plannable ``AllocTensor`` → its byte offset in the
    function's storage buffer, and that buffer's size (see the module docstring)."""
    private = private_tensors(fn)
    where, regs, sizes = [], [], []
    for i, ins in enumerate(fn.instructions):
        if ins.op is not Opcode.AllocTensor or ins.operand("storage") is not None:
            continue
        dst, shape, dtype = ins.operand("dst"), ins.operand("shape"), ins.operand("dtype")
        if dst in private and all(isinstance(d, (int, np.integer)) for d in shape):
            where.append(i)
            regs.append(dst)
            sizes.append(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize)
    index = {r: k for k, r in enumerate(regs)}  # private tensors are defined once
    conflicts = {k: [index[n] for n in graph.get(r, ()) if n in index]
                 for k, r in enumerate(regs)}
    offsets, total = pack_offsets(sizes, conflicts, _ALIGN)
    return dict(zip(where, offsets)), total


def optimize_function(fn: VMFunction, storage_reuse: bool = True) -> VMFunction:
    """The pass (see the module docstring); returns a new ``VMFunction``."""
    code = fn.instructions
    if not code or any(ins.op in _OPTIMISED for ins in code):
        return fn  # already optimised
    live = Liveness(fn)
    graph = interference(fn, live)
    colour = _colour(fn, graph)
    offsets, storage_size = storage_offsets(fn, graph) if storage_reuse else ({}, 0)
    storage = max(list(colour.values()) + [len(fn.param_names) - 1]) + 1  # a fresh register
    memory_regs = set()
    for ins in code:
        if ins.op in _HOLDS_MEMORY:
            memory_regs.update(defs_uses(ins)[0])
    for i in offsets:
        memory_regs.discard(code[i].operand("dst"))
    memory_regs -= set(range(len(fn.param_names)))
    for ins in code:
        if ins.op in _NO_MEMORY:
            memory_regs.difference_update(defs_uses(ins)[0])
    # fresh private tensors go back to the interpreter's pool when they die
    pooled = {r for r in private_tensors(fn) if r in memory_regs}

    unread = [_unread_unit(ins, live.live_out[i]) for i, ins in enumerate(code)]
    vanishes = [_vanishes(ins, colour) or (unread[i] and ins.op is Opcode.AllocADT)
                for i, ins in enumerate(code)]
    kept_from = [len(code) - 1] * (len(code) + 1)  # the first kept instruction at or after i
    for i in range(len(code) - 1, -1, -1):
        kept_from[i] = kept_from[i + 1] if vanishes[i] else i
    out: list[Instruction] = []
    if offsets:  # once per call; jumps are relative, so a prefix moves none of them
        out.append(Instruction(Opcode.AllocStorage, (storage, storage_size, _ALIGN, 0)))
    new_index = []
    for i, ins in enumerate(code):
        new_index.append(len(out))
        spec = ins.op.spec
        args = spec.renamed(ins.args, colour)
        if i in offsets:  # AllocTensor's optional operands: storage register, offset
            args = args[:spec.required] + (storage, offsets[i])
        if unread[i] and ins.op is Opcode.RefWrite:
            args = args[:spec.required]  # the write stays, its optional unit goes
        if not vanishes[i]:
            out.append(Instruction(ins.op, args))
        if live.succ[i] != (i + 1,) or i + 1 >= len(code):
            continue  # branches and ends: registers dying on an edge go with the frame
        dying = (live.uses[i] | (live.defs[i] if not unread[i] else frozenset())) \
            - live.live_out[i]
        still_live = {colour[r] for r in live.live_out[i]}
        kill = {colour[r] for r in dying if r in memory_regs} - still_live
        pool = {colour[r] for r in dying if r in pooled} - still_live
        nxt = code[kept_from[i + 1]]
        if nxt.op is Opcode.Ret:  # the frame goes anyway: only pooled tensors matter
            kill = pool
        kill -= {colour[r] for r in defs_uses(nxt)[0]} - pool  # overwritten next anyway
        if kill:
            out.append(Instruction(Opcode.KillRegister, (tuple(sorted(kill)),
                                                          tuple(sorted(pool)))))
    new_index.append(len(out))
    old_index = {j: i for i, j in enumerate(new_index)}
    for j, ins in enumerate(out):  # jump offsets are relative: re-aim them
        if ins.op.spec.jumps:
            old = old_index[j]
            a = list(ins.args)
            for p in ins.op.spec.jumps:
                a[p] = new_index[old + code[old].args[p]] - j
            out[j] = Instruction(ins.op, tuple(a))
    nregs = max(list(colour.values()) + [len(fn.param_names) - 1]) + 1 if colour else 0
    if offsets:
        nregs = storage + 1
    return dataclasses.replace(fn, instructions=out, num_regs=nregs)


def _vanishes(ins: Instruction, colour: dict[int, int]) -> bool:
    """A ``Move`` whose two registers were coalesced."""
    return ins.op is Opcode.Move and colour[ins.operand("dst")] == colour[ins.operand("src")]


def _unread_unit(ins: Instruction, live_out) -> bool:
    """A unit ``()`` (an empty tuple, or a ``RefWrite``'s result) that nothing reads:
    the write stays, the unit is dropped."""
    if ins.op is Opcode.RefWrite:
        unit = ins.operand("dst")
        return unit is not None and unit not in live_out
    return ins.op is Opcode.AllocADT and ins.operand("ctor") < 0 \
        and not ins.operand("fields") and ins.operand("dst") not in live_out


def optimize_functions(functions: list) -> list:
    """The compiler's hook: ``optimize_function`` on every function, as the current
    ``PassContext`` allows."""
    disabled = PassContext.current().disabled_pass
    if "VMLiveness" in disabled:
        return list(functions)
    reuse = "VMStorageReuse" not in disabled
    return [optimize_function(f, reuse) for f in functions]


def stable_registers(fn: VMFunction) -> list[int]:
    """Per instruction, the bitset of registers whose value there was surely set by a
    ``LoadConst``, an ``AllocStorage`` or ``AllocTensor`` on planned storage, or the
    caller (a parameter): values that stay the same objects from run to run, so the
    interpreter may keep them to skip recomputing their addresses. A forward "must"
    dataflow (intersection at joins)."""
    code = fn.instructions
    n = len(code)
    everything = -1  # all registers: the identity of intersection
    stable_in = [everything] * n
    gen, kill = [], []
    for ins in code:
        defs = _bits(defs_uses(ins)[0])
        same = ins.op is Opcode.LoadConst or ins.op is Opcode.AllocStorage or (
            ins.op is Opcode.AllocTensor and ins.operand("storage") is not None)
        gen.append(defs if same else 0)
        kill.append(defs)
    succ = [successors(i, ins) for i, ins in enumerate(code)]
    if n:
        stable_in[0] = everything  # parameters (and registers not yet written)
    work = deque(range(n))
    while work:
        i = work.popleft()
        out = (stable_in[i] & ~kill[i]) | gen[i]
        for s in succ[i]:
            new = stable_in[s] & out
            if new != stable_in[s]:
                stable_in[s] = new
                work.append(s)
    return stable_in


def storage_bytes(fn: VMFunction) -> int:
    """Bytes of one activation's arena (its ``AllocStorage`` buffers)."""
    return sum(ins.operand("nbytes") for ins in fn.instructions
               if ins.op is Opcode.AllocStorage)


__all__ = ["Liveness", "defs_uses", "interference", "optimize_function",
           "optimize_functions", "private_tensors", "stable_registers", "storage_bytes",
           "storage_offsets", "successors"]
