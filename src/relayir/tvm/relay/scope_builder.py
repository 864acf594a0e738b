"""``relay.ScopeBuilder``: build nested ``let`` / ``if`` code in Python ``with`` blocks.

    sb = ScopeBuilder()
    x = sb.let("x", relay.const(1))
    with sb.if_scope(cond):
        sb.ret(x)
    with sb.else_scope():
        sb.ret(relay.const(2))
    body = sb.get()
"""

from __future__ import annotations

from ...errors import Error
from ...ir.expr import Expr, If, Let, Var
from ...typing.infer import infer_expr


class ScopeBuilderError(Error):
    """A scope used out of order (``else_scope`` without ``if_scope``, two ``ret``s)."""


class WithScope:
    def __init__(self, enter_value, exit_cb):
        self._enter_value = enter_value
        self._exit_cb = exit_cb

    def __enter__(self):
        return self._enter_value

    def __exit__(self, ptype, value, trace):
        if value is None:
            self._exit_cb()


class _PartialIf:
    """An ``if`` whose else branch is still to come."""

    def __init__(self, cond: Expr, true_branch: Expr):
        self.cond = cond
        self.true_branch = true_branch


def _make_lets(bindings, ret_value) -> Expr:
    if ret_value is None:
        raise ScopeBuilderError("ScopeBuilder: the scope has no return value (call ret)")
    if isinstance(ret_value, _PartialIf):
        raise ScopeBuilderError("ScopeBuilder: an if_scope lacks its else_scope")
    for var, value in reversed(bindings):
        ret_value = Let(var, value, ret_value)
    return ret_value


class ScopeBuilder:
    def __init__(self):
        self._bindings: list[list] = [[]]
        self._ret_values: list = [None]

    def _enter_scope(self) -> None:
        self._bindings.append([])
        self._ret_values.append(None)

    def _exit_scope(self):
        return self._bindings.pop(), self._ret_values.pop()

    def let(self, var, value) -> Var:
        """Bind ``value`` to ``var`` (a Var, a name, or ``(name, type)``)."""
        if isinstance(var, (tuple, list)):
            if len(var) > 2:
                raise ScopeBuilderError("ScopeBuilder.let: var is a Var, a name or "
                                        "(name, type)")
            name, *ty = var
            var = Var(name, ty[0] if ty else None)
        elif isinstance(var, str):
            var = Var(var)
        self._bindings[-1].append((var, value))
        return var

    def if_scope(self, cond: Expr) -> WithScope:
        self._enter_scope()

        def on_exit():
            bindings, ret_value = self._exit_scope()
            if self._ret_values[-1] is not None:
                raise ScopeBuilderError("ScopeBuilder: a result was returned before the "
                                        "if_scope")
            self._ret_values[-1] = _PartialIf(cond, _make_lets(bindings, ret_value))

        return WithScope(None, on_exit)

    def else_scope(self) -> WithScope:
        self._enter_scope()

        def on_exit():
            bindings, ret_value = self._exit_scope()
            partial = self._ret_values[-1]
            if not isinstance(partial, _PartialIf):
                raise ScopeBuilderError("ScopeBuilder: else_scope must follow if_scope")
            self._ret_values[-1] = If(partial.cond, partial.true_branch,
                                      _make_lets(bindings, ret_value))

        return WithScope(None, on_exit)

    def type_of(self, expr: Expr):
        """The type of ``expr``: its annotation for a variable, else inferred."""
        if isinstance(expr, Var) and expr.type_annotation is not None:
            return expr.type_annotation
        for var, value in reversed(self._bindings[-1]):
            if var is expr and isinstance(value, Expr) and value.has_type:
                return value.checked_type
        return infer_expr(expr).checked_type

    def ret(self, value: Expr) -> None:
        if self._ret_values[-1] is not None:
            raise ScopeBuilderError("ScopeBuilder: the scope already returned a value")
        self._ret_values[-1] = value

    def get(self) -> Expr:
        if len(self._bindings) != 1:
            raise ScopeBuilderError("ScopeBuilder.get: only at the outermost scope")
        return _make_lets(self._bindings[-1], self._ret_values[-1])


__all__ = ["ScopeBuilder", "ScopeBuilderError", "WithScope"]
