"""``LambdaLift``: closure conversion; every local function literal becomes a global.

As TVM's ``lambda_lift.cc`` (the VM needs it: it only calls globals and closures):

- a function with no free variables becomes ``@lifted_name_N`` and the literal is
  replaced by the global variable;
- a function that captures variables ``%a, %b`` becomes
  ``def @lifted_name_N(%a, %b) { fn (params) { body } }`` whose inner function is marked
  ``Closure=1``, and the literal is replaced by the call ``@lifted_name_N(%a, %b)``,
  which allocates the closure. The captured variables are fresh parameters annotated
  with their checked types, so the lifted global type-checks on its own;
- a let-bound function that calls itself (``let %f = fn (...) { ... %f(...) }``) refers
  to itself through the global: ``%f`` inside the body becomes ``@lifted_name_N`` (or
  ``@lifted_name_N(captured)``);
- a function mentioning type variables of an enclosing polymorphic function gets them
  as its own type parameters (and, to type-check before its call sites are seen, a
  declared return type); it is lifted in the closure form even without captures;
- primitive functions (``Primitive=1``) and external ones (``Compiler``) stay.

Globals are converted in place; a global whose body is already a ``Closure=1``
function (an earlier lift) keeps that function, so the pass is idempotent.
"""

from __future__ import annotations

from ..ir._util import gc_paused
from ..ir.analysis import free_type_vars, free_vars
from ..ir.expr import Call, Expr, Function, GlobalVar, Let, Var
from ..ir.functor import ExprMutator, post_order
from ..ir.module import IRModule
from ..ir.types import FuncType, IncompleteType, RefType, TupleType, Type, TypeCall
from .analysis import copy_types, finish, typed_module, with_type
from .pass_infra import Pass, module_pass, register_pass


def _complete(ty: Type | None) -> bool:
    stack = [ty]
    while stack:
        t = stack.pop()
        if t is None or isinstance(t, IncompleteType):
            return False
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, FuncType):
            stack.extend(t.arg_types)
            stack.append(t.ret_type)
        elif isinstance(t, TypeCall):
            stack.extend(t.args)
        elif isinstance(t, RefType):
            stack.append(t.value)
    return True


def _known_type(e: Expr) -> Type | None:
    ty = e.checked_type if e.has_type else None
    return ty if _complete(ty) else None


def _skipped(fn: Function) -> bool:
    return fn.is_primitive or "Compiler" in fn.attrs


def _free_type_vars(fn: Function, captured: list[Var], order: tuple) -> list:
    types = [_known_type(fn)] + [_known_type(v) for v in captured]
    bound: set = set()
    for n in post_order(fn):
        if type(n) is Var:
            types.append(n.type_annotation)
        elif type(n) is Function:
            types.append(n.ret_type)
            bound.update(n.type_params)
        elif type(n) is Call:
            types.extend(n.type_args)
    out: dict = {}
    for t in types:
        if t is not None:
            for tv in free_type_vars(t):
                if tv not in bound:
                    out.setdefault(tv, None)
    rank = {tv: i for i, tv in enumerate(order)}  # the enclosing global's order first
    return sorted(out, key=lambda tv: rank.get(tv, len(rank)))


