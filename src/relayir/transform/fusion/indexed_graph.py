"""The indexed dataflow graph that fusion partitions (TVM's ``IndexedForwardGraph``).

Nodes are the expressions a fused function can hold: op calls, other calls (opaque),
tuples, tuple projections and simple scalar constants. They are numbered in post-DFS
order (inputs first, left to right), so an index order is a topological order. Each node
keeps its forward edges (consumer index, edge pattern) and ``extern_ref``: whether
something outside the graph's reach also reads it (the function's result, a ``let``
binding, an ``if`` condition, a reference op, a callee position, ...). A node with an
external reference can only end a group, never sit inside one.

Scopes are fusion boundaries. The body of the function, each ``if`` branch, each
``match`` clause and each nested function's body are separate scopes (``let`` values and
bodies stay in their enclosing scope, but are external references). Scopes are walked
outermost first and a node belongs to the first scope that reaches it; an edge from a
node of one scope to a reader in another is not recorded, the node is marked external
instead, so no group ever spans two scopes. Primitive functions are not entered.

The walk uses an explicit stack: no Python recursion over the size of the program.
"""

from __future__ import annotations

from collections import deque

from ...ir.adt import Constructor
from ...ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    Op,
    Tuple,
    TupleGetItem,
)
from ...ir.node_table import NODES
from ...ir.op import OpPattern
from ...ir.types import TensorType, TupleType

ELEMWISE = int(OpPattern.ELEMWISE)
BROADCAST = int(OpPattern.BROADCAST)
INJECTIVE = int(OpPattern.INJECTIVE)
COMM_REDUCE = int(OpPattern.COMM_REDUCE)
OUT_ELEMWISE_FUSABLE = int(OpPattern.OUT_ELEMWISE_FUSABLE)
TUPLE = int(OpPattern.TUPLE)
OPAQUE = int(OpPattern.OPAQUE)

# Scalar constants of these dtypes are inlined into fused functions, as in TVM; any other
# constant is an input of the group that reads it.
_SIMPLE_CONST_DTYPES = frozenset({"int32", "int64", "float32", "float64", "bool"})


class Untyped(Exception):
    """A node the graph needs the type of has none: type inference must run first."""


def _type(e: Expr):
    try:
        return e._checked_type
    except AttributeError:
        raise Untyped(e) from None


def _is_graph_node(e: Expr) -> bool:
    t = type(e)
    if t is Call or t is Tuple or t is TupleGetItem:
        return True
    return t is Constant and e.data.ndim == 0 and e.data.dtype.name in _SIMPLE_CONST_DTYPES


def _walk_info(e: Expr):
    """``(children in this scope, external reads, roots of new scopes)`` of a node, from
    the node table: a child with a block role (an ``if`` branch, a clause, a function
    body) starts a new scope; the others are walked in this one. Fusion's own policy on
    top: only op calls, tuples and projections fuse with their inputs, so every input of
    any other node (a let, an ``if`` condition, a reference op, a closure call's callee)
    is an external read; a primitive function is not entered."""
    t = type(e)
    if t is Function:
        return (), (), (() if e.is_primitive else (e.body,))
    kind = NODES[t]
    children, roles = kind.children(e), kind.roles(e)
    if roles is None:
        here, blocks = children, ()
    else:
        here = tuple(c for c, r in zip(children, roles) if r < 0)
        blocks = tuple(c for c, r in zip(children, roles) if r >= 0)
    if t is Call:  # an op or constructor callee is not a child; a value callee is
        reads = () if isinstance(e.op, (Op, Constructor)) else (e.op,)
    elif t is Tuple or t is TupleGetItem:
        reads = ()
    else:
        reads = here
    return here, reads, blocks


