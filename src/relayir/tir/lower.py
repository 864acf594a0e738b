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
   are allocated around the whole body. The outputs of a ``te.extern`` are one stage
   together: a call of their C routine (``CallRoutine``), whose inputs are materialised.
"""

from __future__ import annotations

from ..ir.expr import Function
from ..ir.types import TensorType
from ..te import expr as E
from ..te.computes.common import prod, ravel
from ..te.tensor import Tensor, compute
from ..te.visit import children, collect, post_order, rebuild, substitute
from .build_te import ConstantOp, LoweringError, build_te
from .loops import Stage, lower_stage
from .machine import Machine
from .names import c_identifier
from .schedule import Schedule, default_schedule
from .simplify import simplify
from .stmt import Allocate, Buffer, BufferLoad, CallRoutine, PrimFunc, seq

__all__ = ["LoweringError", "lower_primitive", "lower_tensors"]


def lower_primitive(func: Function, name: str, schedule=None,
                    machine: Machine | None = None) -> PrimFunc:
    """Lower a primitive function (``fn (...) { ops }``, Primitive=1) to one kernel.

    ``schedule``: ``None`` (defaults per stage), a ``Schedule`` for every stage, or a
    dict from compute tag to ``Schedule``. ``machine``: the CPU the default schedules
    are for (the target's, ``Target.machine()``; ``None``: this host's).
    """
    graph = build_te(func)
    return lower_tensors(graph.inputs, graph.outputs, name, schedule, graph.dim_vars,
                         graph.input_types, graph.output_types, machine)


def _tensor_type(t: Tensor, dim_vars) -> TensorType:
    shape = []
    for d in t.shape:
        v = E.const_value(d)
        shape.append(int(v) if v is not None else (d.name if isinstance(d, E.Var) else None))
    return TensorType(tuple(shape), t.dtype)


def _read_tensors(t: Tensor) -> list:
    """The tensors ``t``'s producer reads (an extern's inputs, a compute body's reads)
    and, for an extern output, its sibling outputs (one routine call writes them all)."""
    if t.is_extern:
        return [*t.op.inputs, *(o for o in t.op.outputs if o is not t)]
    return [r.tensor for r in collect(t.op.body, E.TensorRead)]


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
            for u in _read_tensors(t):
                if not state.get(u) and not u.is_placeholder:
                    stack.append((u, False))
    return order


class _Graph:
    """Readers of each tensor, and which reads happen inside a reduction."""

    def __init__(self, order: list):
        self.readers: dict = {t: [] for t in order}
        for c in order:
            if c.is_extern:
                continue  # reads its inputs whole: they are materialised
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
    for t in order:  # an extern's outputs, and the inputs it reads whole
        if t.is_extern:
            keep.add(t)
            keep.update(u for u in t.op.inputs if u in graph.readers)
    owner: dict = {t: t for t in keep}  # the stage computing t once per element, if any
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


def _schedule_for(schedule, tag: str, hint: dict | None = None,
                  machine: Machine | None = None) -> Schedule:
    """The caller's schedule, else the tag's default for ``machine`` with the compute's
    ``hint`` (its ``attrs["schedule"]``: knobs its author knows suit it, e.g. a weight
    already packed)."""
    if isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, dict) and tag in schedule:
        return schedule[tag]
    default = default_schedule(tag, machine)
    return default.replace(**hint) if hint else default


class _Inliner:
    """Expands a stage's body: a read of a tensor with a buffer becomes a ``BufferLoad``,
    a read of any other tensor becomes that tensor's body at the read's indices, itself
    expanded. A constant gets its buffer (and its name: ``c0``, ``c1``, ...) at its first
    read, and reads are met in the order a recursive post-order meets them: the C text,
    which compiled-kernel caches hash, depends on it.

    Expansion is a pure function of a node, so results are memoised by node across the
    whole kernel, and an inlined body by (tensor, indices): a fused chain's reads at the
    same indices share one expansion. A body is substituted before it is expanded, so
    each level of a chain costs its own size, not the size of everything below it. No
    recursion: a chain of thousands of ops nests that deep.
    """

    def __init__(self, buffers: dict, constants: list):
        self.buffers = buffers
        self.constants = constants
        self.memo: dict[int, tuple] = {}  # id(node) -> (node, expansion): keeps node alive
        self.at: dict = {}  # (tensor, indices) -> the tensor's expanded body there

    def inlined(self, t: Tensor) -> bool:
        return not (t in self.buffers or isinstance(t.op, ConstantOp) or t.is_placeholder)

    def buffer(self, t: Tensor) -> Buffer | None:
        """``t``'s buffer, if it has one (a constant gets its buffer at its first read)."""
        buf = self.buffers.get(t)
        if buf is None and isinstance(t.op, ConstantOp):
            buf = self.buffers[t] = Buffer(f"c{len(self.constants)}", t.dtype, t.shape,
                                           "const", t.op.data)
            self.constants.append(buf)
        return buf

    def __call__(self, root: E.Expr) -> E.Expr:
        memo = self.memo
        # a frame: node, its children, their expansions so far, [(key, body) being inlined]
        stack = [(root, children(root), [], [None])]
        while stack:
            x, cs, done, inlining = stack[-1]
            if id(x) in memo:
                stack.pop()
                continue
            while len(done) < len(cs) and id(cs[len(done)]) in memo:
                done.append(memo[id(cs[len(done)])][1])
            if len(done) < len(cs):
                c = cs[len(done)]
                stack.append((c, children(c), [], [None]))
                continue
            if inlining[0] is not None:  # the tensor's body at these indices is expanded
                key, body = inlining[0]
                out = self.at[key] = memo[id(body)][1]
            else:
                out = rebuild(x, done) if cs else x
                if isinstance(out, E.TensorRead):
                    out = self._read(out)
                    if type(out) is tuple:  # a body to expand first
                        inlining[0] = out
                        stack.append((out[1], children(out[1]), [], [None]))
                        continue
            stack.pop()
            memo[id(x)] = (x, out)
            memo.setdefault(id(out), (out, out))  # expanding an expansion changes nothing
        return memo[id(root)][1]

    def _read(self, read: E.TensorRead):
        """The expansion of a read whose indices are expanded, or ``(key, body)``: the
        substituted body that must be expanded first."""
        t = read.tensor
        buf = self.buffer(t)
        if buf is None and t.is_placeholder:
            raise LoweringError(f"tensor {t.name} is read but is not an input")
        if buf is not None:
            return BufferLoad(buf, buf.offset(read.indices))
        key = (t, tuple(read.indices))
        hit = self.at.get(key)
        if hit is not None:
            return hit
        body = substitute(t.op.body, {a.var: i for a, i in zip(t.op.axis, read.indices)})
        hit = self.memo.get(id(body))
        if hit is not None:
            self.at[key] = hit[1]
            return hit[1]
        return key, body


