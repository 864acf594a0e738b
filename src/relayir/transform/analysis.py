"""What the passes share: effect analysis, a fast node scan, and type carry-over.

Effects. Operator calls are pure (no registered op is stateful), so only references
have effects. Two questions are asked of a value:

- *may it write?* (``WRITES``): a ``ref_write`` it evaluates, or a call of a function
  that may write. Dropping a value is safe unless it may write: creating or reading a
  reference nobody looks at is unobservable (``DeadCodeElimination``).
- *may it touch references at all?* (``REFS``): also ``ref_create``/``ref_read``.
  Moving a value (inlining it at its use, possibly into another scope or past a write)
  is safe only if it touches no reference: a moved ``ref_create`` would make a new cell
  per evaluation, a moved ``ref_read`` could read after a write (``inline_once``,
  ``ToGraphNormalForm``, ``Inline``).

Evaluating a function literal has no effect; calling it has its body's effects. A call
of a global has the global's effects (a least fixed point over the module, so recursion
is fine); a call of any other function value (a parameter, a let-bound closure, a call
result) is assumed effectful, unless the module and the expression contain no reference
node of the kind asked about, which is the common case and makes every program without
references pure at no cost. Non-termination is not an effect, as in TVM.

Types. Nodes are immutable and their checked types are facts about them, so a pass
that rebuilds a node around rewritten children gives the new node the old node's type
(``keep_type``, ``TypedMutator`` while visiting, ``copy_types`` afterwards) and runs
inference only when something new stayed untyped (``finish``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir.adt import Constructor
from ..ir.expr import (
    Call,
    Expr,
    Function,
    GlobalVar,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
)
from ..ir.functor import ExprMutator, post_order
from ..ir.module import IRModule
from ..ir.node_table import LEAVES, NODES, children
from ..ir.types import Type
from ..typing.infer import infer_module

WRITES = (RefWrite,)
REFS = (RefCreate, RefRead, RefWrite)

_REF_KINDS = frozenset(REFS)

# ---------------------------------------------------------------- scanning


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
    nodes = NODES
    while stack:
        n = stack.pop()
        for c in nodes[type(n)].children(n):
            if c not in seen:
                seen.add(c)
                out.append(c)
                stack.append(c)
    return out


def calls_any_op(mod, names) -> bool:
    """Whether a function of ``mod`` calls one of the ops ``names``: lets a pass that
    rewrites a few ops return a module that has none untouched, without a rebuild."""
    return any(type(e) is Call and type(e.op) is Op and e.op.name in names
               for f in mod.functions.values() for e in unique_nodes([f]))


def ref_kinds(nodes) -> frozenset:
    """Which reference node kinds occur among ``nodes``."""
    return frozenset(t for t in {type(n) for n in nodes} if t in _REF_KINDS)


# ---------------------------------------------------------------- effects


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

    def _node(self, n, out) -> bool:
        t = type(n)
        if t in LEAVES or t is Function:
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
        return any(out[c] for c in NODES[t].children(n))  # a let, an if, a match, ...


class _AllFalse(dict):
    def __missing__(self, key):
        return False


# ---------------------------------------------------------------- types


def with_type(node: Expr, ty: Type | None) -> Expr:
    """``node``, given the checked type ``ty`` (left as it is when ``ty`` is None)."""
    if ty is not None:
        node.set_checked_type(ty)
    return node


def keep_type(old: Expr, new: Expr) -> Expr:
    """``new``, which replaces ``old``: an untyped rebuilt node gets ``old``'s type."""
    if new is not old and not new.has_type and old.has_type:
        new.set_checked_type(old.checked_type)
    return new


class TypedMutator(ExprMutator):
    """An ``ExprMutator`` whose rebuilt nodes keep the checked types of the originals,
    so that later visits (and rewrite rules) can read them without re-inference."""

    def visit_call(self, call):
        return keep_type(call, super().visit_call(call))

    def visit_tuple(self, t):
        return keep_type(t, super().visit_tuple(t))

    def visit_tuple_getitem(self, t):
        return keep_type(t, super().visit_tuple_getitem(t))

    def visit_if(self, e):
        return keep_type(e, super().visit_if(e))

    def visit_function(self, fn):
        return keep_type(fn, super().visit_function(fn))

    def visit_match(self, m):
        return keep_type(m, super().visit_match(m))

    def visit_ref_create(self, r):
        return keep_type(r, super().visit_ref_create(r))

    def visit_ref_read(self, r):
        return keep_type(r, super().visit_ref_read(r))

    def visit_ref_write(self, r):
        return keep_type(r, super().visit_ref_write(r))

    def new_let(self, old, var, value, body):
        return keep_type(old, super().new_let(old, var, value, body))


class LetSubstitution(ExprMutator):
    """A mutator that drops ``let`` bindings, substituting for their variables.

    ``binding(let)`` says, for each ``let`` of a chain (outermost first), the new value
    to keep it with, or None to drop it after recording in ``sub`` what its variable
    stands for (if it is used at all).
    """

    def __init__(self):
        super().__init__()
        self.sub: dict = {}

    def visit_var(self, v):
        return self.sub.get(v, v)

    def visit_let(self, let):
        chain = []
        e = let
        while isinstance(e, Let) and e not in self.memo:
            chain.append((e, e.var, self.binding(e)))
            e = e.body
        return self.rebuild_lets(chain, self.visit(e))

    def binding(self, let: Let) -> Expr | None:
        return self.visit(let.value)


def copy_types(memo: dict) -> bool:
    """After a mutator ran: a rebuilt node gets the type of the node it replaces.

    Returns whether every result is typed (else the caller must run inference).
    """
    complete = True
    for old, new in memo.items():
        if new is not old and not keep_type(old, new).has_type and type(new) is not Op:
            complete = False
    return complete


def typed_module(mod: IRModule) -> IRModule:
    """``mod`` if every global function carries its checked type, else a type-checked copy.

    Nodes are immutable, so a typed function's whole body is typed: checking the roots
    is enough, and a pipeline of type-keeping passes never re-infers the module.
    """
    if all(fn.has_type and fn.body.has_type for fn in mod.functions.values()):
        return mod
    return infer_module(mod.copy())


def finish(mod: IRModule, typed: bool) -> IRModule:
    """A pass's result: inferred unless every new node already carries its type."""
    return mod if typed else infer_module(mod)


def map_functions(mod: IRModule, rewrite: Callable[[GlobalVar, Function], tuple],
                  skip: Callable[[GlobalVar, Function], bool] | None = None) -> IRModule:
    """A pass over every global function but the primitive ones (and those ``skip``
    names): ``rewrite(gv, fn)`` gives ``(new_fn, typed)``; the new module is inferred
    unless every function came back typed."""
    functions = {}
    typed = True
    for gv, fn in mod.functions.items():
        if fn.is_primitive or (skip is not None and skip(gv, fn)):
            functions[gv] = fn
            continue
        functions[gv], ok = rewrite(gv, fn)
        typed &= ok
    return finish(mod.with_functions(functions), typed)


__all__ = ["Effects", "LetSubstitution", "REFS", "TypedMutator", "WRITES", "children",
           "copy_types", "finish", "keep_type", "map_functions", "ref_kinds", "typed_module",
           "unique_nodes", "with_type"]
