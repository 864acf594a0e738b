"""Schedules: how a stage's loops are arranged, as a plain dataclass of knobs.

Lowering asks ``default_schedule(tag)`` for each stage (the tag of the compute that
produces it: ``elemwise``, ``broadcast``, ``injective``, ``reduce``, ``dense``,
``conv``, ``pool``, ``softmax``, ``norm``) unless the caller passes its own; an
auto-tuner searches the same fields.
"""

from __future__ import annotations

import dataclasses


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
      dense, matmul, convolutions), rows by columns; ``tile_n == 0`` turns tiling off.
      ``tile_min_m``: fewer rows than this keep the untiled nest (a batch-1 dense reads
      its weights once; packing them would double the traffic). ``tile_form``: ``auto``,
      ``direct`` or ``packed`` (see ``tir/matmul.py``).
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
    tile_m: int = 4
    tile_n: int = 0
    tile_min_m: int = 4
    tile_form: str = "auto"

    def __post_init__(self):
        if self.tile_form not in ("auto", "direct", "packed"):
            raise ValueError(f"tile_form must be auto, direct or packed, found "
                             f"{self.tile_form!r}")
        if self.reduce_inner not in ("auto", "reduce", "spatial"):
            raise ValueError(f"reduce_inner must be auto, reduce or spatial, found "
                             f"{self.reduce_inner!r}")

    def replace(self, **changes) -> Schedule:
        return dataclasses.replace(self, **changes)


_DEFAULTS = {
    # elementwise work is memory bound: a thread team pays off only for large tensors
    "elemwise": Schedule(),
    "broadcast": Schedule(),
    "injective": Schedule(),
    # reductions and products do more work per output element
    "reduce": Schedule(parallel_min_work=1 << 15),
    "dense": Schedule(parallel_min_work=1 << 14, tile_m=8, tile_n=16),
    "conv": Schedule(parallel_min_work=1 << 14, tile_m=8, tile_n=16),
    "pool": Schedule(parallel_min_work=1 << 15),
    "softmax": Schedule(parallel_min_work=1 << 15),
    "norm": Schedule(parallel_min_work=1 << 15),
}


def default_schedule(tag: str) -> Schedule:
    """The default knobs for a stage produced by a compute tagged ``tag``."""
    return _DEFAULTS.get(tag, _DEFAULTS["injective"])
