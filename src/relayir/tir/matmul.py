"""A register-tiled loop nest for matmul-like stages: dense, matmul, convolutions.

A stage qualifies when its one reduction is ``sum(S * V)`` over reduce axes ``R``, with
an output axis ``j`` along which ``V`` varies and ``S`` does not, and an output axis
``i`` along which ``S`` varies and ``V`` does not. The tile is ``mi`` values of ``i`` by
``nj`` values of ``j``::

    for (other output axes, i-tile, j-tile)        (parallel, collapsed)
      acc[mi][nj] = 0                               (registers)
      for r in R: for ii < mi: s = S(i, r); acc[ii][:] += s * V(j.., r)    (simd over jj)
      out[i, j] = epilogue(acc[ii][jj])             (bias, relu, ... fused)

Two forms:

- *direct*, when ``V`` is contiguous along ``j`` (a stride-1 convolution's input row,
  NHWC weights, ``matmul``'s right operand): ``V`` is read in place; ``nj`` divides the
  extent of ``j`` (or is all of it), so no tile runs past the end of a row.
- *packed*, when ``V`` depends only on ``j`` and ``R`` (a weight): it is first copied
  into ``Vp[j-tile][r][nj]`` (zero padded), so the inner loop reads it contiguously
  (``dense``, strided convolutions). A stage with fewer than ``tile_min_m`` rows (a
  batch-1 dense reads its weight once; packing would double the traffic) is left alone.

``Schedule.tile_m`` / ``tile_n`` bound ``mi`` / ``nj``.

The row extent ``m`` may be symbolic (the VM's dynamic shapes: BERT's sequence length):
the tile height is then chosen for a large ``m``, every tile clamps its row reads and
guards its stores, and the parallel loop runs in parallel when the run-time work is
large enough. A packed nest then comes as ``if (m >= tile_min_m) nest``
whose else branch the caller fills with an untiled nest, rows innermost (so that its
parallel loop is not the row loop, one iteration at ``m = 1``). The reduction and ``j``
extents stay static.
"""

from __future__ import annotations

from ..te import expr as E
from ..te.computes.common import ravel
from ..te.visit import free_vars, rewrite, substitute
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

_VECTOR = 8  # floats per vector register the tiles are sized for (256-bit)
_ACC_REGISTERS = 24  # accumulator registers a tile may use
_COLUMNS_PER_TILE_PACKING = 8  # tile columns needed to pack per column inside the loop


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


def _stride(low, load_expr, var) -> int | None:
    lin = low.simplifier().linear(_strip(load_expr).offset)
    if any(var in free_vars(a) for a in lin.terms if a is not var):
        return None
    return lin.terms.get(var, 0)


def _direct_width(n: int, limit: int) -> int | None:
    """A tile width that divides ``n`` and is a multiple of the vector width."""
    for w in range(limit - limit % _VECTOR, _VECTOR - 1, -_VECTOR):
        if n % w == 0:
            return w
    return None


class _Plan:
    def __init__(self, i, j, s, v, nj, packed):
        self.i, self.j, self.s, self.v, self.nj, self.packed = i, j, s, v, nj, packed


