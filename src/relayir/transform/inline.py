"""``Inline``: replace calls of globals marked ``Inline=1`` by their bodies.

As TVM's ``inline.cc``: a global is inlined at every call site when it carries a
nonzero ``Inline`` attribute, unless it is recursive (directly or through other
globals: it sits on a cycle of the call graph), primitive, or handed to an external
compiler (``Compiler``). Calls inside inlined bodies are inlined too (callees first).
Afterwards a marked global that nothing mentions any more is dropped; ``@main`` is kept.

Each inlining is a fresh copy: variables bound inside the body get new variables, so
inlining twice into one function keeps every variable bound once. Arguments are
substituted for the parameters, as Relay's ``Bind`` does, when that cannot change what
the program observes (atoms, or any argument when the module has no references);
otherwise the argument is bound first (``let %p = arg; body``), which keeps the
call-by-value order of effects. Polymorphic globals (with type parameters) are not
inlined: their bodies mention type variables the call site does not bind.
"""

from __future__ import annotations

from ..ir._util import gc_paused
from ..ir.expr import Expr, Function, GlobalVar, Let, Var
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..ir.node_table import NODES
from .analysis import REFS, Effects, copy_types, finish, ref_kinds, typed_module, unique_nodes
from .pass_infra import Pass, module_pass, register_pass
from .remove_unused_functions import global_refs
from .to_a_normal_form import ATOMS


def cyclic_globals(refs: dict[GlobalVar, list[GlobalVar]]) -> set[GlobalVar]:
    """Globals on a cycle of the call graph (Tarjan's SCCs, iteratively)."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    out: set = set()
    counter = 0
    for root in refs:
        if root in index:
            continue
        work = [(root, iter(refs[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(refs.get(w, ()))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w is v or w == v:
                        break
                if len(scc) > 1 or v in refs.get(v, ()):
                    out.update(scc)
    return out


class _Rename(ExprMutator):
    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def visit_var(self, v):
        return self.mapping.get(v, v)


class _Inliner(ExprMutator):
    def __init__(self, state: _State):
        super().__init__()
        self.state = state

    def visit_call(self, call):
        new = super().visit_call(call)
        gv = new.op
        if type(gv) is GlobalVar and gv in self.state.inlinable:
            fn = self.state.expanded(gv)
            if len(fn.params) == len(new.args):
                return self.state.instantiate(fn, new.args)
        return new


class _State:
    def __init__(self, mod: IRModule):
        self.mod = mod
        nodes = {gv: unique_nodes([fn]) for gv, fn in mod.functions.items()}
        refs = global_refs(mod, nodes)
        cyclic = cyclic_globals(refs)
        self.inlinable = {
            gv for gv, fn in mod.functions.items()
            if fn.attrs.get("Inline") and not fn.is_primitive and "Compiler" not in fn.attrs
            and not fn.type_params and gv not in cyclic
        }
        present = frozenset().union(*map(ref_kinds, nodes.values()))
        self.pure = not Effects(mod, REFS, present=present).any
        self._expanded: dict[GlobalVar, Function] = {}
        self.typed = True  # every node made so far carries its checked type

    def expanded(self, gv: GlobalVar) -> Function:
        """``gv``'s function with its own inlinable calls inlined (done once)."""
        fn = self._expanded.get(gv)
        if fn is None:
            fn = self.mod[gv]
            if not fn.is_primitive:
                inliner = _Inliner(self)
                fn = inliner.visit(fn)
                self.typed &= copy_types(inliner.memo)
            self._expanded[gv] = fn
        return fn

    def instantiate(self, fn: Function, args) -> Expr:
        mapping: dict = {}
        lets = []
        for p, a in zip(fn.params, args):
            if self.pure or isinstance(a, ATOMS):
                mapping[p] = a
            else:
                v = Var(p.name_hint, p.type_annotation)
                mapping[p] = v
                lets.append((v, a))
        for v in _binders(fn.body):
            mapping[v] = Var(v.name_hint, v.type_annotation)
        rename = _Rename(mapping)
        body = rename.visit(fn.body)
        self.typed &= copy_types(rename.memo)  # a copy has the types of the original
        for v, a in reversed(lets):
            body = Let(v, a, body)
            if a.has_type and body.body.has_type:
                v.set_checked_type(a.checked_type)
                body.set_checked_type(body.body.checked_type)
            else:
                self.typed = False
        return body


@module_pass(opt_level=1, name="Inline")
def _inline(mod: IRModule, ctx) -> IRModule:
    mod = typed_module(mod)
    state = _State(mod)
    if not state.inlinable:
        return mod.with_functions(dict(mod.functions))
    with gc_paused():
        functions = {gv: state.expanded(gv) for gv in mod.functions}
    refs = global_refs(mod.with_functions(functions))
    while True:  # drop marked globals nothing mentions any more
        used = {g for gv, targets in refs.items() for g in targets if g != gv}
        dead = [gv for gv in refs if gv in state.inlinable and gv not in used
                and gv.name_hint != "main"]
        if not dead:
            break
        for gv in dead:
            del refs[gv]
    return finish(mod.with_functions({gv: functions[gv] for gv in refs}), state.typed)


def _binders(expr: Expr) -> list[Var]:
    """Variables bound inside ``expr``: let variables, parameters, pattern variables."""
    out: dict = {}
    for n in unique_nodes([expr]):
        out.update(dict.fromkeys(NODES[type(n)].binders(n)))
    return list(out)


def Inline() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``Inline``: inline globals marked ``Inline=1`` and drop them when unused."""
    return _inline


register_pass("Inline", Inline)

__all__ = ["Inline", "cyclic_globals"]