class IndexedGraph:
    """The dataflow graph of one function body, nested scopes included."""

    __slots__ = ("nodes", "index", "pattern", "outputs", "extern_ref")

    def __init__(self, body: Expr):
        self.nodes: list[Expr] = []
        self.index: dict[Expr, int] = {}
        scope_of: dict[Expr, int] = {}
        externs: list[Expr] = [body]
        scopes = deque([body])
        scope_id = 0
        while scopes:
            root = scopes.popleft()
            if root not in scope_of:
                self._walk(root, scope_id, scope_of, externs, scopes)
                scope_id += 1
        n = len(self.nodes)
        self.pattern: list[int] = [OPAQUE] * n
        self.outputs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.extern_ref: list[bool] = [False] * n
        self._link_all(scope_of)
        index = self.index
        for e in externs:
            j = index.get(e)
            if j is not None:
                self.extern_ref[j] = True

    def __len__(self) -> int:
        return len(self.nodes)

    def _walk(self, root, scope_id, scope_of, externs, scopes) -> None:
        nodes, index = self.nodes, self.index
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            e, expanded = stack.pop()
            if expanded:
                if _is_graph_node(e):
                    index[e] = len(nodes)
                    nodes.append(e)
                continue
            if e in scope_of:
                continue
            scope_of[e] = scope_id
            stack.append((e, True))
            t = type(e)
            if t is Call and type(e.op) is Op:  # the common cases first
                children = e.args
            elif t is Tuple:
                children = e.fields
            elif t is TupleGetItem:
                children = (e.tuple_value,)
            else:
                children, reads, new_scopes = _walk_info(e)
                externs.extend(reads)
                for r in new_scopes:
                    externs.append(r)
                    scopes.append(r)
            for c in reversed(children):
                if c not in scope_of:
                    stack.append((c, False))

    def _link_all(self, scope_of) -> None:
        index, outputs, extern_ref = self.index, self.outputs, self.extern_ref
        pattern = self.pattern

        def link(child, consumer, consumer_scope, edge_pattern):
            j = index.get(child)
            if j is None:
                return
            if scope_of[child] != consumer_scope:
                extern_ref[j] = True
            else:
                outputs[j].append((consumer, edge_pattern))

        for i, e in enumerate(self.nodes):
            t = type(e)
            scope = scope_of[e]
            out_type = _type(e)  # fusion needs every type: fail early if one is missing
            if t is Call:
                op = e.op
                if isinstance(op, Op):
                    pat = int(op.pattern)
                    pattern[i] = pat
                    for a in e.args:
                        edge = pat
                        at = _type(a)
                        if (pat == BROADCAST and isinstance(at, TensorType)
                                and isinstance(out_type, TensorType)
                                and at.shape == out_type.shape):
                            edge = ELEMWISE
                        link(a, i, scope, edge)
                else:
                    for a in e.args:
                        _type(a)
                        link(a, i, scope, OPAQUE)
            elif t is Tuple:
                pattern[i] = TUPLE
                for f in e.fields:
                    if isinstance(_type(f), TensorType):
                        link(f, i, scope, INJECTIVE)
                    else:
                        j = index.get(f)
                        if j is not None:
                            extern_ref[j] = True
            elif t is TupleGetItem:
                tup_type = _type(e.tuple_value)
                if isinstance(tup_type, TupleType) and all(
                        isinstance(f, TensorType) for f in tup_type.fields):
                    pattern[i] = INJECTIVE
                    link(e.tuple_value, i, scope, INJECTIVE)
                else:
                    j = index.get(e.tuple_value)
                    if j is not None:
                        extern_ref[j] = True
            else:  # a simple scalar constant: inlined into whatever group takes it
                pattern[i] = ELEMWISE

    def dump(self) -> str:
        """One line per node: index, pattern, outputs (for debugging partitions)."""
        from ...ir.expr import short_text

        lines = []
        for i, e in enumerate(self.nodes):
            outs = ", ".join(f"{o}:{OpPattern(p).name}" for o, p in self.outputs[i])
            ext = " extern" if self.extern_ref[i] else ""
            lines.append(f"[{i}] {OpPattern(self.pattern[i]).name}{ext} {short_text(e)} -> {outs}")
        return "\n".join(lines)
