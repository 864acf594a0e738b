"""Features of a candidate for the cost model, from its lowered loop IR.

In the spirit of Ansor's per-store features: every store of the kernel (a
``BufferStore``, a micro-kernel call, a C routine call) is described by the loops
around it — iterations, depth, innermost extent and its annotations (vectorised,
unrolled), parallel extent and how deep the parallel loop sits — and by what it reads:
loads, their strides along the innermost loop (0: broadcast, 1: contiguous, other:
strided), the buffers' kinds (input, temporary, per-thread scratch, stack), arithmetic
per element and its intensity (operations per byte loaded). A micro-kernel call adds
its tile (rows, vectors, accumulator sets). The heaviest ``STORES`` stores (by
iterations) are kept in order, with totals over all; the task's shape and the config's
knobs are appended, so one model serves every task of a kind.

The vector has a fixed length (``length()``) whatever the task.
"""

from __future__ import annotations

import math

import numpy as np

from ..te import expr as E
from ..te.visit import post_order, substitute
from ..tir.microkernel import CallMicroKernel, Pointer
from ..tir.stmt import (
    PARALLEL,
    UNROLLED,
    VECTORIZED,
    Allocate,
    BufferLoad,
    BufferStore,
    CallRoutine,
    Declare,
    For,
    IfThenElse,
    LetStmt,
    PrimFunc,
    SeqStmt,
)
from .space import KNOBS
from .task import KINDS, Profile

STORES = 4  # heaviest stores described one by one
_PER_STORE = 20
_TOTALS = 8
_BUFFER_KINDS = ("input", "output", "temp", "scratch", "local", "const")
_CATEGORIES = {"tile_form": ("auto", "direct", "packed"),
               "reduce_inner": ("auto", "reduce", "spatial")}


def _log(x: float) -> float:
    return math.log2(1.0 + max(x, 0.0))


def _extent(e) -> float:
    v = E.const_value(e)
    return float(v) if v is not None else 64.0  # a symbolic extent: a typical size


class _Store:
    __slots__ = ("loops", "node")

    def __init__(self, loops: tuple, node):
        self.loops = loops
        self.node = node

    @property
    def iterations(self) -> float:
        return math.prod(_extent(f.extent) for f in self.loops)


def _stores(body) -> list[_Store]:
    """Every store with the loops around it (outermost first)."""
    out, stack = [], [(body, ())]
    while stack:
        s, loops = stack.pop()
        if isinstance(s, For):
            stack.append((s.body, (*loops, s)))
        elif isinstance(s, SeqStmt):
            stack.extend((x, loops) for x in reversed(s.stmts))
        elif isinstance(s, IfThenElse):
            stack.extend((x, loops) for x in (s.else_case, s.then_case) if x is not None)
        elif isinstance(s, (BufferStore, CallMicroKernel, CallRoutine)):
            out.append(_Store(loops, s))
        elif isinstance(s, (Allocate, LetStmt, Declare)) or hasattr(s, "body"):
            stack.append((s.body, loops))
        elif hasattr(s, "value"):  # Assign: an accumulator update
            out.append(_Store(loops, s))
    return out


def _stride(offset, var) -> float | None:
    """How far ``offset`` moves when ``var`` steps by one (``None``: not affine there)."""
    if var is None:
        return 0.0
    try:
        a = E.const_value(_fold(substitute(offset, {var: E.IntImm(1)})))
        b = E.const_value(_fold(substitute(offset, {var: E.IntImm(0)})))
    except Exception:  # noqa: BLE001  (an expression this quick folder cannot take)
        return None
    return None if a is None or b is None else float(a - b)


def _fold(e):
    """Set every remaining variable to 0 and fold constants (enough for a stride)."""
    free = {x: E.IntImm(0) for x in post_order(e) if isinstance(x, E.Var)}
    e = substitute(e, free) if free else e
    values: dict[int, int] = {}
    for x in post_order(e):
        if isinstance(x, E.IntImm):
            values[id(x)] = int(x.value)
        elif isinstance(x, E.Cast) and id(x.value) in values:
            values[id(x)] = values[id(x.value)]
        elif isinstance(x, E.BinaryOp) and id(x.a) in values and id(x.b) in values:
            a, b = values[id(x.a)], values[id(x.b)]
            op = type(x).__name__
            fn = {"Add": a + b, "Sub": a - b, "Mul": a * b, "Min": min(a, b), "Max": max(a, b)}
            if op in fn:
                values[id(x)] = fn[op]
            elif op in ("FloorDiv", "TruncDiv", "Div") and b:
                values[id(x)] = a // b
            elif op in ("FloorMod", "TruncMod") and b:
                values[id(x)] = a % b
    return E.IntImm(values[id(e)]) if id(e) in values else e