class _Lifter:
    def __init__(self, mod: IRModule):
        self.mod = mod
        self.lifted: dict[GlobalVar, Function] = {}
        self.counter = 0
        self.typed = True  # every node made so far carries its checked type
        self.type_order: tuple = ()  # type parameters of the global being converted

    def fresh_global(self) -> GlobalVar:
        while True:
            name = f"lifted_name_{self.counter}"
            self.counter += 1
            if name not in self.mod:
                return GlobalVar(name)

    def lift(self, fn: Function, let_var: Var | None, outer: _LiftMutator) -> Expr:
        fvs = free_vars(fn)
        recursive = let_var is not None and let_var in fvs
        captured = [v for v in fvs if v is not let_var]
        ftv = _free_type_vars(fn, captured, self.type_order)
        gv = self.fresh_global()
        fresh = [Var(v.name_hint, _known_type(v)) for v in captured]
        sub: dict = dict(zip(captured, fresh))
        closure_form = bool(captured or ftv)
        # types of the new nodes, from the old ones (no inference over the module)
        fn_ty = fn.checked_type if fn.has_type else None
        cap_tys = [v.checked_type if v.has_type else None for v in captured]
        typed = fn_ty is not None and all(t is not None for t in cap_tys)
        gv_ty = FuncType(cap_tys, fn_ty, ftv) if closure_form and typed else fn_ty
        if typed:
            gv.set_checked_type(gv_ty)
            for v, t in zip(fresh, cap_tys):
                v.set_checked_type(t)
        if recursive:
            sub[let_var] = with_type(Call(gv, tuple(fresh)), fn_ty) if closure_form else gv
        mutator = _LiftMutator(self, sub)
        body = mutator.visit(fn.body)
        self.typed &= typed and copy_types(mutator.memo)
        if closure_form:
            attrs = dict(fn.attrs)
            attrs["Closure"] = 1
            inner = Function(fn.params, body, fn.ret_type, fn.type_params, attrs).with_span(fn.span)
            with_type(inner, fn_ty)
            ret = _known_type(fn) if ftv else None
            lifted = Function(fresh, inner, ret, ftv).with_span(fn.span)
        else:
            lifted = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs).with_span(
                fn.span)
        self.lifted[gv] = with_type(lifted, gv_ty)
        if closure_form:
            return with_type(Call(gv, tuple(outer.visit(v) for v in captured)), fn_ty)
        return gv


class _LiftMutator(ExprMutator):
    def __init__(self, lifter: _Lifter, sub: dict):
        super().__init__()
        self.lifter = lifter
        self.sub = sub

    def visit_var(self, v):
        return self.sub.get(v, v)

    def visit_function(self, fn):
        return fn if _skipped(fn) else self.lifter.lift(fn, None, self)

    def visit_let(self, let):
        chain = []
        e = let
        while isinstance(e, Let) and e not in self.memo:
            value = e.value
            if type(value) is Function and not _skipped(value) and value not in self.memo:
                new_value = self.memo[value] = self.lifter.lift(value, e.var, self)
            else:
                new_value = self.visit(value)
            chain.append((e, self.visit(e.var), new_value))
            e = e.body
        return self.rebuild_lets(chain, self.visit(e))


def _convert_global(lifter: _Lifter, fn: Function) -> Function:
    lifter.type_order = fn.type_params
    body = fn.body
    closure = type(body) is Function and body.attrs.get("Closure")  # lifted before
    mutator = _LiftMutator(lifter, {})
    new_body = mutator.visit(body.body if closure else body)
    lifter.typed &= copy_types(mutator.memo)
    if closure and new_body is not body.body:
        new_body = Function(body.params, new_body, body.ret_type, body.type_params,
                            body.attrs).with_span(body.span)
        with_type(new_body, body.checked_type if body.has_type else None)
    elif closure:
        new_body = body
    if new_body is body:
        return fn
    new = Function(fn.params, new_body, fn.ret_type, fn.type_params, fn.attrs).with_span(fn.span)
    return with_type(new, fn.checked_type if fn.has_type else None)


@module_pass(opt_level=0, name="LambdaLift")
def _lambda_lift(mod: IRModule, ctx) -> IRModule:
    mod = typed_module(mod)
    lifter = _Lifter(mod)
    with gc_paused():
        functions = {gv: fn if _skipped(fn) else _convert_global(lifter, fn)
                     for gv, fn in mod.functions.items()}
    functions.update(lifter.lifted)
    new = mod.with_functions(functions)
    return finish(new, lifter.typed)


def LambdaLift() -> Pass:  # noqa: N802  (Relay's name)
    """Relay's ``LambdaLift``: lift every local function to a global (closure conversion)."""
    return _lambda_lift


register_pass("LambdaLift", LambdaLift)

__all__ = ["LambdaLift"]
