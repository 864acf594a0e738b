"""Matmul-like stages (dense, matmul, batch_matmul, convolutions) as register tiles
computed by a C micro-kernel (``tir/microkernel.py``), with BLIS-style cache blocking and
the stage's epilogue (bias, ReLU, residual add, ...) applied per tile while it is in L1.

A stage qualifies when its one reduction is ``sum(S * V)`` over reduce axes ``R`` with:

- an output axis ``j`` along which ``V`` varies and ``S`` does not (the tile's columns,
  ``nr = nv * lanes``: whole vector registers), and an output axis ``i`` along which ``S``
  varies and ``V`` does not (the tile's rows, ``mr``);
- ``S`` a load of the accumulation dtype (float32 or float64) at an offset affine in
  ``i`` and ``R`` (any strides, symbolic ones too): the micro-kernel reads it in place,
  one element at a time, and broadcasts it.

The tile::

    for (other output axes, column tiles jo, row tiles io)     (parallel, collapsed)
      C[mr][nr]                                                 (the caller's, in L1)
      rl_gemm_<dtype>_<mr>x<nr>(C, first, rows, &S[..], rsa, &B[..], n0, sa0, sb0, ...)
      out[i, j] = epilogue(C[ii][jj])                           (fused, vectorised on jj)

Tile shape (``Schedule.tile_m``, ``tile_n``, sized for ``Schedule.machine``): ``nv =
tile_n / lanes`` vectors per row (2 by default: 32 floats on AVX-512, 16 on AVX2),
``mr`` the most rows the registers hold next to them (accumulators ``mr·nv``, plus ``nv``
column vectors and one broadcast: 14 × 32 on AVX-512's 32 registers, 6 × 16 on AVX2's
16), among the largest counts the one that divides the row extent best. A packed panel
longer than half the L2 narrows ``nv``; a stage with few rows widens it (up to 4) to fill
the registers; a tile with fewer than 8 accumulators (one row) keeps 2–4 sets of them
over alternate reduction steps. Full row tiles call the kernel with a constant row count
(the compiler folds every row's address into one pointer), the last short one with its
own.

``B`` comes in one of two forms:

- *direct*: ``V`` itself, when it is contiguous along ``j`` within a tile and affine in
  ``R`` (a weight already packed at build time, an NCHW[x]c kernel, ``matmul``'s right
  operand). The tile width divides the static extent of ``j``. A stage whose rows all
  have extent 1 (a batch-1 dense) gets a unit row axis: a one-row tile.
- *packed*: ``V`` copied into zero-padded panels ``Vp[jo][r...][nr]`` (k-major, ``nr``
  contiguous) that the micro-kernel streams; any ``V`` qualifies (a runtime weight,
  ``batch_matmul``'s right operand, symbolic column counts). Panels are packed up front
  (``temp``), or, when ``V`` differs per batch or there are many column tiles, each
  thread packs the panel it is about to use (``scratch``: read back from cache). A stage
  with fewer than ``tile_min_m`` rows keeps the untiled nest rather than pack at run time.

The direct form is preferred when ``V`` is already panel-major (its stride along the
innermost reduce axis equals the tile width: nothing to gain from a copy) or when
``tile_form`` says so; otherwise packing is preferred.

**Pre-packed dense weights** (for the graph rewrite that folds the packing into the
constants): ``nn.contrib_dense_pack(x, Wp)`` with ``Wp`` of shape ``(N / nb, K, nb)``,
``Wp[jo, k, jj] = W[jo * nb + jj, k]``, computes ``out[.., j] = sum_k x[.., k] *
Wp[j // nb, k, j % nb]``. Its ``V`` is contiguous along ``jj`` and panel-major, so it
takes the direct form with tiles of ``nb`` columns when ``nb`` is a multiple of the
vector width (``nb = 2 * lanes`` is what the tiles want: 32 on AVX-512, 16 on AVX2, 8 on
NEON; ``nb = lanes`` works with a one-vector tile). ``N`` must be a multiple of ``nb``
(pad the weight with zero rows otherwise). Batch 1 works too (``mr = 1``: the kernel
then keeps several accumulator sets over alternate reduction steps).

**Convolutions**: ``nn.contrib_conv2d_NCHWc`` (``W[oc, ic, kh, kw, ib, ob]``) tiles
directly (``j = ob``, ``i = w``, reduce ``[ic, kh, kw·ib]``); NCHW/NHWC ``conv2d`` tile in
the packed form (``j = o``, ``i`` = the output's last spatial axis).

Reduce axes: the micro-kernel runs the last three (``tir/microkernel.LEVELS``) in its
own loops; outer ones loop around the call, which then accumulates (``first == 0``).
Extents of ``i``, ``j`` and ``R`` may be symbolic (the VM's dynamic shapes: BERT's
sequence length): row and column counts are run-time values, the last tile's rows are
clamped inside the kernel and its stores bounded, packed panels are zero padded. A
packed nest with a symbolic row count comes as ``if (m >= tile_min_m) nest`` with no
else; the caller (``loops.py``) adds its untiled nest there.

Cache blocking (``Schedule.kc``, ``mc``, ``nc``; 0 derives them from the machine's
caches: ``kc`` so that a ``kc × nr`` panel fills half the L2 — 4096 for 32 floats in 1
MiB —, ``mc`` so that ``mc`` rows of the left operand over ``min(K, kc)`` fill half the
L2, ``nc`` the same for the right operand in half the L3): tiles are visited in blocks of
``nc`` columns × ``mc`` rows, all tiles of a block before the next, the parallel loop
over every tile (OpenMP's static schedule gives each thread whole blocks when there are
enough). A static reduction longer than ``kc`` (at most three reduce axes) runs in passes
over its outermost axis: for each block, every tile accumulates the pass into a
per-thread ``mc × nc`` scratch block (shared, one pass at a time, when there is one
block) and the epilogue runs after the last pass. Only the direct form and the up-front
packed form block; the per-thread packed form visits one panel's column at a time. (On
the Zen 5 development machine, 1 MiB of L2 per core, the unblocked order already runs
dense 512 at ~94% of one core's peak; the defaults block only larger problems.)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..te import expr as E
from ..te.computes.common import ravel
from ..te.visit import free_vars, post_order, rewrite, substitute
from .microkernel import LEVELS, MICROKERNEL_DTYPES, CallMicroKernel, MicroKernel, Pointer
from .stmt import (
    PARALLEL,
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    For,
    IfThenElse,
    LetStmt,
    seq,
)

_COLUMNS_PER_TILE_PACKING = 8  # column tiles from which each thread packs its own panel
_IN_FLIGHT = 8  # fused multiply-adds a core keeps in flight (2 pipes x 4 cycles latency)
_MAX_WIDEN = 4  # vectors per row a short stage may widen its tiles to
_PACK_CHUNK = 128  # reduction steps per chunk of a row-reading panel copy
# Row strides (bytes) that are multiples of this map the rows a gathering copy reads to a
# few L1 sets: measured on Zen 5 (dense 64 x K -> 256), the gather is 1.2x faster than
# the row-reading copy at K = 768 / 784 and 1.2-1.8x slower at K = 512 / 1024 / 2048.
_ALIASING = 2048


def _strip(e):
    return e.value if isinstance(e, E.Cast) else e


def _static(e):
    v = E.const_value(e)
    return None if v is None else int(v)


def _operands(r: E.Reduce):
    """The two factors of ``sum(x * y)``, each a (cast) buffer load, else None."""
    src = r.source
    if r.combiner != "sum" or not isinstance(src, E.Mul):
        return None
    if not (isinstance(_strip(src.a), BufferLoad) and isinstance(_strip(src.b), BufferLoad)):
        return None
    return src.a, src.b


def _affine(e: E.Expr, loop_vars: set):
    """``e`` as ``(base, {var: coefficient})`` with ``base`` and the coefficients free of
    ``loop_vars``, or None when ``e`` is not affine in them."""
    forms: dict = {}
    for x in post_order(e):
        if isinstance(x, E.Var):
            forms[id(x)] = (E.IntImm(0), {x: E.IntImm(1)}) if x in loop_vars else (x, {})
            continue
        kids = [forms[id(c)] for c in (getattr(x, "a", None), getattr(x, "b", None))
                if c is not None] if isinstance(x, E.BinaryOp) else None
        if kids is not None and None not in kids and type(x) in (E.Add, E.Sub):
            (ba, ca), (bb, cb) = kids
            sign = 1 if type(x) is E.Add else -1
            coef = dict(ca)
            for v, c in cb.items():
                coef[v] = coef[v] + c * sign if v in coef else c * sign
            forms[id(x)] = ((ba + bb) if sign > 0 else (ba - bb)), coef
        elif kids is not None and None not in kids and type(x) is E.Mul:
            (ba, ca), (bb, cb) = kids
            if ca and cb:
                forms[id(x)] = None
            elif ca:
                forms[id(x)] = ba * bb, {v: c * bb for v, c in ca.items()}
            else:
                forms[id(x)] = ba * bb, {v: ba * c for v, c in cb.items()}
        elif free_vars(x) & loop_vars:
            forms[id(x)] = None
        else:
            forms[id(x)] = (x, {})
    return forms[id(e)]


@dataclasses.dataclass
class _Plan:
    i: E.Var
    j: E.Var
    s: BufferLoad  # the broadcast operand (no cast)
    v: E.Expr  # the vector operand (a load, maybe cast)
    packed: bool
    width: int | None = None  # direct: columns per tile (divides n)


def _itemsize(dtype: str) -> int:
    return np.dtype(dtype).itemsize


class _Tiler:
    def __init__(self, low, axes, offset, body, r: E.Reduce):
        self.low, self.sched = low, low.sched
        self.axes, self.offset, self.body, self.r = axes, offset, body, r
        self.ext = dict(axes)
        self.rvars = [a.var for a in r.axes]
        self.rext = [a.extent for a in r.axes]
        self.loop_vars = {v for v, _ in axes} | set(self.rvars)
        mach = self.sched.machine
        self.lanes = max(1, mach.vector_bytes // _itemsize(r.acc_dtype))
        self.regs = mach.vector_registers

    # ------------------------------------------------------------ planning

    def strides(self, e: E.Expr, wanted) -> dict | None:
        """Coefficients of ``wanted`` vars in offset ``e`` (None: not affine)."""
        form = _affine(self.low.simplifier()(e), self.loop_vars)
        if form is None:
            return None
        simp = self.low.simplifier()
        return {v: simp(form[1].get(v, E.IntImm(0))) for v in wanted}

    def direct_width(self, v: E.Expr, j: E.Var) -> int | None:
        """The widest tile (a multiple of the vector width dividing ``j``'s static extent,
        at most ``tile_n`` unless one vector is wider) over which ``V`` is contiguous along
        ``j`` and affine in ``R``."""
        n = _static(self.ext[j])
        load = _strip(v)
        if n is None or load.dtype != self.r.acc_dtype:
            return None
        cap = max(self.lanes, -(-self.sched.tile_n // self.lanes) * self.lanes)
        for w in range(cap - cap % self.lanes, 0, -self.lanes):
            if n % w:
                continue
            st = self.tile_strides(load, j, w)
            if st is not None and _static(st["jj"]) == 1:
                return w
        return None

    def tile_strides(self, load: BufferLoad, j: E.Var, w: int) -> dict | None:
        """Strides of ``load`` along the reduce variables and along ``"jj"``, the column
        within a tile, when ``j`` runs in tiles of ``w`` (None: not affine)."""
        n = _static(self.ext[j])
        jt, jj = E.Var("jt"), E.Var("jj")
        self.low.ranges.update({jt: (0, n // w - 1), jj: (0, w - 1)})
        off = substitute(load.offset, {j: jt * w + jj})
        self.loop_vars |= {jt, jj}
        st = self.strides(off, [jj, *self.rvars])
        self.loop_vars -= {jt, jj}
        if st is not None:
            st["jj"] = st.pop(jj)
        return st

    def plan(self) -> _Plan | None:
        r, sched = self.r, self.sched
        ops = _operands(r)
        if ops is None or r.acc_dtype not in MICROKERNEL_DTYPES:
            return None
        spatial = [v for v, _ in self.axes]
        for s, v in (ops, ops[::-1]):
            s_load = _strip(s)
            if s_load.dtype != r.acc_dtype:
                continue
            vs, vv = free_vars(s), free_vars(v)
            for j in reversed(spatial):
                if j in vs or j not in vv:
                    continue
                iis = [x for x in spatial if x in vs and x not in vv]
                width = self.direct_width(v, j) if sched.tile_form != "packed" else None
                if not iis and width is not None:  # one row (a batch-1 dense): a unit axis
                    iis = [self.unit_row()]
                if not iis or self.strides(s_load.offset, [iis[-1], *self.rvars]) is None:
                    continue
                i = iis[-1]
                packable = (sched.tile_form != "direct"
                            and (_static(self.ext[j]) or self.lanes) >= self.lanes)
                m = _static(self.ext[i])
                few_rows = m is not None and m < sched.tile_min_m
                if width is not None and (sched.tile_form == "direct" or not packable
                                          or few_rows or self.panel_major(v, j, width)):
                    return _Plan(i, j, s_load, v, False, width)
                if packable and not few_rows:
                    return _Plan(i, j, s_load, v, True)
                if width is not None:
                    return _Plan(i, j, s_load, v, False, width)
        return None

    def unit_row(self) -> E.Var:
        """A row axis of extent 1 for a stage whose rows were all of extent 1 (lowering
        drops those axes): the tile then has one row."""
        row = self.low.fresh("row")
        self.ext[row] = E.IntImm(1)
        self.low.ranges[row] = (0, 0)
        self.loop_vars.add(row)
        return row

    def panel_major(self, v, j, width) -> bool:
        """Is ``V`` already laid out as panels: its stride along the innermost reduce axis
        equals the tile width (a pre-packed weight, an NCHW[x]c kernel)?"""
        if not self.rvars:
            return False
        st = self.tile_strides(_strip(v), j, width)
        return st is not None and _static(st[self.rvars[-1]]) == width

    def tile_shape(self, p: _Plan) -> MicroKernel:
        sched, lanes, regs = self.sched, self.lanes, self.regs
        m, n = _static(self.ext[p.i]), _static(self.ext[p.j])
        if p.packed:
            nv = max(1, -(-sched.tile_n // lanes))
            if n is not None:
                nv = max(1, min(nv, -(-n // lanes)))  # n = 0: an empty output, any tile
        else:
            nv = p.width // lanes

        def most_rows(nv):
            return max(1, (regs - nv - 1) // nv)

        kprod = self.kprod()
        panel_limit = sched.machine.l2_bytes // 2 // _itemsize(self.r.acc_dtype)
        while p.packed and kprod and nv > 1 and kprod * nv * lanes > panel_limit:
            nv -= 1  # a long reduction: narrower panels stay in half the L2
        if p.packed and kprod and m is not None and n is not None and not sched.tile_m:
            # few rows: wider tiles fill the registers, while a panel stays in half the L2
            while (nv < _MAX_WIDEN and (nv + 1) * lanes <= -(-n // lanes) * lanes
                   and m <= most_rows(nv + 1) < most_rows(nv)
                   and kprod * (nv + 1) * lanes <= panel_limit):
                nv += 1
        top = sched.tile_m or most_rows(nv)
        mr = top
        if m is not None and not sched.tile_m:
            mr = min(range(max(1, (top + 1) // 2), top + 1),
                     key=lambda r: (-(-m // r), -(-m // r) * r - m, -r))
            mr = max(1, min(mr, m))  # m = 0: an empty output, any tile
        ku = 1
        if mr * nv < _IN_FLIGHT:  # too few accumulators to hide the FMA latency
            ku = min(4, -(-_IN_FLIGHT // (mr * nv)))
            while ku > 1 and ku * mr * nv + nv + 1 > regs:
                ku -= 1
        return MicroKernel(self.r.acc_dtype, mr, nv, lanes, ku)

    # ------------------------------------------------------------ the nest

    def build(self):
        p = self.plan()
        if p is None:
            return None
        low, sched = self.low, self.sched
        uk = self.tile_shape(p)
        mr, nr = uk.mr, uk.nr
        i, j = p.i, p.j
        m_ext, n_ext = self.ext[i], self.ext[j]
        m, n = _static(m_ext), _static(n_ext)
        simp = low.simplifier()
        no_ext = E.IntImm(-(-n // nr)) if n is not None else simp(E.truncdiv(n_ext + (nr - 1), nr))
        mo_ext = E.IntImm(-(-m // mr)) if m is not None else simp(E.truncdiv(m_ext + (mr - 1), mr))
        self.m_ragged = m is None or m % mr != 0
        self.n_ragged = n is None or n % nr != 0
        # one tile along an axis: its index is 0, not a loop
        jo = E.IntImm(0) if _static(no_ext) == 1 else low.fresh("jo")
        io = E.IntImm(0) if _static(mo_ext) == 1 else low.fresh("io")
        low.ranges.update({x: (0, None if c is None else -(-c // t) - 1)
                           for x, c, t in ((jo, n, nr), (io, m, mr)) if isinstance(x, E.Var)})
        self.p, self.uk, self.jo, self.io = p, uk, jo, io
        self.rows_now = None  # the row count of the tile being built, when fixed
        self.call_strides: dict = {}
        self.no_ext, self.mo_ext, self.m_ext, self.n_ext = no_ext, mo_ext, m_ext, n_ext

        outer = [(v, e) for v, e in self.axes if v is not i and v is not j]
        batch = [(v, e) for v, e in outer if v in free_vars(p.v)]  # V differs per batch
        kstatic = all(_static(e) is not None for e in self.rext)
        per_panel = p.packed and kstatic and (bool(batch) or (n is not None and -(-n // nr)
                                                               >= _COLUMNS_PER_TILE_PACKING))
        work = self.work(outer)
        cond = None if _static(work) is not None else E.GE(work, E.IntImm(
            sched.parallel_min_work))
        parallel = sched.parallel and (cond is not None or _static(work)
                                       >= sched.parallel_min_work)
        if per_panel:
            nest = self.per_panel_nest(outer, batch, parallel, cond)
        else:
            nest = self.blocked_nest(outer, batch, parallel, cond)
        if p.packed and m is None:
            return IfThenElse(E.GE(m_ext, E.IntImm(sched.tile_min_m)), nest)
        return nest

    def kprod(self) -> int | None:
        """The reduction's length, when static."""
        out = 1
        for e in self.rext:
            if _static(e) is None:
                return None
            out *= _static(e)
        return out

    def work(self, outer) -> E.Expr:
        w: E.Expr = self.m_ext * self.n_ext
        for e in [*self.rext, *(e for _, e in outer)]:
            w = w * e
        return self.low.simplifier()(w)

    def panel_size(self) -> E.Expr:
        size: E.Expr = E.IntImm(self.uk.nr)
        for e in self.rext:
            size = size * e
        return self.low.simplifier()(size)

    def pack(self, vp: Buffer, base: E.Expr, loops_before: list, n_par: int, cond):
        """``vp[base + kflat * nr + jj] = V(j = jo * nr + jj, r...)``, zero past ``n``.

        When ``V`` runs along its innermost reduce axis with rows that alias in the cache
        (a ``[N, K]`` weight, K a multiple of 512 floats), the copy reads rows: ``jj``
        outside that axis, which is cut in chunks of at most ``_PACK_CHUNK`` so that the
        chunk's panel lines stay in L1 while every ``jj`` writes its column of them.
        Otherwise ``jj`` is the inner (vectorised, gathering) loop."""
        low, nr, simp = self.low, self.uk.nr, self.low.simplifier()
        jj = low.fresh("jj")
        low.ranges[jj] = (0, nr - 1)
        jpos = self.jo * nr + jj
        sub = {self.p.j: jpos}
        rloops = list(zip(self.rvars, self.rext))
        rows = self.reads_rows()
        if rows:
            (kv, kext), chunk = rloops[-1], rows
            kb, kk = low.fresh("kb"), low.fresh("kk")
            low.ranges.update({kb: (0, _static(kext) // chunk - 1), kk: (0, chunk - 1)})
            sub[kv] = kb * chunk + kk
            if chunk == _static(kext):  # one chunk
                kb, sub[kv] = E.IntImm(0), kk
        value = E.cast(self.r.acc_dtype, substitute(self.p.v, sub))
        if self.n_ragged:
            value = E.select(jpos < self.n_ext, value, E.const(0, self.r.acc_dtype))
        kflat = substitute(ravel(self.rvars, self.rext), sub)
        store = BufferStore(vp, simp(base + kflat * nr + jj), simp(value))
        if rows:
            loops = (loops_before + rloops[:-1] + [(kb, E.IntImm(_static(kext) // chunk)),
                                                    (jj, E.IntImm(nr)), (kk, E.IntImm(chunk))])
        else:
            loops = loops_before + rloops + [(jj, E.IntImm(nr))]
        return self.wrap(loops, store, n_par, cond, True)

    def reads_rows(self) -> int:
        """The chunk of the innermost reduce axis a row-reading copy uses (0: ``V`` is not
        contiguous along it, or its extent has no divisor of at least one vector)."""
        if not self.rvars or _static(self.rext[-1]) is None:
            return 0
        st = self.strides(_strip(self.p.v).offset, [self.rvars[-1], self.p.j])
        if st is None or _static(st[self.rvars[-1]]) != 1:
            return 0
        jstride = _static(st[self.p.j])
        if jstride is None or (jstride * _itemsize(_strip(self.p.v).dtype)) % _ALIASING:
            return 0  # a gathering copy is faster unless rows alias in the cache sets
        k = _static(self.rext[-1])
        return next((c for c in range(min(k, _PACK_CHUNK), self.lanes - 1, -1) if k % c == 0),
                    0)

    def call(self, ctile: Pointer, first, b: Pointer, kpass=None):
        """The micro-kernel call for tile ``(io, jo)``. ``first``: when it starts from zero
        (a bool expression; None: always). ``b``'s offset still holds the reduce variables
        (zero at the call, or a pass's start). Reduce axes beyond ``LEVELS`` loop around
        the call, which then accumulates. ``kpass``: ``(start, extent, last)`` of the
        outermost reduce axis in a split reduction."""
        p, simp = self.p, self.low.simplifier()
        if b not in self.call_strides:  # the same for every call of a stage's tiles
            self.call_strides[b] = (self.strides(p.s.offset, [p.i, *self.rvars]),
                                    self.strides(b.offset, self.rvars))
        a_st, b_st = self.call_strides[b]
        levels = list(zip(self.rvars, self.rext))
        inner, around = levels[-LEVELS:], levels[:-LEVELS]
        sub = {p.i: self.io * self.uk.mr, **{v: E.IntImm(0) for v, _ in inner}}
        if kpass is not None:
            sub[self.rvars[0]] = kpass[0]
            inner = [(self.rvars[0], kpass[1])] + inner[1:]
        conds = ([] if first is None else [first]) + [E.equal(v, E.IntImm(0)) for v, _ in around]
        first = simp(E.cast("int64", E.logical_and(*conds))) if conds else E.IntImm(1)
        args = [ctile, first, self.rows(), Pointer(p.s.buffer, simp(substitute(p.s.offset, sub))),
                a_st[p.i], Pointer(b.buffer, simp(substitute(b.offset, sub)))]
        for _ in range(LEVELS - len(inner)):
            args += [E.IntImm(1), E.IntImm(0), E.IntImm(0)]
        for v, e in inner:
            args += [simp(e), a_st[v], b_st[v]]
        if around:
            return self.wrap(around, CallMicroKernel(self.uk, tuple(args)), 0, None, False)
        return CallMicroKernel(self.uk, tuple(args))

    def rows(self) -> E.Expr:
        mr = self.uk.mr
        if self.rows_now is not None:
            return self.rows_now
        if not self.m_ragged:
            return E.IntImm(mr)
        return self.low.simplifier()(E.Min(E.IntImm(mr), self.m_ext - self.io * mr))

    def cols(self) -> E.Expr:
        nr = self.uk.nr
        if not self.n_ragged:
            return E.IntImm(nr)
        return self.low.simplifier()(E.Min(E.IntImm(nr), self.n_ext - self.jo * nr))

    def epilogue(self, ctile: Buffer, tile_base: E.Expr):
        """``(ii, row)``: ``out[i, j] = body(C[ii][jj])`` over the valid columns of row
        ``ii`` of the tile; the caller loops ``ii`` over the valid rows."""
        low, p, simp, nr = self.low, self.p, self.low.simplifier(), self.uk.nr
        ii, jj = low.fresh("ii"), low.fresh("jj")
        low.ranges.update({ii: (0, self.uk.mr - 1), jj: (0, nr - 1)})
        here = BufferLoad(ctile, simp(tile_base + ii * nr + jj))
        mapping = {p.i: self.io * self.uk.mr + ii, p.j: self.jo * nr + jj}
        value = rewrite(self.body, lambda x: E.cast(self.r.dtype, here) if x == self.r else x)
        store = BufferStore(low.stage.buffer, simp(substitute(self.offset, mapping)),
                            simp(substitute(value, mapping)))
        return ii, self.wrap([(jj, self.cols())], store, 0, None, True)

    def packed_b(self, vp: Buffer, panel: E.Expr) -> Pointer:
        """A panel ``[r...][nr]`` of ``vp`` at ``panel``, reduce variables in the offset."""
        off: E.Expr = panel
        step: E.Expr = E.IntImm(self.uk.nr)
        for v, e in zip(reversed(self.rvars), reversed(self.rext)):
            off = off + v * step
            step = step * e
        return Pointer(vp, self.low.simplifier()(off))

    def direct_b(self) -> Pointer:
        """``V`` read in place at column tile ``jo``, reduce variables in the offset."""
        load = _strip(self.p.v)
        off = substitute(load.offset, {self.p.j: self.jo * self.uk.nr})
        return Pointer(load.buffer, self.low.simplifier()(off))

    def tile(self, b: Pointer, ctile: Buffer | None = None, base=None, first=None,
             kpass=None):
        """One tile: the call into ``ctile`` at ``base`` (a fresh local tile by default),
        then the epilogue (unless ``kpass`` says a split reduction is not done). When the
        last row tile is short, full tiles call the micro-kernel with a constant row count
        (the compiler then folds every row's address into one pointer) and the last one
        with its own; both share the epilogue's row."""
        uk = self.uk
        own = ctile is None
        if own:
            ctile = Buffer(self.low.fresh("acc").name, self.r.acc_dtype, (uk.mr * uk.nr,),
                           "local")
            base = E.IntImm(0)
        ii, row = self.epilogue(ctile, base)

        def part(rows):
            self.rows_now = rows
            call = self.call(Pointer(ctile, base), first, b, kpass)
            self.rows_now = None
            epi = For(ii, rows, row)
            return seq(call, epi if kpass is None else IfThenElse(kpass[2], epi))

        mr, m, mo = uk.mr, _static(self.m_ext), _static(self.mo_ext)
        if not self.m_ragged:
            body = part(E.IntImm(mr))
        else:
            left = self.m_ext - self.io * mr
            last = E.IntImm(m % mr) if m is not None else self.low.simplifier()(
                E.Min(E.IntImm(mr), left))
            body = part(last)
            if mo != 1:
                cond = (E.LT(self.io, E.IntImm(mo - 1)) if m is not None
                        else E.GE(left, E.IntImm(mr)))
                body = IfThenElse(self.low.simplifier()(cond), part(E.IntImm(mr)), body)
        return Allocate(ctile, body) if own else body

    def per_panel_nest(self, outer, batch, parallel, cond):
        """Parallel over (batch, column tile): pack the panel into this thread's scratch,
        then every row tile uses it while it is in cache."""
        low = self.low
        vp = Buffer(low.fresh("packed").name, self.r.acc_dtype,
                    (_static(self.panel_size()),), "scratch")
        pack = self.pack(vp, E.IntImm(0), [], 0, None)
        rest = [x for x in outer if x not in batch]
        rows = self.wrap(rest + [(self.io, self.mo_ext)], self.tile(self.packed_b(vp, E.IntImm(0))),
                        0, None, False)
        cols = batch + [(self.jo, self.no_ext)]
        return self.parallel_loops(cols, Allocate(vp, seq(pack, rows)), parallel, cond)

    def wrap(self, loops, stmt, n_parallel, cond, inner_simd):
        """``low.wrap`` without the loops whose index is the constant 0 (one tile)."""
        loops = [(v, e) for v, e in loops if isinstance(v, E.Var)]
        if n_parallel:
            n_parallel = min(n_parallel, len(loops))
        return self.low.wrap(loops, stmt, n_parallel, cond, inner_simd)

    def parallel_loops(self, loops, body, parallel, cond):
        loops = [(v, e) for v, e in loops if isinstance(v, E.Var)]
        n_par = len(loops) if parallel else 0
        nest = self.low.wrap(loops, body, n_par, cond, False)
        if n_par > 1:
            nest = For(nest.var, nest.extent, nest.body, PARALLEL,
                       dict(nest.annotations, collapse=n_par))
        return nest

    def blocked_nest(self, outer, batch, parallel, cond):
        """Direct, or packed up front: parallel over every tile, visited block by block;
        a long static reduction in passes of ``kc`` (see the module docstring)."""
        low, uk, p, simp = self.low, self.uk, self.p, self.low.simplifier()
        item = _itemsize(self.r.acc_dtype)
        mach = self.sched.machine
        kprod = self.kprod()
        kc = self.sched.kc or max(64, mach.l2_bytes // 2 // (uk.nr * item))
        kstep = min(kprod, kc) if kprod else kc
        prep = vp = None
        if p.packed:
            bflat = ravel([v for v, _ in batch], [e for _, e in batch]) if batch else E.IntImm(0)
            size: E.Expr = self.panel_size() * self.no_ext
            for _, e in batch:
                size = size * e
            vp = Buffer(low.fresh("packed").name, self.r.acc_dtype, (simp(size),), "temp")
            panel = simp((bflat * self.no_ext + self.jo) * self.panel_size())
            work = _static(simp(size))
            par = 1 if self.sched.parallel and (work is None or work >= self.sched
                                                .parallel_min_work) else 0
            prep = self.pack(vp, panel, batch + [(self.jo, self.no_ext)], par, None)
            b = self.packed_b(vp, panel)
        else:
            b = self.direct_b()
        # tiles per block: an mc x kc block of S in half the L2, kc x nc of B in half the L3
        mc = self.sched.mc or mach.l2_bytes // 2 // (kstep * item)
        nc = self.sched.nc or mach.l3_bytes // 2 // (kstep * item)
        tj, ti = max(1, nc // uk.nr), max(1, mc // uk.mr)
        no, mo = _static(self.no_ext), _static(self.mo_ext)
        # blocks of equal size: 10 row tiles in blocks of 9 would leave a block of one,
        # and the collapsed parallel loop would hand one thread 72 tiles, the other 8
        # (BERT's FFN output dense ran 1.9x slower)
        if no is not None and no > tj:
            tj = -(-no // -(-no // tj))
        if mo is not None and mo > ti:
            ti = -(-mo // -(-mo // ti))
        loops, cols, rows = list(outer), (self.jo, self.no_ext), (self.io, self.mo_ext)
        bind = {}
        if no is not None and no > tj:  # column blocks
            jc, jr = low.fresh("jc"), low.fresh("jr")
            low.ranges.update({jc: (0, -(-no // tj) - 1), jr: (0, tj - 1)})
            loops.append((jc, E.IntImm(-(-no // tj))))
            cols, bind[self.jo] = (jr, E.IntImm(tj)), (jc * tj + jr, no % tj != 0, no)
        if mo is not None and mo > ti:  # row blocks
            ic, ir = low.fresh("ic"), low.fresh("ir")
            low.ranges.update({ic: (0, -(-mo // ti) - 1), ir: (0, ti - 1)})
            loops.append((ic, E.IntImm(-(-mo // ti))))
            rows, bind[self.io] = (ir, E.IntImm(ti)), (ic * ti + ir, mo % ti != 0, mo)
        split = (kprod is not None and kprod > kc and len(self.rvars) <= LEVELS
                 and _static(cols[1]) is not None and _static(rows[1]) is not None)
        if not split:
            nest = self.parallel_loops(loops + [cols, rows], self.bound(self.tile(b), bind),
                                       parallel, cond)
        else:
            nest = self.split_nest(loops, cols, rows, bind, b, kc, kprod, parallel, cond)
        return nest if prep is None else Allocate(vp, seq(prep, nest))

    def bound(self, stmt, bind: dict):
        """``jo``/``io`` as the block's tile (``LetStmt``), skipping tiles past the end."""
        conds = []
        for var, (value, ragged, count) in bind.items():
            stmt = LetStmt(var, self.low.simplifier()(value), stmt)
            if ragged:
                conds.append(value < count)
        return IfThenElse(self.low.simplifier()(E.logical_and(*conds)), stmt) if conds else stmt

    def split_nest(self, loops, cols, rows, bind, b, kc, kprod, parallel, cond):
        """Passes of ``chunk`` iterations of the outermost reduce axis: each block's tiles
        accumulate in this thread's scratch, the epilogue after the last pass."""
        low, uk = self.low, self.uk
        e0 = _static(self.rext[0])
        chunk = max(1, kc // (kprod // e0))
        passes = -(-e0 // chunk)
        pc = low.fresh("pc")
        low.ranges[pc] = (0, passes - 1)
        tj, ti = _static(cols[1]), _static(rows[1])
        shared = not loops  # one block: threads share the passes' tiles, one pass at a time
        cblock = Buffer(low.fresh("cblock").name, self.r.acc_dtype, (tj * ti * uk.mr * uk.nr,),
                        "temp" if shared else "scratch")
        base = (cols[0] * ti + rows[0]) * (uk.mr * uk.nr)
        start = pc * chunk
        kpass = (start, E.Min(E.IntImm(chunk), E.IntImm(e0) - start),
                 E.equal(pc, E.IntImm(passes - 1)))
        tile = self.bound(self.tile(b, cblock, low.simplifier()(base),
                                    E.equal(pc, E.IntImm(0)), kpass), bind)
        if shared:
            inner = self.parallel_loops([cols, rows], tile, parallel, cond)
            return Allocate(cblock, For(pc, E.IntImm(passes), inner))
        inner = self.wrap([(pc, E.IntImm(passes)), cols, rows], tile, 0, None, False)
        return self.parallel_loops(loops, Allocate(cblock, inner), parallel, cond)

def lower_tiled(low, axes, offset, body, r: E.Reduce):
    """The tiled nest for the stage ``low`` is lowering, or None if it does not qualify."""
    if not low.sched.tile_n:
        return None
    return _Tiler(low, axes, offset, body, r).build()
