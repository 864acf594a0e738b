"""Lower a Relay primitive function (or a tensor-expression graph) to ONE kernel.

1. ``build_te``: the function body as tensors (the compute table applied per op).
2. Decide which tensors get memory (*stages*): the outputs; every reduction whose result
   is not consumed once, elementwise, by a single stage (a softmax's row max is read
   along the whole row, so it is written to a temporary); tensors a compute marks
   ``materialize`` (a convolution's padded input). Everything else is inlined: its body
   is substituted at each read, so injective and elementwise producers cost no memory
   traffic, and a reduction read elementwise is computed in its consumer's loop nest
   (epilogue fusion: ``relu(sum(x) + b)`` stores once).
3. Each stage becomes a loop nest (``loops.lower_stage``) under its schedule; temporaries
   are allocated around the whole body.
"""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager

from ..ir.expr import Function
from ..ir.types import TensorType
from ..te import expr as E
from ..te.computes.common import prod, ravel
from ..te.tensor import Tensor, compute
from ..te.visit import collect, rewrite, substitute
from .build_te import ConstantOp, LoweringError, build_te
from .loops import Stage, lower_stage
from .schedule import Schedule, default_schedule
from .simplify import simplify
from .stmt import Allocate, Buffer, BufferLoad, Kernel, seq

__all__ = ["LoweringError", "c_identifier", "lower_primitive", "lower_tensors"]


_TAKEN = frozenset((  # C keywords and names the generated file declares or includes
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "main", "free", "malloc", "memcpy",
    "exp", "expf", "log", "logf", "sqrt", "sqrtf", "pow", "powf", "floor", "ceil", "fmod",
))


def c_identifier(name: str, prefix: str = "k_") -> str:
    """A safe C identifier made from any string (never the raw user text)."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)[:80] or "kernel"
    if ident[0].isdigit() or ident in _TAKEN or ident.startswith(("rl_", "omp_", "__")):
        ident = prefix + ident
    return ident


@contextmanager
def _deep_expressions(limit: int = 20000):
    """Expressions of a long fused chain are deep; the traversals recurse over them."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def lower_primitive(func: Function, name: str, schedule=None) -> Kernel:
    """Lower a primitive function (``fn (...) { ops }``, Primitive=1) to one kernel.

    ``schedule``: ``None`` (defaults per stage), a ``Schedule`` for every stage, or a
    dict from compute tag to ``Schedule``.
    """
    with _deep_expressions():
        graph = build_te(func)
        return lower_tensors(graph.inputs, graph.outputs, name, schedule, graph.dim_vars,
                             graph.input_types, graph.output_types)


def _tensor_type(t: Tensor, dim_vars) -> TensorType:
    shape = []
    for d in t.shape:
        v = E.const_value(d)
        shape.append(int(v) if v is not None else (d.name if isinstance(d, E.Var) else None))
    return TensorType(tuple(shape), t.dtype)


def _topo(outputs: list) -> list:
    """Compute tensors reachable from ``outputs``, producers first."""
    order, state = [], {}
    for root in outputs:
        stack = [(root, False)]
        while stack:
            t, done = stack.pop()
            if done:
                order.append(t)
                state[t] = 2
                continue
            if state.get(t) or t.is_placeholder:
                continue
            state[t] = 1
            stack.append((t, True))
            for r in collect(t.op.body, E.TensorRead):
                if not state.get(r.tensor) and not r.tensor.is_placeholder:
                    stack.append((r.tensor, False))
    return order


class _Graph:
    """Readers of each tensor, and which reads happen inside a reduction."""

    def __init__(self, order: list):
        self.readers: dict = {t: [] for t in order}
        for c in order:
            body = c.op.body
            under = {id(r) for red in collect(body, E.Reduce)
                     for r in collect(red.source, E.TensorRead)}
            for r in collect(body, E.TensorRead):
                if r.tensor in self.readers:
                    self.readers[r.tensor].append((c, r, id(r) in under))

    @staticmethod
    def identity(reader: Tensor, read: E.TensorRead) -> bool:
        """Does ``reader`` read each element of the tensor once, one per own element?

        True for a read at the reader's own index, a permutation of it (transpose), or
        the same row-major position (reshape, flatten, squeeze)."""
        t, axis = read.tensor, reader.op.axis
        extents = {a.var: a.extent for a in axis}
        used = []
        for k, i in enumerate(read.indices):
            if E.const_value(i) == 0 and E.const_value(t.shape[k]) == 1:
                continue
            if not isinstance(i, E.Var) or i not in extents or i in used:
                break
            if simplify(E.Sub(extents[i], t.shape[k])) != E.IntImm(0):
                break
            used.append(i)
        else:
            if all(a.var in used or E.const_value(a.extent) == 1 for a in axis):
                return True
        ranges = {}
        for a in axis:
            n = E.const_value(a.extent)
            ranges[a.var] = (0, None if n is None else int(n) - 1)
        mine = ravel([a.var for a in axis], [a.extent for a in axis])
        theirs = ravel(read.indices, t.shape)
        size = simplify(E.Sub(prod([a.extent for a in axis]), prod(t.shape)))
        return size == E.IntImm(0) and simplify(E.Sub(mine, theirs), ranges) == E.IntImm(0)


