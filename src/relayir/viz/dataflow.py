"""A Relay function as a graph to draw: nodes are op calls (and the other values a
reader sees: inputs, calls of functions and constructors, tuples, ``if``/``match``,
closures), edges carry values.

``let`` is transparent (a variable is the node of its value), and so is a call of a
primitive (fused) function: its parameters are the call's arguments, its result its
body's, and the ops inside are drawn in a *cluster* named as the kernel it becomes.
A closure's body is a cluster too. Constants are not nodes: each node lists the shapes
of its constant inputs (a bound model has hundreds of weights).

The result is a ``graph.Graph`` (nodes in a topological order, foldable blocks).
Nothing here recurses over the graph: ``post_order`` and explicit worklists.
"""

from __future__ import annotations

from ..backend.kernel_names import kernel_base_name
from ..ir.adt import Constructor, Match, pattern_vars
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.functor import post_order
from ..ir.node_table import binders, children
from ..ir.printer import attr_value_text
from ..ir.types import TensorType, TupleType
from .graph import Graph, make_graph

_KIND = {Tuple: "tuple", TupleGetItem: "proj", If: "if", Match: "match", Function: "fn",
         RefCreate: "ref", RefRead: "ref", RefWrite: "ref", Var: "input",
         Constructor: "ctor", GlobalVar: "global"}


def type_text(ty) -> str:
    """``1×64×56×56 float32`` for a tensor type, ``(a, b)`` for a tuple, else the
    type's Relay text."""
    if isinstance(ty, TensorType):
        dims = "×".join(str(d) for d in ty.shape)
        return f"{dims} {ty.dtype}" if dims else ty.dtype
    if isinstance(ty, TupleType):
        return "(" + ", ".join(type_text(f) for f in ty.fields) + ")"
    return str(ty)


def _type_of(e: Expr) -> str:
    return type_text(e.checked_type) if e.has_type else ""


class _Bindings:
    """What each variable stands for (a let's value, a fused function's argument), and
    which calls are calls of a primitive function (drawn as that function's body)."""

    def __init__(self, nodes: list[Expr]):
        self.value: dict[Var, Expr] = {}
        lets = [n.var for n in nodes if type(n) is Let]
        for n in nodes:
            if type(n) is Let:
                self.value[n.var] = n.value
        self.primitive: dict[int, Function] = {}  # id(call) -> the function it calls
        for n in nodes:
            if type(n) is Call:
                fn = self._callee(n.op)
                if fn is not None:
                    self.primitive[id(n)] = fn
                    for p, a in zip(fn.params, n.args):
                        self.value[p] = a
        self.names: dict[int, list[str]] = {}  # id(drawn node) -> its let variables
        for v in lets:
            self.names.setdefault(id(self.resolve(v)), []).append(v.name_hint)
        # globals and constructors are nodes only where they are values (not callees)
        self.as_value = {id(self.resolve(value)) for n in nodes for value, _ in _operands(n)}

    def _callee(self, op: Expr) -> Function | None:
        seen = 0
        while type(op) is Var and op in self.value and seen < 64:
            op, seen = self.value[op], seen + 1
        return op if type(op) is Function and op.is_primitive else None

    def resolve(self, e: Expr) -> Expr:
        """The node that draws ``e``: through variables, ``let`` bodies and calls of
        primitive functions (bounded: a malformed chain stops rather than loops)."""
        for _ in range(1 << 20):
            t = type(e)
            if t is Var and e in self.value:
                e = self.value[e]
            elif t is Let:
                e = e.body
            elif t is Call and id(e) in self.primitive:
                e = self.primitive[id(e)].body
            else:
                return e
        return e


def _drawable(e: Expr, b: _Bindings) -> bool:
    t = type(e)
    if t is Call:
        return id(e) not in b.primitive
    if t is Var:
        return e not in b.value
    if t is Function:
        return not e.is_primitive
    if t in (GlobalVar, Constructor):
        return id(e) in b.as_value
    return t in _KIND


def _label(e: Expr) -> tuple[str, str]:
    """``(label, kind)`` of a drawn node."""
    t = type(e)
    if t is Call:
        op = e.op
        if type(op) is Op:
            return op.name, "op"
        if type(op) is Constructor:
            return op.name_hint, "ctor"
        if type(op) is GlobalVar:
            return f"@{op.name_hint}", "call"
        return "call", "call"
    if t is Var:
        return f"%{e.name_hint}", "input"
    if t is TupleGetItem:
        return f".{e.index}", "proj"
    if t is Function:
        return "fn(" + ", ".join(f"%{p.name_hint}" for p in e.params) + ")", "fn"
    if t is Constructor:
        return e.name_hint, "ctor"
    if t is GlobalVar:
        return f"@{e.name_hint}", "global"
    if t is Match:
        return ("match" if e.complete else "match?"), "match"
    refs = {RefCreate: "ref", RefRead: "ref_read", RefWrite: "ref_write"}
    return refs.get(t, t.__name__.lower()), _KIND[t]


