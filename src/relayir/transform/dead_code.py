"""``DeadCodeElimination``: drop unused pure ``let`` bindings; optionally inline single uses.

Effects (the decision this pass and its neighbours share). Operator calls are pure (no
registered op is stateful), so only references have effects. Two questions are asked
of a let-bound value:

- *may it write?* (``WRITES``): a ``ref_write`` it evaluates, or a call of a function
  that may write. Dropping a value is safe unless it may write: creating or reading a
  reference nobody looks at is unobservable. DCE removes an unused binding unless its
  value may write.
- *may it touch references at all?* (``REFS``): also ``ref_create``/``ref_read``.
  Moving a value (inlining it at its use, possibly into another scope or past a write)
  is safe only if it touches no reference: a moved ``ref_create`` would make a new cell
  per evaluation, a moved ``ref_read`` could read after a write. ``inline_once`` and
  ``ToGraphNormalForm`` move only such values.

Evaluating a function literal has no effect; calling it has its body's effects. A call
of a global has the global's effects (a least fixed point over the module, so recursion
is fine); a call of any other function value (a parameter, a let-bound closure, a call
result) is assumed effectful, unless the module and the expression contain no reference
node of the kind asked about, which is the common case and makes every program without
references pure at no cost. So with references around, ``@map(%f, %xs)`` is kept even
when unused: ``@map`` calls a closure it is handed. Non-termination is not an effect, as
in TVM: an unused call that would diverge may be removed.

``inline_once`` substitutes a binding used exactly once, wherever the use is, as TVM
does: into a branch (now computed only when taken) or a function body (now computed per
call); recursive function bindings are never inlined.

This module also holds the helpers the structural passes share: the effect analysis,
a fast node scan, and the type bookkeeping (rebuilt nodes take their old node's type).
"""

from __future__ import annotations

import contextlib
import gc

from ..ir.adt import Constructor, Match
from ..ir.analysis import free_vars
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
    Var,
)
from ..ir.functor import ExprMutator, expr_children, post_order
from ..ir.module import IRModule
from ..typing.infer import infer_module
from .pass_infra import Pass, module_pass, register_pass

WRITES = (RefWrite,)
REFS = (RefCreate, RefRead, RefWrite)


_LEAVES = frozenset({Var, GlobalVar, Constant, Op, Constructor})
_REF_KINDS = frozenset(REFS)


def children(n: Expr) -> tuple:
    """``expr_children`` with a fast path for the common kinds."""
    t = type(n)
    if t is Call:
        op = n.op
        return n.args if type(op) is Op or type(op) is Constructor else (op, *n.args)
    if t is Let:
        return (n.var, n.value, n.body)
    if t in _LEAVES:
        return ()
    return expr_children(n)


def unique_nodes(roots) -> list[Expr]:
    """Every node under ``roots`` once (scopes included), in no particular order.

    Cheaper than a post-order when the order does not matter (about 3x).
    """
    out: list = []
    seen: set = set()
    stack = []
    for r in roots:
        if r not in seen:
            seen.add(r)
            out.append(r)
            stack.append(r)
    while stack:
        for c in children(stack.pop()):
            if c not in seen:
                seen.add(c)
                out.append(c)
                stack.append(c)
    return out


def ref_kinds(nodes) -> frozenset:
    """Which reference node kinds occur among ``nodes``."""
    return frozenset(t for t in {type(n) for n in nodes} if t in _REF_KINDS)


