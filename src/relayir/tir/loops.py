"""Lower one stage — an output or temporary tensor with its inlined body — to loops.

Three shapes of loop nest, chosen per stage:

- no reduction: one loop per output axis (adjacent axes fused while every access stays
  affine), the outer loop parallel, the inner one ``simd``;
- reduction, scalar accumulators: output loops outside, one accumulator per distinct
  reduction, the reduce loops inside (innermost ``simd reduction``), then the epilogue
  (the rest of the body) stores the output — elementwise consumers of a reduction are
  fused this way;
- reduction, a row of accumulators over the last output axis: reduce loops outside that
  axis, so the inner loop runs along contiguous memory (``matmul``, ``conv2d``, a sum over
  a non-last axis).

A matmul-like stage (``sum(a * b)`` with an output axis for each operand) is first
offered to ``matmul.lower_tiled``: register tiles computed by a C micro-kernel, with its
consumers fused per tile; the nests above are for everything else.

``Schedule.reduce_inner`` forces a choice; ``auto`` scores the reads of the reduction
(+1 for a unit stride along the candidate inner variable, 0 when it does not move, -1
otherwise).
"""

from __future__ import annotations

import dataclasses

from ..te import expr as E
from ..te.visit import collect, free_vars, post_order, rewrite, substitute
from .matmul import lower_tiled
from .schedule import Schedule
from .simplify import Simplifier
from .stmt import (
    PARALLEL,
    SERIAL,
    VECTORIZED,
    Allocate,
    Assign,
    Buffer,
    BufferLoad,
    BufferStore,
    Declare,
    For,
    IfThenElse,
    LetStmt,
    Stmt,
    seq,
)

_OMP_REDUCTION = {"sum": "+", "prod": "*", "max": "max", "min": "min", "and": "&&", "or": "||"}
_DIV_MOD = (E.TruncDiv, E.TruncMod, E.FloorDiv, E.FloorMod)
# an innermost elementwise axis this short is written out, and the loop around it (when
# at least this long, or dynamic) vectorised instead
_SHORT_INNER, _SIMD_OUTER = 4, 16
_COSTLY = {"exp", "log", "log2", "log10", "tanh", "erf", "pow", "sin", "cos", "tan", "sqrt"}


@dataclasses.dataclass
class Stage:
    """``buffer[axes] = body``; ``body``'s tensor reads are already ``BufferLoad``s."""

    name: str
    axes: list  # [(Var, extent)]
    buffer: Buffer
    body: E.Expr
    tag: str = ""


def _static(e) -> int | None:
    v = E.const_value(e)
    return None if v is None else int(v)


def _range(extent) -> tuple:
    n = _static(extent)
    return (0, None if n is None else n - 1)


def _prod(extents) -> E.Expr:
    out: E.Expr = E.IntImm(1)
    for d in extents:
        out = out * d
    return out