def _operands(e: Expr) -> list[tuple[Expr, str]]:
    """The values a drawn node reads, each with an edge label."""
    t = type(e)
    if t is Call:
        callee = [] if type(e.op) in (Op, Constructor, GlobalVar) else [(e.op, "callee")]
        return callee + [(a, "") for a in e.args]
    if t is Tuple:
        return [(f, "") for f in e.fields]
    if t is TupleGetItem:
        return [(e.tuple_value, "")]
    if t is If:
        return [(e.cond, "cond"), (e.true_branch, "then"), (e.false_branch, "else")]
    if t is Match:
        return [(e.data, "")] + [(c.rhs, "clause") for c in e.clauses]
    if t is Function:
        return [(e.body, "returns")]
    if t is RefCreate:
        return [(e.value, "")]
    if t is RefRead:
        return [(e.ref, "")]
    if t is RefWrite:
        return [(e.ref, ""), (e.value, "")]
    return []


def _attrs_text(e: Expr) -> str:
    attrs = getattr(e, "attrs", None) if type(e) is Call else None
    if attrs is None:
        return ""
    items = attrs.non_default_items() if hasattr(attrs, "non_default_items") else \
        attrs.items()
    return ", ".join(f"{k}={attr_value_text(v)}" for k, v in items)


def function_graph(fn: Function) -> Graph:
    """The graph of ``fn``'s body (its parameters are the inputs)."""
    all_nodes = post_order(fn)
    b = _Bindings(all_nodes)
    order = [n for n in all_nodes if n is not fn and _drawable(n, b)]
    clusters, cluster_of = _clusters(fn, b)
    index = {id(n): i for i, n in enumerate(order)}
    consts: list[list[str]] = [[] for _ in order]
    edges: list[tuple[int, int]] = []
    for i, n in enumerate(order):
        for value, _ in _operands(n):
            r = b.resolve(value)
            if type(r) is Constant:
                consts[i].append(type_text(r.tensor_type))
            elif id(r) in index and index[id(r)] != i:
                edges.append((index[id(r)], i))
        if type(n) is Match:  # a pattern's variables are taken apart from the scrutinee
            src = b.resolve(n.data)
            for c in n.clauses:
                for v in pattern_vars(c.lhs):
                    if id(src) in index and id(v) in index:
                        edges.append((index[id(src)], index[id(v)]))
    out = b.resolve(fn.body)
    nodes = []
    for i, n in enumerate(order):
        label, kind = _label(n)
        ty = _type_of(n)
        names = b.names.get(id(n), [])
        hover = [label, ty] + [f"let %{v}" for v in names]
        attrs = _attrs_text(n)
        if attrs:
            hover.append(attrs)
        if consts[i]:
            hover.append("constant inputs: " + "; ".join(consts[i]))
        node = {"l": label, "k": kind, "t": ty, "h": "\n".join(h for h in hover if h),
                "n": " ".join([label] + names), "c": cluster_of.get(id(n), -1)}
        if n is out:
            node["o"] = 1
        nodes.append(node)
    return make_graph(nodes, edges, clusters)


def _clusters(fn: Function, b: _Bindings):
    """One cluster per function inside ``fn`` (a fused function: its kernel's name; a
    closure: ``closure body``). A node belongs to the outermost scope that reaches it
    without entering a function (scopes are taken outermost first), and a variable to
    the scope that binds it: a value a closure shares with its surroundings stays
    outside the closure's cluster."""
    clusters: list[dict] = []
    cluster_of: dict[int, int] = {}
    seen: set[int] = set()
    var_scope: dict[int, int] = {id(p): -1 for p in fn.params}
    work = [(fn, -1)]
    while work:
        f, k = work.pop(0)
        for p in f.params:
            var_scope[id(p)] = k
        for n in _scope_nodes(f.body, seen):
            for v in binders(n):
                var_scope.setdefault(id(v), k)
            if type(n) is Function:
                label = kernel_base_name(n) if n.is_primitive else "closure body"
                clusters.append({"l": label, "k": "fused" if n.is_primitive else "closure"})
                work.append((n, len(clusters) - 1))
            if k >= 0 and type(n) is not Var and _drawable(n, b):
                cluster_of[id(n)] = k
    for v, k in var_scope.items():
        if k >= 0:
            cluster_of[v] = k
    return clusters, cluster_of


def _scope_nodes(body: Expr, seen: set[int]) -> list[Expr]:
    """The nodes ``body`` reaches without entering a function (the functions met are
    included), not already in ``seen`` (which grows)."""
    out: list[Expr] = []
    stack = [body]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        if type(n) is not Function:
            stack.extend(children(n))
    return out


__all__ = ["function_graph", "type_text"]