def _plan(low, axes, r: E.Reduce, ops) -> _Plan | None:
    spatial = [v for v, _ in axes]
    ext = {v: _static(e) for v, e in axes}
    rvars = {a.var for a in r.axes}
    sched = low.sched
    for s, v in (ops, ops[::-1]) if sched.tile_form != "direct" else ():
        vs, vv = free_vars(s), free_vars(v)
        for j in reversed(spatial):  # V may also vary with outer axes (a batch): packed
            if j in vs or j not in vv or ext[j] is None or ext[j] < _VECTOR:  # per column
                continue
            iis = [x for x in spatial if x in vs and x not in vv]
            if not iis or (ext[iis[-1]] or sched.tile_min_m) < sched.tile_min_m or not (
                    vv <= set(spatial) | rvars):
                continue
            n = ext[j]
            return _Plan(iis[-1], j, s, v, min(sched.tile_n, -(-n // _VECTOR) * _VECTOR), True)
    for s, v in (ops, ops[::-1]) if sched.tile_form != "packed" else ():  # no copy of V
        vs, vv = free_vars(s), free_vars(v)
        for j in reversed(spatial):
            if j in vs or j not in vv or ext[j] is None or _stride(low, v, j) != 1:
                continue
            iis = [x for x in spatial if x in vs and x not in vv]
            nj = _direct_width(ext[j], sched.tile_n)
            if iis and nj is not None:
                return _Plan(iis[-1], j, s, v, nj, False)
    return None


def lower_tiled(low, axes, offset, body, r: E.Reduce):
    """The tiled nest for the stage ``low`` is lowering, or None if it does not qualify."""
    sched = low.sched
    ops = _operands(r)
    if not sched.tile_n or not ops:
        return None
    rext = [_static(ax.extent) for ax in r.axes]
    if None in rext:
        return None
    plan = _plan(low, axes, r, ops)
    if plan is None:
        return None
    i, j, nj = plan.i, plan.j, plan.nj
    ext = dict(axes)
    m, n = _static(ext[i]), _static(ext[j])  # m is None when symbolic
    vregs = -(-nj // _VECTOR)
    # narrow tiles get more rows: the accumulators fill the registers either way
    mi = max(1, min(m or _ACC_REGISTERS, _ACC_REGISTERS // vregs,
                    max(sched.tile_m, _ACC_REGISTERS // vregs // 2)))
    no = -(-n // nj)
    m_ext = E.IntImm(m) if m is not None else ext[i]
    mo_ext = E.IntImm(-(-m // mi)) if m is not None else E.truncdiv(ext[i] + (mi - 1), mi)
    ragged = m is None or m % mi != 0  # the last row tile runs past m
    kr = 1
    for d in rext:
        kr *= d
    acc_t = r.acc_dtype
    kflat = ravel([ax.var for ax in r.axes], rext)
    rloops = [(ax.var, ax.extent) for ax in r.axes]
    jo, jj, io, ii = (low.fresh(nm) for nm in ("jo", "jj", "io", "ii"))
    low.ranges.update({jo: (0, no - 1), jj: (0, nj - 1), ii: (0, mi - 1),
                       io: (0, None if m is None else -(-m // mi) - 1)})
    simp = low.simplifier()
    jpos, ipos = jo * nj + jj, io * mi + ii

    # packed: Vp[(jo * kr + k) * nj + jj] for every tile column up front, or, when there
    # are enough columns to share out, each thread packs its own column into scratch
    # just before using it (the copy is then read back from cache, not memory)
    outer = [(v, e) for v, e in axes if v is not i and v is not j]
    batch = [(v, e) for v, e in outer if v in free_vars(plan.v)]  # V differs per batch
    per_tile = plan.packed and (bool(batch) or no >= _COLUMNS_PER_TILE_PACKING)
    pack = vp = None
    if plan.packed:
        col = E.IntImm(0) if per_tile else jo
        size = kr * nj if per_tile else no * kr * nj
        vp = Buffer(low.fresh("packed").name, acc_t, (size,), "scratch" if per_tile else "temp")
        value = E.cast(acc_t, substitute(plan.v, {j: jpos}))
        if n % nj:
            value = E.select(jpos < n, value, E.const(0, acc_t))
        store = BufferStore(vp, simp((col * kr + kflat) * nj + jj), simp(value))
        # writes run along jj (contiguous); the reads gather nj rows of V at once
        if per_tile:
            pack = low.wrap(rloops + [(jj, E.IntImm(nj))], store, 0, None, True)
        else:
            par = 1 if sched.parallel and no * nj * kr >= sched.parallel_min_work else 0
            pack = low.wrap([(jo, E.IntImm(no))] + rloops + [(jj, E.IntImm(nj))], store, par,
                            None, True)
        vector = BufferLoad(vp, simp((col * kr + kflat) * nj + jj))
    else:
        vector = simp(E.cast(acc_t, substitute(plan.v, {j: jpos})))

    acc = Buffer(low.fresh("acc").name, acc_t, (mi * nj,), "local")
    t = low.fresh("t")
    init = low.wrap([(t, E.IntImm(mi * nj))], BufferStore(acc, t, E.const(0, acc_t)), 0, None,
                    True)
    row = E.Min(ipos, m_ext - 1) if ragged else ipos
    sv = low.fresh("s", acc_t)
    here = BufferLoad(acc, ii * nj + jj)
    update = BufferStore(acc, simp(ii * nj + jj), here + sv * vector)
    inner = LetStmt(sv, simp(E.cast(acc_t, substitute(plan.s, {i: row}))),
                    low.wrap([(jj, E.IntImm(nj))], update, 0, None, True))
    unrolled = For(ii, E.IntImm(mi), inner, annotations={"unroll": mi})
    accumulate = low.wrap(rloops, unrolled, 0, None, False) if rloops else unrolled

    mapping = {i: ipos, j: jpos}
    value = rewrite(body, lambda x: E.cast(r.dtype, here) if x == r else x)
    store = BufferStore(low.stage.buffer, simp(substitute(offset, mapping)),
                        simp(substitute(value, mapping)))
    conds = ([ipos < m_ext] if ragged else []) + ([jpos < n] if n % nj else [])
    if conds:
        store = IfThenElse(simp(E.logical_and(*conds)), store)
    # (storing along ii instead when the output is NCHW would need acc transposed, which
    # keeps gcc from holding it in registers: measured slower)
    final = For(ii, E.IntImm(mi), low.wrap([(jj, E.IntImm(nj))], store, 0, None, True))
    tile = Allocate(acc, seq(init, accumulate, final))

    work = n * kr
    for _, e in outer:
        work *= _static(e) or 1
    # symbolic m: parallel when the run-time work is (the generated C tests it)
    cond = None if m is not None else E.GE(m_ext * work, E.IntImm(sched.parallel_min_work))
    parallel = sched.parallel and (m is None or m * work >= sched.parallel_min_work)
    if per_tile:  # for batch, jo (parallel): pack column jo; for other outer, io: tile
        rest = [x for x in outer if x not in batch]
        rows = low.wrap(rest + [(io, mo_ext)], tile, 0, None, False)
        cols = batch + [(jo, E.IntImm(no))]
        n_par = len(cols) if parallel else 0
        nest = low.wrap(cols, Allocate(vp, seq(pack, rows)), n_par, cond, False)
        if n_par > 1:
            ann = dict(nest.annotations, collapse=n_par)
            nest = For(nest.var, nest.extent, nest.body, PARALLEL, ann)
        return _rows_guard(nest, m, m_ext, sched)
    # packed up front: one tile column of Vp stays in cache while every row tile uses it
    loops = ([(jo, E.IntImm(no))] + outer + [(io, mo_ext)] if plan.packed
             else outer + [(io, mo_ext), (jo, E.IntImm(no))])
    n_par = len(loops) if parallel else 0
    compute = low.wrap(loops, tile, n_par, cond, False)
    if n_par > 1:
        ann = dict(compute.annotations, collapse=n_par)
        compute = For(compute.var, compute.extent, compute.body, PARALLEL, ann)
    if not plan.packed:
        return compute
    return _rows_guard(Allocate(vp, seq(pack, compute)), m, m_ext, sched)


def _rows_guard(nest, m, m_ext, sched):
    """A packed nest for a symbolic row count runs only with ``tile_min_m`` rows or more
    (packing the weight for one row doubles the traffic): ``IfThenElse`` with no else,
    which the caller fills with its untiled nest."""
    if m is not None:
        return nest
    return IfThenElse(E.GE(m_ext, E.IntImm(sched.tile_min_m)), nest)
