"""Relay's ``InferType`` also writes the inferred types into the program: a function
without a return type gets one, a variable without an annotation gets its type
(``update_missing_type_annotation`` in Relay's type checker). relayir's ``InferType``
only attaches checked types. ``fill_missing_annotations`` does the rest, so programs
compare structurally as they do in Relay after ``InferType``."""

from __future__ import annotations

from ...ir.expr import Function, Var
from ...ir.functor import ExprMutator
from ...ir.module import IRModule
from ...ir.types import FuncType, IncompleteType, Type


def _known(ty) -> bool:
    return isinstance(ty, Type) and not isinstance(ty, IncompleteType)


class _Annotator(ExprMutator):
    def visit_var(self, v: Var) -> Var:
        if v.type_annotation is not None or not v.has_type or not _known(v.checked_type):
            return v
        new = Var(v.name_hint, v.checked_type)
        new.set_checked_type(v.checked_type)
        return new

    def visit_function(self, fn: Function) -> Function:
        new = self.visit_children(fn)
        if new.ret_type is None and fn.has_type and isinstance(fn.checked_type, FuncType):
            new = Function(new.params, new.body, fn.checked_type.ret_type, new.type_params,
                           new.attrs)
        return new


def fill_missing_annotations(mod: IRModule) -> tuple[IRModule, bool]:
    """``(module, changed)``: every function of the typed ``mod`` with its return type
    and its variables' types written in."""
    functions, changed = {}, False
    for gv, fn in mod.functions.items():
        new = _Annotator().visit(fn)
        changed = changed or new is not fn
        functions[gv] = new
    return (mod.with_functions(functions) if changed else mod), changed


__all__ = ["fill_missing_annotations"]