def _store_features(st: _Store) -> list[float]:
    loops = st.loops
    inner = loops[-1] if loops else None
    par = [i for i, f in enumerate(loops) if f.kind == PARALLEL]
    par_extent = 1.0
    for i in par:
        depth = 1 + int(loops[i].annotations.get("collapse", 1) or 1) - 1
        for f in loops[i:i + max(depth, 1)]:
            par_extent *= _extent(f.extent)
    node = st.node
    mk = (node.kernel.mr, node.kernel.nv, node.kernel.kunroll) \
        if isinstance(node, CallMicroKernel) else (0, 0, 0)
    value = getattr(node, "value", None)
    loads, arith = [], 0
    if isinstance(node, CallMicroKernel):
        loads = [a for a in node.args if isinstance(a, Pointer)]
    elif value is not None:
        for x in post_order(value):
            if isinstance(x, BufferLoad):
                loads.append(x)
            elif isinstance(x, (E.BinaryOp, E.Call, E.Select)):
                arith += 1
    var = inner.var if inner is not None else None
    strides = [_stride(ld.offset, var) for ld in loads[:8]]
    kinds = [ld.buffer.kind for ld in loads]
    iters = st.iterations
    flops = iters * (2 * mk[0] * mk[1] * 16 if mk[0] else arith)
    bytes_ = iters * 4 * (len(loads) + 1)
    return [
        _log(iters), len(loops), _log(_extent(inner.extent)) if inner else 0.0,
        float(bool(inner and (inner.kind == VECTORIZED or inner.annotations.get("simd")))),
        float(bool(inner and (inner.kind == UNROLLED or inner.annotations.get("unroll")))),
        _log(par_extent) if par else 0.0, float(par[0]) if par else -1.0,
        float(len(loads)), float(arith),
        float(sum(1 for s in strides if s == 0)), float(sum(1 for s in strides if s == 1)),
        float(sum(1 for s in strides if s not in (0, 1))),
        float(sum(k in ("temp", "scratch") for k in kinds)),
        float(sum(k == "local" for k in kinds)),
        *map(float, mk), _log(flops), flops / max(bytes_, 1.0),
        float(isinstance(node, CallRoutine)),
    ]


def loop_features(kernel: PrimFunc) -> list[float]:
    stores = _stores(kernel.body)
    rows = sorted((_store_features(s) for s in stores), key=lambda r: -r[0])
    out: list[float] = []
    for i in range(STORES):
        out.extend(rows[i] if i < len(rows) else [0.0] * _PER_STORE)
    allocs, stack = [], [kernel.body]
    while stack:  # temporaries: memory traffic a schedule adds (packed panels, blocks)
        s = stack.pop()
        if isinstance(s, Allocate):
            allocs.append(s.buffer)
        if isinstance(s, SeqStmt):
            stack.extend(s.stmts)
        elif isinstance(s, IfThenElse):
            stack.extend(x for x in (s.then_case, s.else_case) if x is not None)
        elif hasattr(s, "body"):
            stack.append(s.body)
    temp_bytes = sum(math.prod(_extent(d) for d in b.shape) * 4 for b in allocs)
    parallel_regions = sum(1 for s in stores if any(f.kind == PARALLEL for f in s.loops))
    out += [
        _log(sum(s.iterations for s in stores)), float(len(stores)),
        float(sum(isinstance(s.node, CallMicroKernel) for s in stores)),
        float(parallel_regions), float(len(allocs)), _log(temp_bytes),
        float(sum(b.kind == "scratch" for b in allocs)), float(len(kernel.constants)),
    ]
    return out


def config_features(profile: Profile, config: dict) -> list[float]:
    out = [_log(profile.flops), _log(profile.rows), _log(profile.columns),
           _log(profile.reduction), *(float(profile.kind == k) for k in KINDS)]
    for knob in KNOBS:
        v = config.get(knob.name)
        if knob.name in _CATEGORIES:
            out.extend(float(v == c) for c in _CATEGORIES[knob.name])
        elif v is None:
            out.append(-1.0)
        elif isinstance(v, bool):
            out.append(float(v))
        elif isinstance(v, (int, float)):
            out.append(_log(v))
        else:
            out.append(0.0)
    return out


def features(kernel: PrimFunc, profile: Profile, config: dict) -> np.ndarray:
    """The cost model's input for ``kernel`` (``config`` lowered for ``profile``'s task)."""
    return np.asarray(loop_features(kernel) + config_features(profile, config), "float32")


def length() -> int:
    categories = sum(len(_CATEGORIES.get(k.name, (0,))) for k in KNOBS)
    return STORES * _PER_STORE + _TOTALS + 4 + len(KINDS) + categories


__all__ = ["STORES", "config_features", "features", "length", "loop_features"]
