"""``ToANormalForm``: bind every non-atomic sub-expression with ``let``, scope-aware.

As TVM's ``to_a_normal_form.cc``: a scope tree is built (a function body, each ``if``
branch and each ``match`` clause opens a scope; a ``let`` does not: its bindings land
in the enclosing scope's list, which flattens nested lets), every node is placed in the
lowest common ancestor of the scopes of its uses, and each scope's bindings become the
let chain in front of its result. So a node shared by both branches of an ``if`` is
bound once before the ``if``; a node used only in one branch, a function body or a
clause stays inside it. Bindings follow evaluation order (callee, then arguments left
to right; ``let`` value before body), the interpreter's order, so effects keep theirs.

Atoms (never bound): variables, global variables, operators, constructors and constants
(``IsAtomic`` in Relay; TVM also binds constants, which only adds noise). Everything
else is bound, the result of every scope included, so a scope always ends in an atom.
Primitive functions (``Primitive=1``) are bound as values but their bodies are left in
graph form: they are compiled as one unit. Globals for an external compiler
(``Compiler=...``) are left alone, as in TVM.

One case has no single binding point: a node that uses a recursive let-bound function
``%f`` and is shared by ``%f``'s own body and the code after the let (``%f`` is not
bound yet inside its value). Such nodes are copied first, one copy per side.

Every new node takes its checked type from the node it stands for, so the result is
typed without running inference again. Everything is iterative: the scope analysis
walks the graph in Kahn's order and the filling runs on an explicit stack.
"""

from __future__ import annotations

from ..ir._util import gc_paused
from ..ir.analysis import free_vars
from ..ir.expr import Expr, Function, Let, Var
from ..ir.functor import ExprMutator, post_order
from ..ir.module import IRModule
from ..ir.node_table import BINDER, INPUT, LEAVES, NODES
from .analysis import copy_types, typed_module
from .blocks import Block, common_block, wrap_bindings
from .pass_infra import Pass, module_pass, register_pass

ATOMS = tuple(cls for cls in NODES if cls in LEAVES)  # for isinstance; ``type(n) in LEAVES``


def _scope_uses(n: Expr) -> tuple[tuple, tuple | None]:
    """The sub-expressions a node's scope analysis looks at (no binders), and their
    roles in the node table (None: all are inputs)."""
    t = type(n)
    if t is Let:  # the common scope node first: value and body are inputs
        return (n.value, n.body), None
    kind = NODES[t]
    if kind.dataflow:
        return kind.children(n), None
    roles = kind.roles(n)
    if roles is None or BINDER not in roles:
        return kind.children(n), roles
    if t is Function and n.is_primitive:
        return (), None  # a primitive body is compiled as a unit
    uses = [(c, r) for c, r in zip(kind.children(n), roles) if r != BINDER]
    return tuple(c for c, _ in uses), tuple(r for _, r in uses)


def _count_uses(root: Expr) -> tuple[dict, list]:
    """In-degree of every non-atomic node (edges counted with multiplicity) and the lets
    whose value is a (non-primitive) function: candidates for recursion."""
    indeg: dict = {root: 0}
    fn_lets: list = []
    stack = [root]
    while stack:
        n = stack.pop()
        if type(n) is Let and type(n.value) is Function and not n.value.is_primitive:
            fn_lets.append(n)
        for c in _scope_uses(n)[0]:
            if type(c) in LEAVES:
                continue
            d = indeg.get(c)
            if d is None:
                indeg[c] = 1
                stack.append(c)
            else:
                indeg[c] = d + 1
    return indeg, fn_lets


def _analyse_scopes(root: Expr, indeg: dict, top: Block) -> tuple[dict, dict]:
    """Each non-atomic node's scope (LCA of its uses) and each sub-scope, by (node, index).

    Nodes are taken parents first (Kahn's order over ``indeg``), so a node's scope is
    final when its children are given theirs.
    """
    scope: dict = {root: top}
    sub: dict = {}
    ready = [root]
    while ready:
        node = ready.pop()
        s = scope[node]
        cs, roles = _scope_uses(node)
        if roles is not None:  # an if's branches, a function's body, a match's clauses
            for k in range(max(roles, default=INPUT) + 1):
                sub[node, k] = Block(s)
        for i, c in enumerate(cs):
            if type(c) in LEAVES:
                continue
            c_scope = s if roles is None or roles[i] == INPUT else sub[node, roles[i]]
            old = scope.get(c)
            scope[c] = c_scope if old is None or old is c_scope else common_block(old, c_scope)
            d = indeg[c] - 1
            indeg[c] = d
            if d == 0:
                ready.append(c)
    return scope, sub


_VISIT, _BIND, _POST = 0, 1, 2


def _typed(new: Expr, like: Expr) -> Expr:
    if like.has_type:
        new.set_checked_type(like.checked_type)
    return new


