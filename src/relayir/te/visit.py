"""Generic traversal of scalar expressions: children, rebuild, rewrite, substitute.

Each node class has one entry in ``_SHAPES``: how to list its sub-expressions and how
to rebuild it from new ones. Rewrites are memoised by node, so a shared subtree is
rewritten once and stays shared (expressions are DAGs after inlining).
"""

from __future__ import annotations

from collections.abc import Callable

from . import expr as E

_LEAVES = (E.IntImm, E.FloatImm, E.Var)


def _binary(e):
    return (e.a, e.b)


def _reduce_children(e):
    return (e.source,) if e.index is None else (e.source, e.index)


def _reduce_rebuild(e, cs):
    return E.Reduce(e.combiner, cs[0], e.axes, e.dtype, e.acc_dtype,
                    cs[1] if len(cs) > 1 else None, e.last)


_SHAPES: dict[type, tuple[Callable, Callable]] = {
    E.Not: (lambda e: (e.a,), lambda e, cs: E.Not(cs[0])),
    E.Select: (lambda e: (e.cond, e.t, e.f), lambda e, cs: E.Select(*cs)),
    E.Cast: (lambda e: (e.value,), lambda e, cs: E.Cast(e.dtype, cs[0])),
    E.Call: (lambda e: e.args, lambda e, cs: E.Call(e.name, cs, e.dtype)),
    E.TensorRead: (lambda e: e.indices, lambda e, cs: E.TensorRead(e.tensor, cs)),
    E.Reduce: (_reduce_children, _reduce_rebuild),
}


def register_node(cls: type, children: Callable, rebuild: Callable) -> None:
    """Teach the traversals a node class defined in another layer (``BufferLoad``)."""
    _SHAPES[cls] = (children, rebuild)


def _shape(e):
    shape = _SHAPES.get(type(e))
    if shape is None:
        if isinstance(e, E.BinaryOp):
            return _binary, lambda e, cs: type(e)(cs[0], cs[1])
        raise E.TEError(f"no traversal rule for {type(e).__name__}")
    return shape


def children(e: E.Expr) -> tuple:
    if isinstance(e, _LEAVES):
        return ()
    return _shape(e)[0](e)


def rebuild(e: E.Expr, new_children) -> E.Expr:
    """``e`` with its children replaced (``e`` itself when nothing changed)."""
    old = children(e)
    if all(a is b for a, b in zip(old, new_children)):
        return e
    return _shape(e)[1](e, tuple(new_children))


def rewrite(e: E.Expr, fn: Callable, memo: dict | None = None) -> E.Expr:
    """Bottom-up rewrite: children first, then ``fn(node)`` (which returns a node).

    ``fn`` runs in the order a recursive post-order would call it (first child's subtree
    first), from an explicit stack: expressions of long fused chains are deep."""
    memo = {} if memo is None else memo
    hit = memo.get(id(e))
    if hit is not None:
        return hit[1]
    stack = [(e, children(e), [])]  # node, its children, the new children so far
    while stack:
        x, cs, done = stack[-1]
        while len(done) < len(cs):
            hit = memo.get(id(cs[len(done)]))
            if hit is None:
                break
            done.append(hit[1])
        if len(done) < len(cs):
            c = cs[len(done)]
            stack.append((c, children(c), []))
            continue
        stack.pop()
        out = fn(rebuild(x, done) if cs else x)
        memo[id(x)] = (x, out)  # keep x alive so its id is not reused
    return memo[id(e)][1]


def substitute(e: E.Expr, mapping: dict, memo: dict | None = None) -> E.Expr:
    """Replace ``Var``s by expressions."""
    if not mapping:
        return e
    return rewrite(e, lambda x: mapping.get(x, x) if isinstance(x, E.Var) else x, memo)


def post_order(e: E.Expr) -> list:
    """Each distinct node (by identity) once, children first (an explicit stack)."""
    out, seen = [], {id(e)}
    stack = [(e, iter(children(e)))]
    while stack:
        x, pending = stack[-1]
        for c in pending:
            if id(c) not in seen:
                seen.add(id(c))
                stack.append((c, iter(children(c))))
                break
        else:
            stack.pop()
            out.append(x)
    return out


def collect(e: E.Expr, cls) -> list:
    """Distinct (structurally) nodes of type ``cls``, in post-order."""
    out, seen = [], set()
    for x in post_order(e):
        if isinstance(x, cls) and x not in seen:
            seen.add(x)
            out.append(x)
    return out


def uses_var(e: E.Expr, var: E.Var) -> bool:
    return any(x is var for x in post_order(e))


def free_vars(e: E.Expr) -> set:
    """Vars used in ``e``, reduce-axis variables of its reductions excluded."""
    bound = set()
    used = set()
    for x in post_order(e):
        if isinstance(x, E.Var):
            used.add(x)
        elif isinstance(x, E.Reduce):
            bound.update(a.var for a in x.axes)
    return used - bound
