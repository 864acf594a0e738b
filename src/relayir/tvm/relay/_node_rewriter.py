"""A bottom-up rewriter that offers each rewritten node to ``_at(pre, post)``: the shared
walk of Relay's callback ``rewrite`` and of ``partition``."""

from __future__ import annotations

from ...ir.functor import ExprMutator


class NodeRewriter(ExprMutator):
    def _at(self, pre, post):
        raise NotImplementedError

    def visit_call(self, call):
        return self._at(call, super().visit_call(call))

    def visit_tuple(self, t):
        return self._at(t, super().visit_tuple(t))

    def visit_tuple_getitem(self, t):
        return self._at(t, super().visit_tuple_getitem(t))

    def visit_function(self, fn):
        return self._at(fn, super().visit_function(fn))

    def visit_if(self, e):
        return self._at(e, super().visit_if(e))

    def visit_let(self, e):
        return self._at(e, super().visit_let(e))