def _inlined_tags(order: list, inlined) -> dict:
    """Tensor -> the tags of the computes inlined into it, transitively (producers come
    first in ``order``)."""
    tags: dict = {}
    for t in order:
        if t.is_extern:
            continue
        for x in post_order(t.op.body):
            if isinstance(x, E.TensorRead) and inlined(x.tensor):
                u = x.tensor
                tags.setdefault(t, set()).update({u.op.tag, *tags.get(u, ())})
    return tags


def _schedule_hints(order: list, inlined) -> dict:
    """Tensor -> the ``attrs["schedule"]`` hints of its compute and of the computes inlined
    into it, transitively (a convolution's hint still holds when its fused ReLU is the
    stage that stores)."""
    hints: dict = {}
    for t in order:
        if t.is_extern:
            continue
        hint = {}
        for x in post_order(t.op.body):
            if isinstance(x, E.TensorRead) and inlined(x.tensor):
                hint.update(hints.get(x.tensor, {}))
        hint.update(t.op.attrs.get("schedule") or {})
        if hint:
            hints[t] = hint
    return hints


def _call_routine(op, inline: _Inliner, sched: Schedule) -> CallRoutine:
    buffers = []
    for t in (*op.inputs, *op.outputs):
        buf = inline.buffer(t)
        if buf is None:
            raise LoweringError(f"{op.name}: input {t.name} of routine {op.routine} has no "
                                f"buffer")
        buffers.append(buf)
    return CallRoutine(op.routine, tuple(buffers), tuple(simplify(s) for s in op.scalars),
                       sched.parallel_min_work if sched.parallel else 0)


def lower_tensors(inputs: list, outputs: list, name: str, schedule=None, dim_vars=None,
                  input_types=None, output_types=None,
                  machine: Machine | None = None) -> PrimFunc:
    """Lower a tensor-expression graph: ``inputs`` (placeholders, in argument order) to
    ``outputs`` (each stored to its own output buffer); default schedules are for
    ``machine`` (``None``: this host)."""
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

    inline = _Inliner(buffers, constants)
    tags = _inlined_tags(order, inline.inlined)
    hints = _schedule_hints(order, inline.inlined)

    stmts, called = [], set()
    dim_ranges = {v: (0, None) for v in dim_vars}
    for t in order:
        if t not in keep:
            continue
        if t.is_extern:
            if t.op not in called:  # one call writes all its outputs
                called.add(t.op)
                sched = _schedule_for(schedule, t.op.tag, machine=machine)
                stmts.append(_call_routine(t.op, inline, sched))
            continue
        body = inline(t.op.body)
        tag = _anchor({t.op.tag, *tags.get(t, ())})
        stage = Stage(t.name, [(a.var, simplify(a.extent)) for a in t.op.axis], buffers[t],
                      body, tag)
        sched = _schedule_for(schedule, tag, hints.get(t), machine)
        stmts.append(lower_stage(stage, sched, dim_ranges))
    body = seq(*stmts)
    for buf in reversed(temps):
        body = Allocate(buf, body)
    return PrimFunc(
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
