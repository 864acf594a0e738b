"""``relay.transform.EtaExpand``: a global function or a constructor used as a value (not
called) becomes a function that calls it, ``@f`` -> ``fn (%x) { @f(%x) }``, as Relay's
pass does before defunctionalisation. The new parameters take the types of the global's
parameters (or of the constructor's fields), and its type parameters."""

from __future__ import annotations

from ...ir.adt import Constructor
from ...ir.expr import Call, Function, GlobalVar, Var
from ...ir.functor import ExprMutator
from ...ir.types import TypeCall


class _Expander(ExprMutator):
    def __init__(self, mod, globals_too: bool, constructors_too: bool):
        super().__init__()
        self.mod = mod
        self.globals_too, self.constructors_too = globals_too, constructors_too

    def visit_call(self, call):
        if not isinstance(call.op, (GlobalVar, Constructor)):
            return super().visit_call(call)
        args = [self.visit(a) for a in call.args]  # the callee stays a callee
        if all(a is b for a, b in zip(args, call.args)):
            return call
        return Call(call.op, args, call.attrs, call.type_args).with_span(call.span)

    def visit_global_var(self, gv):
        if not (self.globals_too and gv.name_hint in self.mod):
            return gv
        fn = self.mod[gv.name_hint]
        params = [Var(p.name_hint, p.type_annotation or p.checked_type) for p in fn.params]
        return Function(params, Call(gv, params), fn.ret_type, fn.type_params)

    def visit_constructor(self, ctor):
        if not self.constructors_too:
            return ctor
        data = self.mod.type_definitions[ctor.belong_to]
        params = [Var(f"x{i}", ty) for i, ty in enumerate(ctor.inputs)]
        ret = TypeCall(ctor.belong_to, data.type_vars) if data.type_vars else ctor.belong_to
        return Function(params, Call(ctor, params), ret, data.type_vars)


def eta_expand(mod, expand_constructor: bool = False, expand_global_var: bool = False):
    """``mod`` with every function's uncalled globals / constructors expanded."""
    expander = _Expander(mod, expand_global_var, expand_constructor)
    return mod.with_functions({gv: expander.visit(fn) for gv, fn in mod.functions.items()})


__all__ = ["eta_expand"]
