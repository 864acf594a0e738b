"""Visitors over expressions: ``ExprFunctor``, ``ExprVisitor``, ``ExprMutator``.

Dispatch goes through a table built once per class from the node table
(``node_table.NODES``: each node class's method name, children and rebuild); results
are memoised by node identity, so a node shared in a dataflow graph is visited once.

No Python recursion over user-sized graphs: before a dataflow node (call, tuple,
projection, reference op) is dispatched, its not-yet-visited dataflow inputs are
dispatched first from an explicit post-order worklist, so ``visit(arg)`` inside
``visit_call`` is a memo hit. ``Let`` chains are walked in a loop. Only scope nesting
(a function inside a function, an ``if`` inside a branch) uses the Python stack.
"""

from __future__ import annotations

from .adt import Pattern, PatternWildcard
from .expr import Call, Expr, Let
from .node_table import DATAFLOW_NODES, NODES, children, dataflow_inputs, kind_of

# the node table's walk, under the names passes have always imported from here
expr_children = children


def post_order(root: Expr) -> list[Expr]:
    """All nodes reachable from ``root`` (scopes included), each once, children first."""
    nodes = NODES
    kind_of(root)  # a clear error for a root that is no expression
    out: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            out.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for child in reversed(nodes[type(node)].children(node)):
            if id(child) not in seen:
                stack.append((child, False))
    return out


_DATAFLOW = frozenset(DATAFLOW_NODES)


class ExprFunctor:
    """Memoising dispatcher: ``visit(e)`` calls ``visit_<kind>(e)`` once per node."""

    def __init__(self) -> None:
        self.memo: dict[Expr, object] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch_table = None  # built lazily, once per class

    def _table(self) -> dict:
        cls = type(self)
        table = cls.__dict__.get("_dispatch_table")
        if table is None:
            table = {node_type: getattr(cls, kind.visit) for node_type, kind in NODES.items()}
            cls._dispatch_table = table
        return table

    def visit(self, expr: Expr):
        memo = self.memo
        try:
            return memo[expr]
        except KeyError:
            pass
        table = self._table()
        if type(expr) in _DATAFLOW:
            self._visit_inputs_first(expr, table)
        result = table[type(expr)](self, expr)
        memo[expr] = result
        return result

    def _visit_inputs_first(self, root: Expr, table: dict) -> None:
        memo, nodes, dataflow = self.memo, NODES, _DATAFLOW
        stack = [(c, False) for c in reversed(nodes[type(root)].children(root)) if c not in memo]
        while stack:
            node, expanded = stack.pop()
            if node in memo:
                continue
            if not expanded and type(node) in dataflow:
                pending = [c for c in nodes[type(node)].children(node) if c not in memo]
                if pending:
                    stack.append((node, True))
                    stack.extend((c, False) for c in reversed(pending))
                    continue
            memo[node] = table[type(node)](self, node)

    def visit_pattern(self, pattern: Pattern):
        return pattern

    def visit_type(self, ty):
        return ty

    # subclasses override the kinds they handle
    def _unhandled(self, expr):
        raise NotImplementedError(f"{type(self).__name__} does not handle {type(expr).__name__}")

    visit_var = visit_global_var = visit_constant = visit_op = visit_constructor = _unhandled
    visit_call = visit_tuple = visit_tuple_getitem = visit_let = visit_if = _unhandled
    visit_function = visit_match = visit_ref_create = visit_ref_read = visit_ref_write = _unhandled


class ExprVisitor(ExprFunctor):
    """Visits every node once; override ``visit_<kind>`` and call the base to go on.

    The base visits a node's children as the node table lists them (pattern variables
    included); an op or constructor callee is no child, but ``visit_op`` still sees it.
    """

    def visit_var(self, v):
        pass

    visit_global_var = visit_constant = visit_op = visit_constructor = visit_var

    def visit_children(self, e):
        for c in NODES[type(e)].children(e):
            self.visit(c)

    visit_tuple = visit_tuple_getitem = visit_if = visit_function = visit_match = visit_children
    visit_ref_create = visit_ref_read = visit_ref_write = visit_children

    def visit_call(self, call):  # the table's children, plus an op callee for visit_op
        self.visit(call.op)
        for a in call.args:
            self.visit(a)

    def visit_let(self, let):
        e = let
        while isinstance(e, Let):
            self.visit(e.var)
            self.visit(e.value)
            self.memo[e] = None
            e = e.body
        self.visit(e)


class ExprMutator(ExprFunctor):
    """Rebuilds an expression bottom-up; a node whose children did not change is reused.

    The base rebuilds a node from its visited children through the node table (which
    keeps span, attributes and annotations); ``let`` chains are rebuilt in a loop, and
    an op callee, no child, is still offered to ``visit_op``.
    """

    def visit_var(self, v):
        return v

    visit_global_var = visit_constant = visit_op = visit_constructor = visit_var

    def visit_children(self, e):
        """``e`` around its visited children (``e`` itself when none changed)."""
        kind = NODES[type(e)]
        old = kind.children(e)
        new = tuple([self.visit(c) for c in old])
        for a, b in zip(old, new):
            if a is not b:
                return kind.make(e, new)
        return e

    visit_tuple = visit_tuple_getitem = visit_if = visit_function = visit_match = visit_children
    visit_ref_create = visit_ref_read = visit_ref_write = visit_children

    def visit_call(self, call):
        op = self.visit(call.op)
        new = self.visit_children(call)
        if op is new.op:
            return new
        return Call(op, new.args, new.attrs, new.type_args).with_span(call.span)

    def visit_let(self, let):
        chain = []
        e = let
        while isinstance(e, Let) and e not in self.memo:
            chain.append((e, self.visit(e.var), self.visit(e.value)))
            e = e.body
        return self.rebuild_lets(chain, self.visit(e))

    def rebuild_lets(self, chain, body):
        """The ``let`` chain around the new ``body``, built innermost first (a loop, so a
        chain of any length costs no recursion), and memoised per old ``let``.

        ``chain`` holds ``(old let, new var, new value)``, outermost first; a binding
        whose new value is None is dropped, and an old ``let`` whose parts are all
        unchanged is reused.
        """
        for old, var, value in reversed(chain):
            if value is not None:
                if var is old.var and value is old.value and body is old.body:
                    body = old
                else:
                    body = self.new_let(old, var, value, body)
            self.memo[old] = body
        return body

    def new_let(self, old, var, value, body):
        """The ``let`` that replaces ``old`` (a hook: subclasses carry its type over)."""
        return NODES[Let].make(old, (var, value, body))


__all__ = [
    "ExprFunctor", "ExprVisitor", "ExprMutator", "post_order", "expr_children",
    "dataflow_inputs", "DATAFLOW_NODES", "PatternWildcard",
]