class Effects:
    """May evaluating an expression have one of the effects ``kinds``?

    ``Effects(mod, kinds)`` studies the module once (``present``: the reference kinds
    found in it, when the caller already scanned it); ``flags(root)`` then answers for
    every node under ``root`` in one post-order sweep (a dict keyed by node).
    """

    def __init__(self, mod: IRModule | None, kinds: tuple = WRITES, extra: Expr | None = None,
                 present: frozenset | None = None):
        self.kinds = kinds
        self.mod = mod if mod is not None else IRModule()
        if present is None:
            roots = list(self.mod.functions.values()) + ([extra] if extra is not None else [])
            present = ref_kinds(unique_nodes(roots))
        self.any = any(k in present for k in kinds)
        self.globals: dict[GlobalVar, bool] = {gv: False for gv in self.mod.functions}
        if self.any:
            changed = True
            while changed:  # least fixed point: an effect must come from some node
                changed = False
                for gv, fn in self.mod.functions.items():
                    if not self.globals[gv] and self.flags(fn.body)[fn.body]:
                        self.globals[gv] = changed = True

    def flags(self, root: Expr) -> dict:
        if not self.any:
            return _AllFalse()
        out: dict = {}
        for n in post_order(root):
            out[n] = self._node(n, out)
        return out

    def of(self, expr: Expr) -> bool:
        return self.any and self.flags(expr)[expr]

    def _node(self, n, out) -> bool:  # noqa: C901  (one case per node kind)
        t = type(n)
        if t in _LEAVES or t is Function:
            return False  # making a closure has no effect; calling it may
        if isinstance(n, self.kinds):
            return True
        if t is Call:
            if any(out[a] for a in n.args):
                return True
            callee = n.op
            if isinstance(callee, (Op, Constructor)):
                return False
            if out[callee]:  # computing the callee itself (``%f(%x)(%y)``)
                return True
            if type(callee) is GlobalVar:
                return self.globals.get(callee, True)
            if type(callee) is Function:
                return out[callee.body]
            return True  # an unknown closure, in a module that has effects somewhere
        if t is Let:
            return out[n.value] or out[n.body]
        if t is If:
            return out[n.cond] or out[n.true_branch] or out[n.false_branch]
        if t is Match:
            return out[n.data] or any(out[c.rhs] for c in n.clauses)
        return any(out[c] for c in expr_children(n))


class _AllFalse(dict):
    def __missing__(self, key):
        return False


def copy_types(memo: dict) -> bool:
    """After a mutator ran: a rebuilt node gets the type of the node it replaces.

    Returns whether every result is typed (else the caller must run inference).
    """
    complete = True
    for old, new in memo.items():
        if new is not old and not new.has_type:
            if old.has_type:
                new.set_checked_type(old.checked_type)
            elif type(new) is not Op:
                complete = False
    return complete


def finish(mod: IRModule, typed: bool) -> IRModule:
    """The pass's result: inferred unless every new node already carries its type."""
    return mod if typed else infer_module(mod)


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector: a pass allocates many small acyclic objects,
    and a collection triggered every few hundred of them costs about a third of its time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def typed_input(mod: IRModule) -> IRModule:
    """The input with checked types (inferred on a copy when some are missing)."""
    if all(fn.has_type and fn.body.has_type for fn in mod.functions.values()):
        return mod
    return infer_module(mod.copy())


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


class _Sweep(ExprMutator):
    def __init__(self, live, uses, writes, moves, inline_once):
        super().__init__()
        self.live, self.uses, self.writes, self.moves = live, uses, writes, moves
        self.inline_once = inline_once
        self.sub: dict = {}

    def visit_var(self, v):
        return self.sub.get(v, v)

    def visit_let(self, let):
        chain = []
        e = let
        while isinstance(e, Let) and e not in self.memo:
            var, value = e.var, e.value
            if var not in self.live and not self.writes[value]:
                chain.append((e, None))  # dead and pure: dropped, value never visited
            elif (self.inline_once and self.uses.get(var) == 1 and not self.moves[value]
                  and not (type(value) is Function and var in free_vars(value))):
                self.sub[var] = self.visit(value)
                chain.append((e, None))
            else:
                chain.append((e, self.visit(value)))
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
    mod = typed_input(mod)
    nodes = {gv: unique_nodes([fn]) for gv, fn in mod.functions.items()}
    present = frozenset().union(*(ref_kinds(ns) for ns in nodes.values()))
    writes, moves = Effects(mod, WRITES, present=present), Effects(mod, REFS, present=present)
    functions = {}
    typed = True
    for gv, fn in mod.functions.items():
        if fn.is_primitive:
            functions[gv] = fn
            continue
        new, ok = _dce(fn, nodes[gv], writes, moves, inline_once)
        functions[gv] = new
        typed &= ok
    return finish(mod.with_functions(functions), typed)


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

__all__ = ["DeadCodeElimination", "eliminate_dead_code", "Effects", "WRITES", "REFS",
           "children", "unique_nodes", "ref_kinds", "copy_types", "finish", "typed_input",
           "gc_paused"]
