"""Loop IR: buffers, flat loads, statements, and the ``PrimFunc`` that holds one function.

Buffers are flat and row-major: a ``BufferLoad`` / ``BufferStore`` takes one ``int64``
offset, which lowering builds from the tensor's indices and the simplifier folds.
Statement nodes are plain frozen dataclasses (a kernel has few of them).
"""

from __future__ import annotations

import dataclasses
from typing import Any as _Any

import numpy as np

from ..te import expr as E
from ..te.visit import register_node


class Buffer:
    """A flat array: ``kind`` is ``input``, ``output``, ``temp`` (per call, in the kernel's
    workspace), ``scratch`` (per thread, in the workspace: used inside a parallel loop),
    ``const`` (``data`` embedded in the C file) or ``local`` (a small array on the stack
    of the loop body that declares it)."""

    __slots__ = ("name", "dtype", "shape", "kind", "data")

    def __init__(self, name: str, dtype: str, shape, kind: str, data: np.ndarray | None = None):
        self.name = name
        self.dtype = dtype
        self.shape = tuple(E.as_index(d) for d in shape)
        self.kind = kind
        self.data = data

    def size(self) -> E.Expr:
        static, out = 1, None
        for d in self.shape:
            v = E.const_value(d)
            if v is not None:
                static *= int(v)
            else:
                out = d if out is None else out * d
        if out is None:
            return E.IntImm(static)
        return out if static == 1 else out * static

    def offset(self, indices) -> E.Expr:
        """Row-major offset of ``indices``."""
        out: E.Expr = E.IntImm(0)
        for i, d in zip(indices, self.shape):
            out = out * d + i
        return out

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {self.dtype}, {self.kind})"


class BufferLoad(E.Expr):
    """``buffer[offset]``."""

    __slots__ = ("buffer", "offset")
    _fields = ("buffer", "offset")

    def __init__(self, buffer: Buffer, offset):
        self.buffer = buffer
        self.offset = E.as_index(offset)
        self._finish(buffer.dtype)

    def text(self) -> str:
        return f"{self.buffer.name}[{self.offset!r}]"


register_node(BufferLoad, lambda e: (e.offset,), lambda e, cs: BufferLoad(e.buffer, cs[0]))


class Stmt:
    __slots__ = ()


# Loop kinds. ``parallel`` and ``vectorized`` may combine (``parallel for simd``).
SERIAL, PARALLEL, VECTORIZED, UNROLLED = "serial", "parallel", "vectorized", "unrolled"


@dataclasses.dataclass(frozen=True, eq=False)
class For(Stmt):
    """``for (var = 0; var < extent; ++var) body``.

    ``kind`` is one of serial / parallel / vectorized / unrolled; ``annotations`` carry
    the printer's details: ``simd`` (bool), ``collapse`` (parallel loops nested below),
    ``reduction`` ((op, var) pairs for an OpenMP reduction), ``unroll`` (a factor),
    ``parallel_if`` (an expression: go parallel only when it holds at run time),
    ``simdlen``.
    """

    var: E.Var
    extent: E.Expr
    body: Stmt
    kind: str = SERIAL
    annotations: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, eq=False)
class BufferStore(Stmt):
    buffer: Buffer
    offset: E.Expr
    value: E.Expr


@dataclasses.dataclass(frozen=True, eq=False)
class Allocate(Stmt):
    """Scope of a ``temp`` or ``local`` buffer: it exists while ``body`` runs."""

    buffer: Buffer
    body: Stmt


@dataclasses.dataclass(frozen=True, eq=False)
class SeqStmt(Stmt):
    stmts: tuple

    def __post_init__(self):
        flat = []
        for s in self.stmts:
            flat.extend(s.stmts if isinstance(s, SeqStmt) else (s,))
        object.__setattr__(self, "stmts", tuple(flat))


@dataclasses.dataclass(frozen=True, eq=False)
class IfThenElse(Stmt):
    cond: E.Expr
    then_case: Stmt
    else_case: Stmt | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class LetStmt(Stmt):
    """``const T var = value;`` visible in ``body``."""

    var: E.Var
    value: E.Expr
    body: Stmt


@dataclasses.dataclass(frozen=True, eq=False)
class Declare(Stmt):
    """A mutable scalar ``T var = init;`` (an accumulator), visible in ``body``."""

    var: E.Var
    init: E.Expr
    body: Stmt


@dataclasses.dataclass(frozen=True, eq=False)
class Assign(Stmt):
    """``var = value;`` of a ``Declare``d scalar."""

    var: E.Var
    value: E.Expr


@dataclasses.dataclass(frozen=True, eq=False)
class CallRoutine(Stmt):
    """``if (routine(buffers..., scalars..., min_work) != 0) return -1;``: a hand-written
    C routine of the code generator's table (``te.extern``), given buffer pointers, then
    scalars (``int64`` or ``float64`` expressions), then ``min_work``: the work worth one
    more thread (0: one thread)."""

    routine: str
    buffers: tuple
    scalars: tuple
    min_work: int = 0


def seq(*stmts) -> Stmt:
    stmts = [s for s in stmts if s is not None]
    return stmts[0] if len(stmts) == 1 else SeqStmt(tuple(stmts))


@dataclasses.dataclass(eq=False)
class PrimFunc:
    """One lowered primitive function: ``int32_t name(void* const* args, const int64_t*
    dims)``.

    ``args`` are the ``inputs`` buffers then the ``outputs`` buffers (contiguous,
    row-major); ``dim_vars`` are the symbolic dimensions, in the order of ``dims``, named
    as in the Relay types. ``input_types``/``output_types`` are the Relay
    ``TensorType``s of the flattened arguments and results. ``source`` is the C text of
    (TVM's name for a lowered function.) The code generator renders it:
    ``relayir.codegen.c_printer.render(prim)`` is its C text, ``render_module`` puts
    several in one translation unit with the shared header.
    """

    name: str
    inputs: list
    outputs: list
    body: Stmt
    dim_vars: list = dataclasses.field(default_factory=list)
    input_types: list = dataclasses.field(default_factory=list)
    output_types: list = dataclasses.field(default_factory=list)
    constants: list = dataclasses.field(default_factory=list)
    info: dict[str, _Any] = dataclasses.field(default_factory=dict)

    @property
    def dim_names(self) -> list[str]:
        return [v.name for v in self.dim_vars]

    def __repr__(self) -> str:
        return f"PrimFunc({self.name}, {len(self.inputs)} inputs, {len(self.outputs)} outputs)"
