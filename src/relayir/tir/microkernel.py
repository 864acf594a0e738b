"""Register-tile micro-kernels: what a tiled matmul-like stage calls, as loop IR.

A ``MicroKernel`` names one C function (``codegen/microkernels.py`` writes its text,
``render_module`` emits each one a module uses, once) computing an ``mr × nr`` tile::

    C[i][j] (+)= sum over k0 < n0, k1 < n1, k2 < n2 of
                 A[i*rsa + k0*sa0 + k1*sa1 + k2*sa2] * B[k0*sb0 + k1*sb1 + k2*sb2 + j]

for ``i < mr``, ``j < nr`` (``nr = nv * lanes``, ``nv`` vector registers per row). ``C`` is
a row-major ``mr × nr`` tile (a small buffer of the caller's, in L1); ``B`` is contiguous
along ``j`` (a packed panel, or a weight already in that layout); ``A`` is read one
element at a time and broadcast. The C arguments, in order::

    c, first, rows, a, rsa, b, n0, sa0, sb0, n1, sa1, sb1, n2, sa2, sb2

``first`` != 0 starts from zero instead of ``C``'s contents (a reduction split in passes
accumulates); rows ``i >= rows`` (a ragged last tile) read row ``rows - 1`` again, so
``A`` is never read out of bounds, and their results are not stored. The function is
``static inline`` and always inlined: the strides are mostly constants at the call, and
the compiler folds them into the addressing.
"""

from __future__ import annotations

import dataclasses

from ..te import expr as E
from .stmt import Allocate, Buffer, For, IfThenElse, LetStmt, SeqStmt, Stmt

# dtype -> C type and name suffix of the micro-kernels that exist
MICROKERNEL_DTYPES = {"float32": ("float", "f32"), "float64": ("double", "f64")}
LEVELS = 3  # reduce loops inside one call


@dataclasses.dataclass(frozen=True)
class MicroKernel:
    """``mr`` rows × ``nv`` vectors of ``lanes`` elements of ``dtype``; ``kunroll`` > 1
    keeps that many sets of accumulators over alternate reduction steps (a tile with few
    accumulators would otherwise wait on the latency of each fused multiply-add)."""

    dtype: str
    mr: int
    nv: int
    lanes: int
    kunroll: int = 1

    @property
    def nr(self) -> int:
        return self.nv * self.lanes

    @property
    def name(self) -> str:
        suffix = MICROKERNEL_DTYPES[self.dtype][1]
        tail = f"_k{self.kunroll}" if self.kunroll > 1 else ""
        return f"rl_gemm_{suffix}_{self.mr}x{self.nr}{tail}"


@dataclasses.dataclass(frozen=True, eq=False)
class Pointer:
    """``&buffer[offset]``: a micro-kernel's array argument."""

    buffer: Buffer
    offset: E.Expr


@dataclasses.dataclass(frozen=True, eq=False)
class CallMicroKernel(Stmt):
    """``kernel(args...)``: ``args`` are ``Pointer``s and ``int64`` index expressions in
    the order the module docstring gives."""

    kernel: MicroKernel
    args: tuple


def microkernels_used(stmt: Stmt) -> list:
    """The micro-kernels ``stmt`` calls, each once, in first-call order."""
    out, seen, stack = [], set(), [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, CallMicroKernel):
            if s.kernel not in seen:
                seen.add(s.kernel)
                out.append(s.kernel)
        elif isinstance(s, SeqStmt):
            stack.extend(reversed(s.stmts))
        elif isinstance(s, IfThenElse):
            stack.extend(x for x in (s.else_case, s.then_case) if x is not None)
        elif isinstance(s, (For, Allocate, LetStmt)) or hasattr(s, "body"):
            stack.append(s.body)
    return out


__all__ = ["LEVELS", "MICROKERNEL_DTYPES", "CallMicroKernel", "MicroKernel", "Pointer",
           "microkernels_used"]
