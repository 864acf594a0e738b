"""Binding: substitute expressions for variables; bind parameters as constants."""

from __future__ import annotations

from ..errors import Error
from ..ir.expr import Expr, Function, Var
from ..ir.functor import ExprMutator
from ..ir.module import IRModule


class _Substitute(ExprMutator):
    def __init__(self, mapping: dict[Var, Expr]):
        super().__init__()
        self.mapping = mapping

    def visit_var(self, v):
        return self.mapping.get(v, v)


def bind(expr: Expr, mapping: dict[Var, Expr]) -> Expr:
    """Replace variables by expressions; a function loses the parameters that were bound."""
    if isinstance(expr, Function):
        params = [p for p in expr.params if p not in mapping]
        body = _Substitute(mapping).visit(expr.body)
        return Function(params, body, expr.ret_type, expr.type_params, expr.attrs)
    return _Substitute(mapping).visit(expr)


def bind_params(mod: IRModule, params: dict[str, Expr], func_name: str = "main") -> IRModule:
    """Bind ``@main``'s parameters by name (weights become constants)."""
    fn = mod[func_name]
    by_name = {p.name_hint: p for p in fn.params}
    unknown = [k for k in params if k not in by_name]
    if unknown:
        raise Error(
            f"params name no input of @{func_name}: {', '.join(unknown)}; "
            f"inputs are {', '.join(by_name)}"
        )
    new = mod.copy()
    new[func_name] = bind(fn, {by_name[k]: v for k, v in params.items()})
    return new
