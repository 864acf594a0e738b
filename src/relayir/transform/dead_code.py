"""``DeadCodeElimination``: drop unused pure ``let`` bindings; optionally inline single uses.

DCE removes an unused binding unless its value may write a reference; ``inline_once``
moves only values that touch no reference (the effect analysis is in
``transform.analysis``). So with references around, ``@map(%f, %xs)`` is kept even
when unused: ``@map`` calls a closure it is handed. Non-termination is not an effect,
as in TVM: an unused call that would diverge may be removed.

``inline_once`` substitutes a binding used exactly once, wherever the use is, as TVM
does: into a branch (now computed only when taken) or a function body (now computed per
call); recursive function bindings are never inlined.
"""

from __future__ import annotations

from ..ir._util import gc_paused
from ..ir.analysis import free_vars
from ..ir.expr import Expr, Function, Let, Var
from ..ir.module import IRModule
from .analysis import (
    REFS,
    WRITES,
    Effects,
    LetSubstitution,
    children,
    copy_types,
    map_functions,
    ref_kinds,
    typed_module,
    unique_nodes,
)
from .pass_infra import Pass, module_pass, register_pass

# ---------------------------------------------------------------- the pass


def _mark(body: Expr, lets: dict, effects: dict):
    """Mark-and-sweep: the let variables reached from the result, and their use counts."""
    live: set = set()
    uses: dict = {}
    seen: set = set()
    stack = [body]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        t = type(n)
        if t is Var:
            let = lets.get(n)
            if let is not None and n not in live:
                live.add(n)
                stack.append(let.value)
            continue
        if t is Let:
            cs = (n.value, n.body) if effects[n.value] else (n.body,)
        else:
            cs = children(n)
        for c in cs:
            if type(c) is Var:
                uses[c] = uses.get(c, 0) + 1
            stack.append(c)
    return live, uses


class _Sweep(LetSubstitution):
    def __init__(self, live, uses, writes, moves, inline_once):
        super().__init__()
        self.live, self.uses, self.writes, self.moves = live, uses, writes, moves
        self.inline_once = inline_once

    def binding(self, let):
        var, value = let.var, let.value
        if var not in self.live and not self.writes[value]:
            return None  # dead and pure: dropped, value never visited
        if (self.inline_once and self.uses.get(var) == 1 and not self.moves[value]
                and not (type(value) is Function and var in free_vars(value))):
            self.sub[var] = self.visit(value)
            return None
        return self.visit(value)


def _dce(expr: Expr, nodes: list, writes_a: Effects, moves_a: Effects, inline_once: bool):
    """(new expression, whether every new node is typed)."""
    lets = {n.var: n for n in nodes if type(n) is Let}
    if not lets:
        return expr, True
    writes, moves = writes_a.flags(expr), moves_a.flags(expr)
    live, uses = _mark(expr, lets, writes)
    if len(live) == len(lets) and not inline_once:
        return expr, True  # every binding is used: nothing to do
    sweep = _Sweep(live, uses, writes, moves, inline_once)
    out = sweep.visit(expr)
    return out, copy_types(sweep.memo)


def eliminate_dead_code(expr: Expr, mod: IRModule | None = None,
                        inline_once: bool = False) -> Expr:
    """DCE of one expression (``mod`` tells which globals may write references)."""
    mod = mod if mod is not None else IRModule()
    nodes = unique_nodes([expr])
    present = ref_kinds(nodes) | ref_kinds(unique_nodes(mod.functions.values()))
    out, _ = _dce(expr, nodes, Effects(mod, WRITES, present=present),
                  Effects(mod, REFS, present=present), inline_once)
    return out


def _dce_module(mod: IRModule, inline_once: bool) -> IRModule:
    mod = typed_module(mod)
    nodes = {gv: unique_nodes([fn]) for gv, fn in mod.functions.items()}
    present = frozenset().union(*(ref_kinds(ns) for ns in nodes.values()))
    writes, moves = Effects(mod, WRITES, present=present), Effects(mod, REFS, present=present)
    return map_functions(mod, lambda gv, fn: _dce(fn, nodes[gv], writes, moves, inline_once))


def DeadCodeElimination(inline_once: bool = False) -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``DeadCodeElimination``: remove ``let x = v`` when ``x`` is unused and ``v``
    cannot write a reference; with ``inline_once`` also substitute a binding used exactly
    once (when its value touches no reference and is not a recursive function)."""

    @module_pass(opt_level=1, name="DeadCodeElimination")
    def dce(mod: IRModule, ctx) -> IRModule:
        with gc_paused():
            return _dce_module(mod, inline_once)

    return dce


register_pass("DeadCodeElimination", DeadCodeElimination)

__all__ = ["DeadCodeElimination", "eliminate_dead_code"]