def _materialized(order: list, outputs: list) -> set:
    graph = _Graph(order)
    keep = set(outputs)
    owner: dict = {t: t for t in outputs}  # the stage computing t once per element, if any
    for t in reversed(order):
        if t in keep:
            continue
        readers = graph.readers[t]
        consumers = {c for c, _, _ in readers}
        single = (len(consumers) == 1
                  and all(not under and _Graph.identity(c, r) for c, r, under in readers))
        owner[t] = owner.get(next(iter(consumers))) if single else None
        has_reduce = bool(collect(t.op.body, E.Reduce))
        if t.op.attrs.get("materialize") or (has_reduce and owner[t] is None):
            keep.add(t)
            owner[t] = t
    return keep


def _shape(t: Tensor) -> tuple:
    return tuple(simplify(d) for d in t.shape)


_ANCHORS = ("conv", "dense", "pool", "softmax", "norm", "reduce", "injective", "broadcast",
            "elemwise")


def _anchor(tags: set) -> str:
    """The tag that decides a stage's schedule: its heaviest compute (a dense with a fused
    relu is scheduled as a dense)."""
    for tag in _ANCHORS:
        if tag in tags:
            return tag
    return next(iter(tags)) if tags else ""


def _schedule_for(schedule, tag: str) -> Schedule:
    if isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, dict) and tag in schedule:
        return schedule[tag]
    return default_schedule(tag)


def lower_tensors(inputs: list, outputs: list, name: str, schedule=None, dim_vars=None,
                  input_types=None, output_types=None) -> Kernel:
    """Lower a tensor-expression graph: ``inputs`` (placeholders, in argument order) to
    ``outputs`` (each stored to its own output buffer)."""
    name = c_identifier(name)
    dim_vars = list(dim_vars or [])
    outs = []
    for t in outputs:  # an input or a repeated tensor as an output needs its own store
        if t.is_placeholder or t in outs:
            t = compute(t.shape, lambda *i, src=t: src[i], name="copy", tag="injective")
        outs.append(t)
    order = _topo(outs)
    keep = _materialized(order, outs)

    buffers: dict = {}
    for k, t in enumerate(inputs):
        buffers[t] = Buffer(f"p{k}", t.dtype, _shape(t), "input")
    for k, t in enumerate(outs):
        buffers[t] = Buffer(f"out{k}", t.dtype, _shape(t), "output")
    temps, constants = [], []
    for t in order:
        if t in keep and t not in buffers:
            buffers[t] = Buffer(f"t{len(temps)}", t.dtype, _shape(t), "temp")
            temps.append(buffers[t])

    expanded: dict = {}
    tags: dict = {}  # tensor -> tags of the computes inlined into it (transitively)

    def expand(e: E.Expr, owner: Tensor) -> E.Expr:
        def visit(x):
            if not isinstance(x, E.TensorRead):
                return x
            t = x.tensor
            buf = buffers.get(t)
            if buf is None and isinstance(t.op, ConstantOp):
                buf = buffers[t] = Buffer(f"c{len(constants)}", t.dtype, t.shape, "const",
                                          t.op.data)
                constants.append(buf)
            if buf is None and t.is_placeholder:
                raise LoweringError(f"tensor {t.name} is read but is not an input")
            if buf is not None:
                return BufferLoad(buf, buf.offset(x.indices))
            body = expanded.get(t)
            if body is None:
                body = expanded[t] = expand(t.op.body, t)
            tags.setdefault(owner, set()).update({t.op.tag, *tags.get(t, ())})
            return substitute(body, {a.var: i for a, i in zip(t.op.axis, x.indices)})

        return rewrite(e, visit)

    stmts = []
    dim_ranges = {v: (0, None) for v in dim_vars}
    for t in order:
        if t not in keep:
            continue
        body = expand(t.op.body, t)
        tag = _anchor({t.op.tag, *tags.get(t, ())})
        stage = Stage(t.name, [(a.var, simplify(a.extent)) for a in t.op.axis], buffers[t],
                      body, tag)
        stmts.append(lower_stage(stage, _schedule_for(schedule, tag), dim_ranges))
    body = seq(*stmts)
    for buf in reversed(temps):
        body = Allocate(buf, body)
    return Kernel(
        name=name,
        inputs=[buffers[t] for t in inputs],
        outputs=[buffers[t] for t in outs],
        body=body,
        dim_vars=dim_vars,
        input_types=list(input_types) if input_types else [_tensor_type(t, dim_vars)
                                                           for t in inputs],
        output_types=list(output_types) if output_types else [_tensor_type(t, dim_vars)
                                                              for t in outs],
        constants=constants,
        info={"stages": [t.name for t in order if t in keep],
              "temporaries": [b.name for b in temps]},
    )
