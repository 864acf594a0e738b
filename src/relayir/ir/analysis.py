"""Variable analyses: free and bound variables, well-formedness. All iterative."""

from __future__ import annotations

from ..errors import WellFormedError
from .expr import Expr, Var, short_text
from .functor import post_order
from .node_table import NODES, binders, children
from .types import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)


def bound_vars(expr: Expr) -> list[Var]:
    """Variables bound inside ``expr`` (let, parameters, patterns), in post-order."""
    out: list[Var] = []
    seen: set[Var] = set()
    for node in post_order(expr):
        for v in binders(node):
            if v not in seen:
                seen.add(v)
                out.append(v)
    return out


def all_vars(expr: Expr) -> list[Var]:
    return [n for n in post_order(expr) if isinstance(n, Var)]


def free_vars(expr: Expr) -> list[Var]:
    """Variables used in ``expr`` but not bound in it, in order of first use."""
    bound = set(bound_vars(expr))
    out: list[Var] = []
    seen: set[Var] = set()
    for node in _pre_order(expr):
        if isinstance(node, Var) and node not in bound and node not in seen:
            seen.add(node)
            out.append(node)
    return out


def _pre_order(root: Expr):
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(reversed(children(node)))


def free_type_vars(ty: Type) -> list[TypeVar]:
    """Type variables appearing in ``ty`` that it does not bind (types are small)."""
    out: list[TypeVar] = []

    def walk(t: Type, bound: frozenset) -> None:
        if isinstance(t, TypeVar):
            if t not in bound and t not in out:
                out.append(t)
        elif isinstance(t, TupleType):
            for f in t.fields:
                walk(f, bound)
        elif isinstance(t, FuncType):
            inner = bound | set(t.type_params)
            for a in t.arg_types:
                walk(a, inner)
            walk(t.ret_type, inner)
        elif isinstance(t, TypeCall):
            walk(t.func, bound)
            for a in t.args:
                walk(a, bound)
        elif isinstance(t, RefType):
            walk(t.value, bound)
        elif isinstance(t, (TensorType, IncompleteType)):
            pass

    walk(ty, frozenset())
    return out


def check_well_formed(expr: Expr, allow_free: bool = False) -> None:
    """Raise ``WellFormedError`` unless every variable is bound once and used in scope."""
    in_scope: set[Var] = set()
    ever_bound: set[Var] = set()
    visited: set[int] = set()
    stack: list = [("visit", expr)]
    while stack:
        action, item = stack.pop()
        if action == "unbind":
            in_scope.difference_update(item)
            continue
        node = item
        if isinstance(node, Var):
            if node not in in_scope and not allow_free:
                raise WellFormedError(f"variable %{node.name_hint} is used where it is not bound")
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        kind = NODES[type(node)]
        bound = kind.binders(node)
        if bound:
            for v in bound:
                if v in ever_bound:
                    raise WellFormedError(
                        f"variable %{v.name_hint} is bound more than once "
                        f"(again in {short_text(node)})"
                    )
                ever_bound.add(v)
            stack.append(("unbind", bound))
            in_scope.update(bound)
        kids = [c for c in kind.children(node) if not (isinstance(c, Var) and c in bound)]
        stack.extend(("visit", c) for c in reversed(kids))


def well_formed(expr: Expr) -> bool:
    try:
        check_well_formed(expr)
    except WellFormedError:
        return False
    return True
