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

from ..ir._util import gc_paused
from ..ir.analysis import free_vars
from ..ir.expr import Expr, Function, Let
from ..ir.module import IRModule
from .analysis import (
    REFS,
    Effects,
    LetSubstitution,
    copy_types,
    map_functions,
    ref_kinds,
    typed_module,
    unique_nodes,
)
from .pass_infra import Pass, module_pass, register_pass


class _GNF(LetSubstitution):
    def __init__(self, effectful: dict):
        super().__init__()
        self.effectful = effectful

    def binding(self, let):
        value = let.value
        keep = self.effectful[value] or (type(value) is Function and let.var in free_vars(value))
        new_value = self.visit(value)
        if keep:
            return new_value
        self.sub[let.var] = new_value
        return None


def to_graph_normal_form_expr(expr: Expr, mod: IRModule | None = None) -> Expr:
    """Graph normal form of one expression (``mod`` tells which globals touch references)."""
    effects = Effects(mod, REFS, expr)
    gnf = _GNF(effects.flags(expr))
    out = gnf.visit(expr)
    copy_types(gnf.memo)
    return out


@module_pass(opt_level=1, name="ToGraphNormalForm")
def _gnf_module(mod: IRModule, ctx) -> IRModule:
    mod = typed_module(mod)
    nodes = {gv: unique_nodes([fn]) for gv, fn in mod.functions.items()}
    effects = Effects(mod, REFS, present=frozenset().union(*map(ref_kinds, nodes.values())))

    def one(gv, fn):
        with gc_paused():
            gnf = _GNF(effects.flags(fn))
            return gnf.visit(fn), copy_types(gnf.memo)

    return map_functions(mod, one, skip=lambda gv, fn: not any(type(n) is Let for n in nodes[gv]))


def ToGraphNormalForm() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``ToGraphNormalForm``: turn ``let`` bindings back into graph sharing."""
    return _gnf_module


register_pass("ToGraphNormalForm", ToGraphNormalForm)

__all__ = ["ToGraphNormalForm", "to_graph_normal_form_expr"]
