"""Schedules: how a stage's loops are arranged, as a plain dataclass of knobs.

Lowering asks ``default_schedule(tag)`` for each stage (the tag of the compute that
produces it: ``elemwise``, ``broadcast``, ``injective``, ``reduce``, ``dense``,
``conv``, ``pool``, ``softmax``, ``norm``) unless the caller passes its own; an
auto-tuner searches the same fields.
"""

from __future__ import annotations

import dataclasses
import functools

from .machine import Machine, host_machine


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Knobs of one stage's loop nest.

    - ``parallel``: run the outermost spatial loop(s) with ``#pragma omp parallel for``
      when the stage's work (iterations, weighted by the cost of transcendental calls)
      reaches ``parallel_min_work``; below that a thread team costs more than it saves.
      Symbolic extents decide at run time (an OpenMP ``if`` clause).
    - ``parallel_collapse``: collapse up to this many outer loops when the outermost is
      shorter than ``collapse_below`` (so two cores are not left with one iteration).
    - ``vectorize``: mark the innermost loop ``#pragma omp simd`` (with a ``reduction``
      clause for a scalar accumulator); ``simdlen`` asks for a vector length (0: the
      compiler's choice).
    - ``unroll``: ``#pragma GCC unroll n`` on the innermost loop (0: the compiler's choice).
    - ``fuse_axes``: merge adjacent loops whose every access stays affine (an elementwise
      kernel becomes one flat loop).
    - ``reduce_inner``: where a reduction's innermost loop runs: ``auto`` scores the
      memory accesses, ``reduce`` keeps a scalar accumulator with a reduce axis innermost,
      ``spatial`` keeps a row of accumulators with the last output axis innermost.
    - ``block_limit``: largest row of accumulators (elements) kept on the stack.
    - ``loop_order``: a permutation of the output axes for an elementwise stage (applied
      before fusion), or ``None``.
    - ``tile_m``, ``tile_n``: register tile of a matmul-like stage (``tir/matmul.py``:
      dense, matmul, batch_matmul, convolutions), rows by columns, computed by a C
      micro-kernel. ``tile_n`` is the columns (rounded up to whole vector registers;
      ``0`` turns tiling off); a stage with fewer rows than a tile holds widens its
      columns until the accumulators fill the registers. ``tile_m == 0`` takes as many
      rows as ``machine.vector_registers`` leave room for (accumulators + one register
      per column vector + one broadcast), choosing among the largest counts the one that
      divides the row extent best. ``tile_min_m``: a stage with fewer rows that would
      pack its weight at run time keeps the untiled nest (a batch-1 dense reads its
      weight once; packing would double the traffic). ``tile_form``: ``auto``,
      ``direct`` or ``packed`` (see ``tir/matmul.py``).
    - ``kc``, ``mc``, ``nc``: BLIS cache blocking of the tiled nest, in elements of the
      reduction, rows and columns (0: derived from ``machine``'s caches for the stage's
      shape: a ``kc × nr`` weight panel in half the L2, an ``mc × kc`` block of the
      left operand in half the L2, a ``kc × nc`` block of panels in half the L3). Tiles
      are visited block by block (``nc`` columns, then ``mc`` rows, then the tiles in
      them); a reduction longer than ``kc`` runs in passes that accumulate an ``mc × nc``
      block in per-thread scratch, the epilogue applied after the last pass.
    - ``machine``: the CPU the tiles are sized for (``tir/machine.py``: vector lanes,
      vector registers, cache sizes); by default this host's.
    """

    parallel: bool = True
    parallel_min_work: int = 1 << 16
    parallel_collapse: int = 2
    collapse_below: int = 16
    vectorize: bool = True
    simdlen: int = 0
    unroll: int = 0
    fuse_axes: bool = True
    reduce_inner: str = "auto"
    block_limit: int = 8192
    loop_order: tuple | None = None
    tile_m: int = 0
    tile_n: int = 0
    tile_min_m: int = 4
    tile_form: str = "auto"
    kc: int = 0
    mc: int = 0
    nc: int = 0
    machine: Machine = dataclasses.field(default_factory=host_machine)

    def __post_init__(self):
        if self.tile_form not in ("auto", "direct", "packed"):
            raise ValueError(f"tile_form must be auto, direct or packed, found "
                             f"{self.tile_form!r}")
        if self.reduce_inner not in ("auto", "reduce", "spatial"):
            raise ValueError(f"reduce_inner must be auto, reduce or spatial, found "
                             f"{self.reduce_inner!r}")
        for knob in ("tile_m", "tile_n", "tile_min_m", "kc", "mc", "nc"):
            if getattr(self, knob) < 0:
                raise ValueError(f"{knob} must be >= 0, found {getattr(self, knob)}")

    def replace(self, **changes) -> Schedule:
        return dataclasses.replace(self, **changes)


@functools.lru_cache(maxsize=8)
def _defaults(machine: Machine) -> dict:
    m = {"machine": machine}
    tile = {"tile_n": 2 * machine.lanes}  # two vector registers of columns
    return {
        # elementwise work is memory bound: a thread team pays off only for large tensors
        "elemwise": Schedule(**m),
        "broadcast": Schedule(**m),
        "injective": Schedule(**m),
        # reductions and products do more work per output element
        "reduce": Schedule(parallel_min_work=1 << 15, **m),
        "dense": Schedule(parallel_min_work=1 << 14, **tile, **m),
        "conv": Schedule(parallel_min_work=1 << 14, **tile, **m),
        "pool": Schedule(parallel_min_work=1 << 15, **m),
        "softmax": Schedule(parallel_min_work=1 << 15, **m),
        "norm": Schedule(parallel_min_work=1 << 15, **m),
    }


def default_schedule(tag: str, machine: Machine | None = None) -> Schedule:
    """The default knobs for a stage produced by a compute tagged ``tag``, for
    ``machine`` (this host's by default)."""
    table = _defaults(machine or host_machine())
    return table.get(tag, table["injective"])
