"""Visitors over expressions: ``ExprFunctor``, ``ExprVisitor``, ``ExprMutator``.

Dispatch goes through a table built once per class; results are memoised by node
identity, so a node shared in a dataflow graph is visited once.

No Python recursion over user-sized graphs: before a dataflow node (call, tuple,
projection, reference op) is dispatched, its not-yet-visited dataflow inputs are
dispatched first from an explicit post-order worklist, so ``visit(arg)`` inside
``visit_call`` is a memo hit. ``Let`` chains are walked in a loop. Only scope nesting
(a function inside a function, an ``if`` inside a branch) uses the Python stack.
"""

from __future__ import annotations

from .adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from .expr import (
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

DATAFLOW_NODES = (Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite)


def dataflow_inputs(e: Expr) -> tuple:
    """The expressions a dataflow node reads (callee included unless it is an op)."""
    if type(e) is Call:
        return e.args if isinstance(e.op, (Op, Constructor)) else (e.op, *e.args)
    if type(e) is Tuple:
        return e.fields
    if type(e) is TupleGetItem:
        return (e.tuple_value,)
    if type(e) is RefCreate:
        return (e.value,)
    if type(e) is RefRead:
        return (e.ref,)
    if type(e) is RefWrite:
        return (e.ref, e.value)
    return ()


def expr_children(e: Expr) -> tuple:
    """Every direct sub-expression of ``e``, in evaluation order."""
    if isinstance(e, DATAFLOW_NODES):
        return dataflow_inputs(e)
    if type(e) is Let:
        return (e.var, e.value, e.body)
    if type(e) is If:
        return (e.cond, e.true_branch, e.false_branch)
    if type(e) is Function:
        return (*e.params, e.body)
    if type(e) is Match:
        out = [e.data]
        for c in e.clauses:
            from .adt import pattern_vars

            out.extend(pattern_vars(c.lhs))
            out.append(c.rhs)
        return tuple(out)
    return ()


def post_order(root: Expr) -> list[Expr]:
    """All nodes reachable from ``root`` (scopes included), each once, children first."""
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
        for child in reversed(expr_children(node)):
            if id(child) not in seen:
                stack.append((child, False))
    return out


_DISPATCH_NAMES = {
    Var: "visit_var",
    GlobalVar: "visit_global_var",
    Constant: "visit_constant",
    Op: "visit_op",
    Constructor: "visit_constructor",
    Call: "visit_call",
    Tuple: "visit_tuple",
    TupleGetItem: "visit_tuple_getitem",
    Let: "visit_let",
    If: "visit_if",
    Function: "visit_function",
    Match: "visit_match",
    RefCreate: "visit_ref_create",
    RefRead: "visit_ref_read",
    RefWrite: "visit_ref_write",
}


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
            table = {node_type: getattr(cls, name) for node_type, name in _DISPATCH_NAMES.items()}
            cls._dispatch_table = table
        return table

    def visit(self, expr: Expr):
        memo = self.memo
        try:
            return memo[expr]
        except KeyError:
            pass
        table = self._table()
        if isinstance(expr, DATAFLOW_NODES):
            self._visit_inputs_first(expr, table)
        result = table[type(expr)](self, expr)
        memo[expr] = result
        return result

    def _visit_inputs_first(self, root: Expr, table: dict) -> None:
        memo = self.memo
        stack = [(c, False) for c in reversed(dataflow_inputs(root)) if c not in memo]
        while stack:
            node, expanded = stack.pop()
            if node in memo:
                continue
            if not expanded and isinstance(node, DATAFLOW_NODES):
                pending = [c for c in dataflow_inputs(node) if c not in memo]
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
    """Visits every node once; override ``visit_<kind>`` and call the base to go on."""

    def visit_var(self, v):
        pass

    visit_global_var = visit_constant = visit_op = visit_constructor = visit_var

    def visit_call(self, call):
        self.visit(call.op)
        for a in call.args:
            self.visit(a)

    def visit_tuple(self, t):
        for f in t.fields:
            self.visit(f)

    def visit_tuple_getitem(self, t):
        self.visit(t.tuple_value)

    def visit_let(self, let):
        e = let
        while isinstance(e, Let):
            self.visit(e.var)
            self.visit(e.value)
            self.memo[e] = None
            e = e.body
        self.visit(e)

    def visit_if(self, e):
        self.visit(e.cond)
        self.visit(e.true_branch)
        self.visit(e.false_branch)

    def visit_function(self, f):
        for p in f.params:
            self.visit(p)
        self.visit(f.body)

    def visit_match(self, m):
        self.visit(m.data)
        for c in m.clauses:
            self.visit_pattern(c.lhs)
            self.visit(c.rhs)

    def visit_pattern(self, p):
        if isinstance(p, PatternVar):
            self.visit(p.var)
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            for q in p.patterns:
                self.visit_pattern(q)

    def visit_ref_create(self, r):
        self.visit(r.value)

    def visit_ref_read(self, r):
        self.visit(r.ref)

    def visit_ref_write(self, r):
        self.visit(r.ref)
        self.visit(r.value)


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class ExprMutator(ExprFunctor):
    """Rebuilds an expression bottom-up; a node whose children did not change is reused."""

    def visit_var(self, v):
        return v

    visit_global_var = visit_constant = visit_op = visit_constructor = visit_var

    def visit_call(self, call):
        op = self.visit(call.op)
        args = tuple(self.visit(a) for a in call.args)
        if op is call.op and _same(args, call.args):
            return call
        return Call(op, args, call.attrs, call.type_args).with_span(call.span)

    def visit_tuple(self, t):
        fields = tuple(self.visit(f) for f in t.fields)
        return t if _same(fields, t.fields) else Tuple(fields).with_span(t.span)

    def visit_tuple_getitem(self, t):
        v = self.visit(t.tuple_value)
        return t if v is t.tuple_value else TupleGetItem(v, t.index).with_span(t.span)

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
        return Let(var, value, body).with_span(old.span)

    def visit_if(self, e):
        c, t, f = self.visit(e.cond), self.visit(e.true_branch), self.visit(e.false_branch)
        if c is e.cond and t is e.true_branch and f is e.false_branch:
            return e
        return If(c, t, f).with_span(e.span)

    def visit_function(self, fn):
        params = tuple(self.visit(p) for p in fn.params)
        body = self.visit(fn.body)
        if body is fn.body and _same(params, fn.params):
            return fn
        return Function(params, body, fn.ret_type, fn.type_params, fn.attrs).with_span(fn.span)

    def visit_match(self, m):
        data = self.visit(m.data)
        clauses = []
        changed = data is not m.data
        for c in m.clauses:
            lhs = self.visit_pattern(c.lhs)
            rhs = self.visit(c.rhs)
            if lhs is c.lhs and rhs is c.rhs:
                clauses.append(c)
            else:
                clauses.append(Clause(lhs, rhs))
                changed = True
        return Match(data, clauses, m.complete).with_span(m.span) if changed else m

    def visit_pattern(self, p):
        if isinstance(p, PatternVar):
            v = self.visit(p.var)
            return p if v is p.var else PatternVar(v)
        if isinstance(p, PatternConstructor):
            ps = tuple(self.visit_pattern(q) for q in p.patterns)
            return p if _same(ps, p.patterns) else PatternConstructor(p.constructor, ps)
        if isinstance(p, PatternTuple):
            ps = tuple(self.visit_pattern(q) for q in p.patterns)
            return p if _same(ps, p.patterns) else PatternTuple(ps)
        return p

    def visit_ref_create(self, r):
        v = self.visit(r.value)
        return r if v is r.value else RefCreate(v).with_span(r.span)

    def visit_ref_read(self, r):
        v = self.visit(r.ref)
        return r if v is r.ref else RefRead(v).with_span(r.span)

    def visit_ref_write(self, r):
        ref, v = self.visit(r.ref), self.visit(r.value)
        return r if ref is r.ref and v is r.value else RefWrite(ref, v).with_span(r.span)


__all__ = [
    "ExprFunctor", "ExprVisitor", "ExprMutator", "post_order", "expr_children",
    "dataflow_inputs", "DATAFLOW_NODES", "PatternWildcard",
]