class _Lowering:
    def __init__(self, stage: Stage, sched: Schedule, dim_ranges: dict):
        self.stage = stage
        self.sched = sched
        self.ranges = dict(dim_ranges)
        self.extents: dict = {}  # loop var -> symbolic extent (see Simplifier)
        self.names: dict[str, int] = {}

    def fresh(self, base: str, dtype: str = E.INDEX) -> E.Var:
        n = self.names.get(base, 0)
        self.names[base] = n + 1
        return E.Var(base if n == 0 else f"{base}{n}", dtype)

    def simplifier(self) -> Simplifier:
        return Simplifier(self.ranges, self.extents)

    # ------------------------------------------------------------ entry

    def run(self) -> Stmt:
        st = self.stage
        sub, axes = {}, []
        for v, ext in st.axes:
            if _static(ext) == 1:
                sub[v] = E.IntImm(0)
            else:
                axes.append((v, ext))
                self.ranges[v] = _range(ext)
                if _static(ext) is None:
                    self.extents[v] = ext
        offset = st.buffer.offset([v for v, _ in st.axes])
        for r in collect(st.body, E.Reduce):
            for a in r.axes:
                self.ranges[a.var] = _range(a.extent)
                if _static(a.extent) is None:
                    self.extents[a.var] = a.extent
        simp = self.simplifier()
        offset, body = simp(substitute(offset, sub)), simp(substitute(st.body, sub))
        if self.sched.loop_order is not None and len(self.sched.loop_order) == len(axes):
            axes = [axes[k] for k in self.sched.loop_order]
        if self.sched.fuse_axes:
            axes, (offset, body) = self.fuse_all(axes, [offset, body])
        reduces = collect(body, E.Reduce)
        if not reduces:
            return self.elementwise(axes, offset, body)
        reduces = [self.fuse_reduce_axes(r) for r in reduces]
        body = _replace(body, dict(zip(collect(body, E.Reduce), reduces)))
        guard = _guard(body)
        if guard is not None:  # computed only where its branch is taken (untiled)
            main = [r for r in collect(body, E.Reduce) if r not in guard[1]]
            return self.untiled(axes, offset, body, main, guarded=True)
        if len(reduces) == 1 and self.sched.tile_n:
            tiled = lower_tiled(self, axes, offset, body, reduces[0])
            if type(tiled) is IfThenElse and tiled.else_case is None:  # few rows: untiled
                rows_inside = ([a for a in axes if _static(a[1]) is not None]
                               + [a for a in axes if _static(a[1]) is None])
                return IfThenElse(tiled.cond, tiled.then_case,
                                  self.untiled(rows_inside, offset, body, reduces))
            if tiled is not None:
                return tiled
        return self.untiled(axes, offset, body, reduces)

    def untiled(self, axes, offset, body, reduces, guarded: bool = False) -> Stmt:
        """A reduction's nest without register tiles: blocked, else scalar. ``guarded``:
        ``body`` has a select whose untaken branch holds the reductions not in
        ``reduces`` (``_guard``, found again once ``reduces`` are accumulators)."""
        if len(reduces) == 1 and self.use_block(axes, reduces[0]):
            return self.block(axes, offset, body, reduces[0], guarded)
        return self.scalar(axes, offset, body, reduces, guarded)

    def store(self, offset, body, guard) -> Stmt:
        """``out[offset] = body``; with a ``guard`` (``_guard`` of this ``body``), the
        reductions in its select's other branch run only where its condition fails."""
        out = self.stage.buffer
        if guard is None:
            return BufferStore(out, offset, body)
        sel, late = guard
        values, decls = {}, []
        for r in late:
            acc = self.fresh("acc", r.acc_dtype)
            values[r] = E.cast(r.dtype, acc)
            decls.append((r, acc))
        slow: Stmt = BufferStore(out, offset, _replace_node(body, sel, _replace(sel.f, values)))
        for r, acc in reversed(decls):
            update = Assign(acc, _combine(r.combiner, acc, E.cast(r.acc_dtype, r.source)))
            loops = self.wrap([(a.var, a.extent) for a in r.axes], update, 0, None, False)
            slow = Declare(acc, _init(r.combiner, r.acc_dtype), seq(loops, slow))
        return IfThenElse(sel.cond, BufferStore(out, offset, _replace_node(body, sel, sel.t)),
                          slow)

    # ------------------------------------------------------------ loop fusion

    def try_fuse(self, a, b, exprs):
        """Merge loops ``a`` (outer) and ``b`` (inner) if no access needs a div/mod."""
        (va, ea), (vb, eb) = a, b
        na, nb = _static(ea), _static(eb)
        if na is None or nb is None:
            return None
        w = self.fresh(f"{va.name}_{vb.name}" if len(va.name) + len(vb.name) < 12 else "f")
        self.ranges[w] = (0, na * nb - 1)
        mapping = {va: E.TruncDiv(w, E.IntImm(nb)), vb: E.TruncMod(w, E.IntImm(nb))}
        simp = self.simplifier()
        new = [simp(substitute(x, mapping)) for x in exprs]
        for x in new:
            for node in post_order(x):
                if isinstance(node, _DIV_MOD) and w in free_vars(node):
                    return None
        return (w, E.IntImm(na * nb)), new

    def fuse_all(self, axes, exprs):
        axes = list(axes)
        k = len(axes) - 2
        while k >= 0:
            fused = self.try_fuse(axes[k], axes[k + 1], exprs)
            if fused is not None:
                axes[k:k + 2] = [fused[0]]
                exprs = fused[1]
            k -= 1
        return axes, exprs

    def fuse_reduce_axes(self, r: E.Reduce) -> E.Reduce:
        axes = [(a.var, a.extent) for a in r.axes]
        exprs = [r.source] + ([r.index] if r.index is not None else [])
        axes, exprs = self.fuse_all(axes, exprs)
        if len(axes) == len(r.axes):
            return r
        return E.Reduce(r.combiner, exprs[0], [E.IterVar(v, e) for v, e in axes], r.dtype,
                        r.acc_dtype, exprs[1] if len(exprs) > 1 else None, r.last)

    # ------------------------------------------------------------ parallelism

    def cost(self, body: E.Expr) -> int:
        calls = sum(1 for x in post_order(body) if isinstance(x, E.Call) and x.name in _COSTLY)
        return 1 + 4 * calls

    def parallel(self, loops: list, work_extents: list, body: E.Expr) -> tuple:
        """``(number of loops to run in parallel, run-time condition or None)``."""
        if not self.sched.parallel or not loops:
            return 0, None
        threshold = max(1, self.sched.parallel_min_work // self.cost(body))
        work = _static(self.simplifier()(_prod(work_extents)))
        cond = None
        if work is None:
            cond = E.GE(self.simplifier()(_prod(work_extents)), E.IntImm(threshold))
        elif work < threshold:
            return 0, None
        n = 1
        outer = _static(loops[0][1])
        if outer is not None and outer < self.sched.collapse_below:
            n = min(self.sched.parallel_collapse, len(loops))
        return n, cond

    def wrap(self, loops: list, stmt: Stmt, n_parallel: int, cond, inner_simd: bool,
             reduction=None) -> Stmt:
        """Put ``loops`` (outer first) around ``stmt``."""
        for k in range(len(loops) - 1, -1, -1):
            var, ext = loops[k]
            ann, kind = {}, SERIAL
            innermost = k == len(loops) - 1
            if innermost and inner_simd and self.sched.vectorize:
                kind = VECTORIZED
                ann["simd"] = True
                if self.sched.simdlen:
                    ann["simdlen"] = self.sched.simdlen
                if reduction:
                    ann["reduction"] = reduction
            # gcc takes no pragma between the loops of an OpenMP collapse: a loop inside
            # one is not unrolled (found by the fuzzer under a random schedule)
            if innermost and self.sched.unroll and not (n_parallel > 1 and k < n_parallel):
                ann["unroll"] = self.sched.unroll
            if k == 0 and not self.sched.vectorize:
                ann["scalar"] = True  # compiled without gcc's own vectorisation (RL_SCALAR)
            if k == 0 and n_parallel:
                kind = PARALLEL
                if n_parallel > 1:
                    ann["collapse"] = n_parallel
                if cond is not None:
                    ann["parallel_if"] = cond
                if reduction and not ann.get("simd"):
                    ann["reduction"] = reduction
            stmt = For(var, self.simplifier()(ext), stmt, kind, ann)
        return stmt

    # ------------------------------------------------------------ nests

    def elementwise(self, axes, offset, body) -> Stmt:
        short = _static(axes[-1][1]) if len(axes) > 1 else None
        if self.sched.vectorize and short and 1 < short <= _SHORT_INNER and (
                (_static(axes[-2][1]) or _SIMD_OUTER) >= _SIMD_OUTER):
            # an innermost axis of a few elements (an NHWC tensor of 3 channels written
            # from NCHW): its stores written out one by one, the loop around them the
            # vectorised one, 16 pixels a vector instead of a 3-lane loop. Written out,
            # not `#pragma GCC unroll`: gcc 12.2 miscompiles that nest vectorised as an
            # outer loop (a select per element; with -fno-tree-vrp)
            var, simp = axes[-1][0], self.simplifier()
            stores = [BufferStore(self.stage.buffer, simp(substitute(offset, {var: E.IntImm(k)})),
                                  simp(substitute(body, {var: E.IntImm(k)})))
                      for k in range(short)]
            n_par, cond = self.parallel(axes[:-1], [e for _, e in axes], body)
            if n_par and len(axes) > 2:
                n_par = min(n_par, len(axes) - 2)  # keep the simd loop out of a collapse
            return self.wrap(axes[:-1], seq(*stores), n_par, cond, True)
        store = BufferStore(self.stage.buffer, offset, body)
        inner = bool(axes) and _static(axes[-1][1]) != 1
        n_par, cond = self.parallel(axes, [e for _, e in axes], body)
        if n_par and len(axes) > 1:
            n_par = min(n_par, len(axes) - 1)  # keep the simd loop out of a collapse
        return self.wrap(axes, store, n_par, cond, inner)

    def reduce_loops(self, r: E.Reduce, update: Stmt, simd_reduction, spatial: bool) -> Stmt:
        loops = [(a.var, a.extent) for a in r.axes]
        n = _static(loops[-1][1]) if loops else None
        if n is not None and n < 8:
            simd_reduction = None  # a 3-tap window: unrolled scalar code beats a simd reduction
        n_par, cond = 0, None
        if not spatial and simd_reduction:  # a whole-tensor reduction: split it across cores
            n_par, cond = self.parallel(loops[:1], [e for _, e in loops], r.source)
            n_par = min(n_par, 1)
        return self.wrap(loops, update, n_par, cond, simd_reduction is not None,
                         simd_reduction)

    def scalar(self, axes, offset, body, reduces, guarded: bool = False) -> Stmt:
        values, decls = {}, []
        chosen = self.best_reduce_inner(reduces) if len(reduces) == 1 else None
        for n, r in enumerate(reduces):
            if chosen is not None:
                r = _move_inner(r, chosen)
            acc = self.fresh("acc", r.acc_dtype)
            if r.combiner in ("argmax", "argmin"):
                idx = self.fresh("idx", E.INDEX)
                values[reduces[n]] = E.cast(r.dtype, idx)
                decls.append((r, acc, idx))
            else:
                values[reduces[n]] = E.cast(r.dtype, acc)
                decls.append((r, acc, None))
        body = _replace(body, values)
        stmt = self.store(offset, body, _guard(body) if guarded else None)
        for r, acc, idx in reversed(decls):
            if idx is None:
                update = Assign(acc, _combine(r.combiner, acc, E.cast(r.acc_dtype, r.source)))
                red = None if _in_order(r) else (_OMP_REDUCTION[r.combiner], acc)
                loops = self.reduce_loops(r, update, red, bool(axes))
                stmt = Declare(acc, _init(r.combiner, r.acc_dtype), seq(loops, stmt))
            else:
                loops = self.reduce_loops(r, self.arg_update(r, acc, idx), None, True)
                stmt = Declare(acc, _init(r.combiner, r.acc_dtype),
                               Declare(idx, E.IntImm(0), seq(loops, stmt)))
        extents = [e for _, e in axes] + [a.extent for r in reduces for a in r.axes]
        n_par, cond = self.parallel(axes, extents, body)
        return self.wrap(axes, stmt, n_par, cond, False)

    def arg_update(self, r: E.Reduce, acc: E.Var, idx: E.Var) -> Stmt:
        v = self.fresh("v", r.acc_dtype)
        src = E.cast(r.acc_dtype, r.source)
        if r.combiner == "argmax":
            better = E.GE(v, acc) if r.last else E.GT(v, acc)
        else:
            better = E.LE(v, acc) if r.last else E.LT(v, acc)
        return LetStmt(v, src, IfThenElse(better, seq(Assign(acc, v), Assign(idx, r.index))))

    def block(self, axes, offset, body, r: E.Reduce, guarded: bool = False) -> Stmt:
        (s, ext), outer = axes[-1], axes[:-1]
        acc = Buffer(self.fresh("acc").name, r.acc_dtype, (ext,), "local")
        here = BufferLoad(acc, s)
        init = BufferStore(acc, s, _init(r.combiner, r.acc_dtype))
        update = BufferStore(acc, s, _combine(r.combiner, here, E.cast(r.acc_dtype, r.source)))
        body = _replace(body, {r: E.cast(r.dtype, here)})
        guard = _guard(body) if guarded else None
        fast = body if guard is None else _replace_node(body, guard[0], guard[0].t)
        final = self.wrap([(s, ext)], BufferStore(self.stage.buffer, offset, fast), 0, None,
                          True)
        if guard is not None:  # the row as before where every lane passes, else lane by lane
            # an int | reduction vectorises (a bool || one kept the check scalar: +10-15%
            # on a Winograd layer)
            failed = self.fresh("failed", "int32")
            miss = E.cast("int32", E.Not(guard[0].cond))
            check = self.wrap([(s, ext)], Assign(failed, E.BitOr(failed, miss)), 0, None, True,
                              ("|", failed))
            slow = self.wrap([(s, ext)], self.store(offset, body, guard), 0, None, False)
            final = Declare(failed, E.const(0, "int32"),
                            seq(check, IfThenElse(E.NE(failed, E.const(0, "int32")), slow,
                                                  final)))
        rloops = [(a.var, a.extent) for a in r.axes]
        stmt = seq(self.wrap([(s, ext)], init, 0, None, True),
                   self.wrap(rloops + [(s, ext)], update, 0, None, True), final)
        extents = [e for _, e in axes] + [a.extent for a in r.axes]
        n_par, cond = self.parallel(outer, extents, body)
        return self.wrap(outer, Allocate(acc, stmt), n_par, cond, False)

    # ------------------------------------------------------------ choosing the inner loop

    def use_block(self, axes, r: E.Reduce) -> bool:
        if not axes or r.combiner not in _OMP_REDUCTION or self.sched.reduce_inner == "reduce":
            return False
        n = _static(axes[-1][1])
        if n is None or n > self.sched.block_limit:
            return False
        if self.sched.reduce_inner == "spatial":
            return True
        loads = collect(r.source, BufferLoad)
        spatial = self.score(axes[-1], loads)
        best = max(self.score((a.var, a.extent), loads) for a in r.axes)
        return spatial > best

    def best_reduce_inner(self, reduces):
        r = reduces[0]
        if len(r.axes) < 2 or r.combiner in ("argmax", "argmin") or _in_order(r):
            return None
        loads = collect(r.source, BufferLoad)
        scores = [(self.score((a.var, a.extent), loads), k) for k, a in enumerate(r.axes)]
        return max(scores)[1]

    def score(self, axis, loads) -> float:
        var, ext = axis
        simp = self.simplifier()
        total = 0
        for load in loads:
            lin = simp.linear(load.offset)
            elsewhere = any(var in free_vars(a) for a in lin.terms if a is not var)
            c = abs(lin.terms.get(var, 0))
            # unit stride +1, small stride (a strided window) +0.5, large stride -1
            total += -1 if elsewhere else (0 if c == 0 else (1 if c == 1 else
                                                              (0.5 if c <= 4 else -1)))
        n = _static(ext)
        return total * (1.0 if n is None else min(n, 16) / 16)


def _in_order(r: E.Reduce) -> bool:
    """Whether ``r`` runs in numpy's order, one accumulator along memory order: a float
    product. Reordered (simd lanes, a split across threads, another axis innermost), a
    partial product overflows to inf or underflows to 0 where numpy's does not, and then
    inf * 0 is NaN where numpy gives inf (fuzz seed 33071)."""
    return r.combiner == "prod" and E.is_float(r.acc_dtype)


def _move_inner(r: E.Reduce, k: int) -> E.Reduce:
    axes = list(r.axes)
    axes.append(axes.pop(k))
    return E.Reduce(r.combiner, r.source, axes, r.dtype, r.acc_dtype, r.index, r.last)


def _guard(body: E.Expr):
    """``(select, reductions)``: a ``select(c, t, f)`` of ``body`` whose ``f`` holds
    reductions read nowhere else in ``body`` (not in ``c``, not in ``t``), or None. A
    select evaluates only the branch it takes, so those reductions run only where ``c``
    fails (the Winograd kernels' direct sum for outputs that came out non-finite)."""
    for sel in collect(body, E.Select):
        late = collect(sel.f, E.Reduce)
        if late:
            elsewhere = {*collect(_replace_node(body, sel, sel.t), E.Reduce),
                         *collect(sel.cond, E.Reduce)}  # sign(max(..)) tests it first
            late = [r for r in late if r not in elsewhere]
            # plain accumulations only (an argmax's index, an and/or: computed eagerly)
            if late and all(r.combiner in _LAZY for r in late):
                return sel, late
    return None


_LAZY = ("sum", "prod", "max", "min")  # reductions a guard may leave uncomputed


def _replace_node(body: E.Expr, node: E.Expr, new: E.Expr) -> E.Expr:
    return rewrite(body, lambda x: new if x == node else x)


def _replace(body: E.Expr, values: dict) -> E.Expr:
    if not values:
        return body
    return rewrite(body, lambda x: values.get(x, x) if isinstance(x, E.Reduce) else x)


def _combine(combiner: str, acc, src) -> E.Expr:
    if combiner in ("sum", "prod") and acc.dtype == "float16":
        # float16 is computed in float: a float16 accumulator (a cumprod's, as numpy
        # multiplies) is rounded to half at each step, as numpy's is
        return E.Cast("float16", acc + src if combiner == "sum" else acc * src)
    if combiner == "sum":
        return acc + src
    if combiner == "prod":
        return acc * src
    if combiner == "max":
        return E.Max(acc, src)
    if combiner == "min":
        return E.Min(acc, src)
    if combiner == "and":
        return E.And(acc, src)
    return E.Or(acc, src)


def _init(combiner: str, dtype: str) -> E.Expr:
    if combiner in ("sum", "or"):
        return E.const(0, dtype)
    if combiner in ("prod", "and"):
        return E.const(1, dtype)
    if combiner in ("max", "argmax"):
        return E.min_value(dtype)
    return E.max_value(dtype)


def lower_stage(stage: Stage, sched: Schedule, dim_ranges: dict | None = None) -> Stmt:
    """The loop nest that computes ``stage`` under ``sched``."""
    return _Lowering(stage, sched, dim_ranges or {}).run()