class _Filler:
    def __init__(self, scope: dict, sub: dict):
        self.scope = scope
        self.sub = sub
        self.res: dict = {}
        self.pref: dict = {}  # a let's value is bound to the let's own variable

    def run(self, root: Expr) -> Expr:
        res, pref, scope = self.res, self.pref, self.scope
        stack: list = [(_VISIT, root)]
        while stack:
            action, n = stack.pop()
            if action == _VISIT:
                if n in res:
                    continue
                t = type(n)
                if t in LEAVES:
                    res[n] = n
                elif t is Let:
                    v = n.value
                    while type(v) is Let and v not in res:  # let %a = (let %b = ..; e)
                        v = v.body
                    if v not in res and type(v) not in LEAVES and type(v) is not Let \
                            and v not in pref:
                        pref[v] = n.var
                    v = n.value
                    stack += ((_POST, n), (_VISIT, n.body), (_BIND, n), (_VISIT, v))
                else:  # a dataflow node, an if, a function, a match
                    stack.append((_POST, n))
                    for c in reversed(_scope_uses(n)[0]):
                        if c not in res:
                            stack.append((_VISIT, c))
            elif action == _BIND:
                value = res[n.value]
                if value is not n.var:
                    scope[n].bindings.append((n.var, value))
                    if not n.var.has_type and value.has_type:
                        n.var.set_checked_type(value.checked_type)
            else:
                if type(n) is Let:
                    res[n] = res[n.body]
                    continue
                new = self._rebuild(n)
                if new is not n:
                    _typed(new, n)
                var = pref.pop(n, None)
                if var is None:
                    var = _typed(Var("x"), n)
                scope[n].bindings.append((var, new))
                res[n] = var
        return res[root]

    def _rebuild(self, n: Expr) -> Expr:
        """``n`` around its converted children; each block's bindings wrap its result."""
        if type(n) is Function and n.is_primitive:
            return n
        res, sub = self.res, self.sub
        kind = NODES[type(n)]
        if kind.dataflow:
            return kind.rebuild(n, [res[c] for c in kind.children(n)])
        roles = kind.roles(n)
        return kind.rebuild(n, [
            c if r == BINDER else res[c] if r == INPUT else wrap_bindings(sub[n, r], res[c])
            for c, r in zip(kind.children(n), roles)])


class _Untangle(ExprMutator):
    """Copy, inside a recursive function's value, the nodes that depend on its variable.

    ``let %f = fn (...) { ... %k ... }; (%k, ...)`` where ``%k = %f(2)`` is shared by the
    body and the code after the let: the two uses are different computations (one per
    activation, one outside), and no single binding point can serve both, because
    ``%f`` is not bound yet inside its own value. Each side gets its own node.
    """

    def __init__(self, deps: set):
        super().__init__()
        self.deps = deps

    def _copy_if_dependent(self, old, new):
        return _shallow_copy(old) if new is old and id(old) in self.deps else new

    def visit_call(self, e):
        return self._copy_if_dependent(e, super().visit_call(e))

    def visit_tuple(self, e):
        return self._copy_if_dependent(e, super().visit_tuple(e))

    def visit_tuple_getitem(self, e):
        return self._copy_if_dependent(e, super().visit_tuple_getitem(e))

    def visit_if(self, e):
        return self._copy_if_dependent(e, super().visit_if(e))

    def visit_ref_create(self, e):
        return self._copy_if_dependent(e, super().visit_ref_create(e))

    def visit_ref_read(self, e):
        return self._copy_if_dependent(e, super().visit_ref_read(e))

    def visit_ref_write(self, e):
        return self._copy_if_dependent(e, super().visit_ref_write(e))


def _shallow_copy(e: Expr) -> Expr:
    kind = NODES[type(e)]
    return _typed(kind.make(e, kind.children(e)), e)


def _untangle_recursive_lets(root: Expr, fn_lets: list) -> Expr:
    rec = [let for let in fn_lets if let.var in free_vars(let.value)]
    if not rec:
        return root
    values = {}
    for let in rec:
        deps: set[int] = set()
        for n in post_order(let.value):
            if any(c is let.var or id(c) in deps for c in NODES[type(n)].children(n)):
                deps.add(id(n))
        u = _Untangle(deps)
        values[let] = u.visit(let.value)
        copy_types(u.memo)

    class _Replace(ExprMutator):
        def visit_let(self, let_):
            chain, e = [], let_
            while isinstance(e, Let) and e not in self.memo:
                v = values.get(e)
                chain.append((e, e.var, self.visit(v if v is not None else e.value)))
                e = e.body
            return self.rebuild_lets(chain, self.visit(e))

        def new_let(self, old, var, value, body):
            return _typed(super().new_let(old, var, value, body), old)

    r = _Replace()
    out = r.visit(root)
    copy_types(r.memo)
    return out


def to_a_normal_form_expr(expr: Expr) -> Expr:
    """A-normal form of one expression; a function keeps its shape, its body is converted."""
    if type(expr) is Function:
        if expr.is_primitive or "Compiler" in expr.attrs:  # compiled elsewhere, as in TVM
            return expr
        new = Function(expr.params, _convert(expr.body), expr.ret_type, expr.type_params,
                       expr.attrs).with_span(expr.span)
        return _typed(new, expr)
    return _convert(expr)


def _convert(expr: Expr) -> Expr:
    indeg, fn_lets = _count_uses(expr)
    if fn_lets:
        untangled = _untangle_recursive_lets(expr, fn_lets)
        if untangled is not expr:
            expr = untangled
            indeg, _ = _count_uses(expr)
    top = Block(None)
    scope, sub = _analyse_scopes(expr, indeg, top)
    result = _Filler(scope, sub).run(expr)
    return wrap_bindings(top, result)


def _anf_module(mod: IRModule, ctx) -> IRModule:
    mod = typed_module(mod)
    with gc_paused():
        functions = {gv: to_a_normal_form_expr(fn) for gv, fn in mod.functions.items()}
    return mod.with_functions(functions)  # every new node took its type from the old one


_anf_pass = module_pass(_anf_module, opt_level=1, name="ToANormalForm")


def ToANormalForm() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``ToANormalForm``: every non-atomic sub-expression bound by ``let``."""
    return _anf_pass


register_pass("ToANormalForm", ToANormalForm)

__all__ = ["ToANormalForm", "to_a_normal_form_expr", "ATOMS"]
