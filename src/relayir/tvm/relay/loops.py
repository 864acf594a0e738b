"""``relay.loops.while_loop``: a loop as a recursive local function."""

from __future__ import annotations

from ...ir.expr import Call, Function, Let, Tuple, Var
from .scope_builder import ScopeBuilder


def while_loop(cond, loop_vars, loop_bodies) -> Let:
    """``let %while_loop = fn(vars) { if cond(vars) { %while_loop(body(vars)) } else
    { (vars) } }; %while_loop``: call the result with the initial values."""
    sb = ScopeBuilder()
    loop = Var("while_loop")
    fresh = [Var(v.name_hint if isinstance(v, Var) else f"arg{i}", sb.type_of(v))
             for i, v in enumerate(loop_vars)]
    with sb.if_scope(cond(*fresh)):
        sb.ret(Call(loop, tuple(loop_bodies(*fresh))))
    with sb.else_scope():
        sb.ret(Tuple(fresh))
    return Let(loop, Function(fresh, sb.get()), loop)


__all__ = ["while_loop"]
