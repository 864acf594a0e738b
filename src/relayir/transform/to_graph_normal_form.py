"""``ToGraphNormalForm``: the inverse of ANF for pure code: ``let`` becomes graph sharing.

``let %x = v; body`` is replaced by ``body`` with ``%x`` substituted by ``v``; a value
used twice becomes one node with two users (graph form evaluates a node once per
function activation, so nothing is recomputed). Two kinds of binding stay:

- a function that refers to its own variable (recursion needs the name);
- a value that touches references (``ref_create``/``ref_read``/``ref_write``, or a call
  that may): in graph form it would be evaluated at its first use, or not at all, which
  changes what the program observes (see ``dead_code`` for the effect analysis).

TVM's ``ToGraphNormalForm`` inlines every binding and documents that this is only valid
for pure programs; keeping effectful bindings makes it valid for all of them.
"""

from __future__ import annotations

from ..ir.analysis import free_vars
from ..ir.expr import Expr, Function, Let
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from .dead_code import (
    REFS,
    Effects,
    copy_types,
    finish,
    gc_paused,
    ref_kinds,
    typed_input,
    unique_nodes,
)
from .pass_infra import Pass, module_pass, register_pass


class _GNF(ExprMutator):
    def __init__(self, effectful: dict):
        super().__init__()
        self.effectful = effectful
        self.sub: dict = {}

    def visit_var(self, v):
        return self.sub.get(v, v)

    def visit_let(self, let):
        chain = []
        e = let
        while isinstance(e, Let) and e not in self.memo:
            value = e.value
            keep = self.effectful[value] or (
                type(value) is Function and e.var in free_vars(value))
            new_value = self.visit(value)
            if keep:
                chain.append((e, new_value))
            else:
                self.sub[e.var] = new_value
                chain.append((e, None))
            e = e.body
        result = self.visit(e)
        for old, new_value in reversed(chain):
            if new_value is not None:
                if new_value is old.value and result is old.body:
                    result = old
                else:
                    result = Let(old.var, new_value, result).with_span(old.span)
            self.memo[old] = result
        return result


def to_graph_normal_form_expr(expr: Expr, mod: IRModule | None = None) -> Expr:
    """Graph normal form of one expression (``mod`` tells which globals touch references)."""
    effects = Effects(mod, REFS, expr)
    gnf = _GNF(effects.flags(expr))
    out = gnf.visit(expr)
    copy_types(gnf.memo)
    return out


@module_pass(opt_level=1, name="ToGraphNormalForm")
def _gnf_module(mod: IRModule, ctx) -> IRModule:
    mod = typed_input(mod)
    nodes = {gv: unique_nodes([fn]) for gv, fn in mod.functions.items()}
    effects = Effects(mod, REFS, present=frozenset().union(*map(ref_kinds, nodes.values())))
    functions = {}
    typed = True
    for gv, fn in mod.functions.items():
        if fn.is_primitive or not any(type(n) is Let for n in nodes[gv]):
            functions[gv] = fn
            continue
        with gc_paused():
            gnf = _GNF(effects.flags(fn))
            functions[gv] = gnf.visit(fn)
            typed &= copy_types(gnf.memo)
    return finish(mod.with_functions(functions), typed)


def ToGraphNormalForm() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``ToGraphNormalForm``: turn ``let`` bindings back into graph sharing."""
    return _gnf_module


register_pass("ToGraphNormalForm", ToGraphNormalForm)

__all__ = ["ToGraphNormalForm", "to_graph_normal_form_expr"]
