"""``EliminateCommonSubexpr``: one node for each distinct computation, scope by scope.

Two operator calls are the same computation when they call the same operator with
equal attributes on the same (already merged) arguments; likewise tuples of the same
fields, projections of the same tuple at the same index, and constants of the same
dtype, shape and bits. Each candidate goes into a hash table keyed by exactly that, so
a lookup is one dict probe and the pass is linear.

Scopes: the table is scoped like the program. A function body, an ``if`` branch and a
``match`` clause open a scope whose entries are dropped when it closes, so a node is
only ever replaced by one from the same scope or an enclosing one (which dominates
it), never by one from a sibling branch. ``let`` opens no scope: a merged node has
exactly the free variables of the node it replaces, so the result is well-formed.
Primitive functions are compiled units and are left alone. Only operator calls are
merged among calls (as in TVM): a call of a closure or a global is not known to be pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from ..ir._util import gc_paused
from ..ir.adt import Clause, Match
from ..ir.expr import Expr, Function, If, Op
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from .analysis import copy_types, map_functions, typed_module
from .pass_infra import Pass, module_pass, register_pass


class _CSE(ExprMutator):
    def __init__(self, fskip: Callable[[Expr], bool] | None):
        super().__init__()
        self.fskip = fskip
        self.table: dict = {}
        self.scopes: list[list] = [[]]

    def _canonical(self, key, node: Expr) -> Expr:
        if self.fskip is not None and self.fskip(node):
            return node
        try:
            found = self.table.get(key)
        except TypeError:  # an attribute value that cannot be hashed: leave the node alone
            return node
        if found is not None:
            return found
        self.table[key] = node
        self.scopes[-1].append(key)
        return node

    def _in_scope(self, expr: Expr) -> Expr:
        self.scopes.append([])
        try:
            return self.visit(expr)
        finally:
            for key in self.scopes.pop():
                del self.table[key]

    # ------------------------------------------------------------ merged kinds

    def visit_call(self, call):
        new = super().visit_call(call)
        if not isinstance(new.op, Op):
            return new
        return self._canonical(("call", new.op, new.attrs, new.args, new.type_args), new)

    def visit_tuple(self, t):
        new = super().visit_tuple(t)
        return self._canonical(("tuple", new.fields), new)

    def visit_tuple_getitem(self, t):
        new = super().visit_tuple_getitem(t)
        return self._canonical(("getitem", new.tuple_value, new.index), new)

    def visit_constant(self, c):
        data = c.data
        # a memoryview of the buffer avoids a copy, but only an ordinary, non-empty,
        # C-contiguous array has one that casts to bytes (not bfloat16's, nor (0, 3)'s)
        if data.flags.c_contiguous and data.size and data.dtype.isbuiltin == 1:
            digest = hashlib.blake2b(memoryview(data).cast("B"), digest_size=16).digest()
        else:
            digest = hashlib.blake2b(data.tobytes(), digest_size=16).digest()
        return self._canonical(("const", data.dtype.str, data.shape, digest), c)

    # ------------------------------------------------------------ scopes

    def visit_if(self, e):
        c = self.visit(e.cond)
        t = self._in_scope(e.true_branch)
        f = self._in_scope(e.false_branch)
        if c is e.cond and t is e.true_branch and f is e.false_branch:
            return e
        return If(c, t, f).with_span(e.span)

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        body = self._in_scope(fn.body)
        if body is fn.body:
            return fn
        return Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs).with_span(fn.span)

    def visit_match(self, m):
        data = self.visit(m.data)
        clauses = []
        changed = data is not m.data
        for c in m.clauses:
            rhs = self._in_scope(c.rhs)
            clauses.append(c if rhs is c.rhs else Clause(c.lhs, rhs))
            changed |= rhs is not c.rhs
        return Match(data, clauses, m.complete).with_span(m.span) if changed else m


def eliminate_common_subexpr(expr: Expr, fskip: Callable[[Expr], bool] | None = None) -> Expr:
    """CSE of one expression; ``fskip(node)`` true keeps ``node`` out of merging."""
    return _cse(expr, fskip)[0]


def _cse(expr: Expr, fskip) -> tuple[Expr, bool]:
    cse = _CSE(fskip)
    out = cse.visit(expr)
    return out, copy_types(cse.memo)


def EliminateCommonSubexpr(fskip: Callable[[Expr], bool] | None = None) -> Pass:  # noqa: N802
    """Relay's ``EliminateCommonSubexpr`` (opt level 3)."""

    def one(gv, fn):
        with gc_paused():
            return _cse(fn, fskip)

    @module_pass(opt_level=3, name="EliminateCommonSubexpr")
    def cse(mod: IRModule, ctx) -> IRModule:
        return map_functions(typed_module(mod), one)

    return cse


register_pass("EliminateCommonSubexpr", EliminateCommonSubexpr)

__all__ = ["EliminateCommonSubexpr", "eliminate_common_subexpr"]
