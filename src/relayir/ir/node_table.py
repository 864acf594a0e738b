"""The node table: one record per Relay expression class, read by every traversal.

A record says what a walk needs to know about a node's shape: its children (every
direct sub-expression, in evaluation order), how to rebuild it around new children
(copy on write), which variables it binds, and for each child its *role*: a variable
the node binds (``BINDER``), an input evaluated in the node's own scope (``INPUT``), or
the result of the k-th block the node opens (``k >= 0``: an ``if`` branch, a function
body, a ``match`` clause). The functor, the analyses, the printer, structural hashing,
A-normal form, ``Inline`` and graph codegen all read it, so adding a node kind or a
field to one is a change here, not in seven if-chains. Lookups are ``NODES[type(e)]``,
one dict lookup; ``te/visit.py`` does the same for tensor expressions.

An ``Op`` or ``Constructor`` callee is not a child of its call: it names the operation,
as an attribute would, and no walk should list it as a value (``post_order`` never
yields ops). A callee that is a value (a variable, a global, a function) is a child.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import Error
from .adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    pattern_vars,
)
from .expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)

INPUT = -1  # role of a child evaluated in the node's own scope (before the node)
BINDER = -2  # role of a variable the node binds


class NodeTableError(Error, TypeError):
    """A traversal met an object that is not a Relay expression node, or a node was
    rebuilt from the wrong number of children."""


@dataclass(frozen=True, slots=True, eq=False)
class NodeKind:
    """What every traversal knows about one node class.

    ``children(e)``: every direct sub-expression, in evaluation order.
    ``make(e, cs)``: a new node like ``e`` (span, attrs, annotations) with children ``cs``.
    ``binders(e)``: the variables ``e`` binds (they are among its children).
    ``roles(e)``: for each child ``BINDER``, ``INPUT`` or a block index; None when every
    child is an input (leaves and dataflow nodes, so the hot walks build no tuple).
    ``dataflow``: a node that only reads its inputs (no binders, no blocks).
    ``visit``: the name of the functor method that handles the class.
    """

    cls: type
    visit: str
    children: Callable[[Expr], tuple]
    make: Callable[[Expr, tuple], Expr]
    binders: Callable[[Expr], tuple]
    roles: Callable[[Expr], tuple | None]
    dataflow: bool

    def rebuild(self, e: Expr, new_children: Sequence[Expr]) -> Expr:
        """``e`` with its children replaced: ``e`` itself when every one is the same."""
        new = tuple(new_children)
        old = self.children(e)
        if len(old) != len(new):
            raise NodeTableError(
                f"rebuilding a {self.cls.__name__}: expected {len(old)} children, "
                f"found {len(new)}")
        for a, b in zip(old, new):
            if a is not b:
                return self.make(e, new)
        return e


def _none(e) -> tuple:
    return ()


def _no_roles(e) -> None:
    return None


def _same_node(e, cs) -> Expr:
    return e


def _leaf(cls: type, visit: str) -> NodeKind:
    return NodeKind(cls, visit, _none, _same_node, _none, _no_roles, False)


def _dataflow(cls: type, visit: str, children, make) -> NodeKind:
    return NodeKind(cls, visit, children, make, _none, _no_roles, True)


# ---------------------------------------------------------------- dataflow nodes


def _call_children(e: Call) -> tuple:
    op = e.op
    return e.args if type(op) is Op or type(op) is Constructor else (op, *e.args)


def _call_make(e: Call, cs: tuple) -> Call:
    op = e.op
    if type(op) is Op or type(op) is Constructor:
        return Call(op, cs, e.attrs, e.type_args).with_span(e.span)
    return Call(cs[0], cs[1:], e.attrs, e.type_args).with_span(e.span)


# ---------------------------------------------------------------- scope nodes


def _let_children(e: Let) -> tuple:
    return (e.var, e.value, e.body)


_LET_ROLES = (BINDER, INPUT, INPUT)  # a let opens no block: its body continues the scope


def _if_children(e: If) -> tuple:
    return (e.cond, e.true_branch, e.false_branch)


_IF_ROLES = (INPUT, 0, 1)


def _function_children(e: Function) -> tuple:
    return (*e.params, e.body)


def _function_make(e: Function, cs: tuple) -> Function:
    return Function(cs[:-1], cs[-1], e.ret_type, e.type_params, e.attrs).with_span(e.span)


def _function_roles(e: Function) -> tuple:
    return (BINDER,) * len(e.params) + (0,)


def _match_children(e: Match) -> tuple:
    out = [e.data]
    for c in e.clauses:
        out += pattern_vars(c.lhs)
        out.append(c.rhs)
    return tuple(out)


def _match_binders(e: Match) -> tuple:
    return tuple(v for c in e.clauses for v in pattern_vars(c.lhs))


def _match_roles(e: Match) -> tuple:
    out = [INPUT]
    for k, c in enumerate(e.clauses):
        out += [BINDER] * len(pattern_vars(c.lhs))
        out.append(k)
    return tuple(out)


def _match_make(e: Match, cs: tuple) -> Match:
    it = iter(cs[1:])
    clauses = []
    for c in e.clauses:
        lhs = _with_pattern_vars(c.lhs, it)
        rhs = next(it)
        clauses.append(c if lhs is c.lhs and rhs is c.rhs else Clause(lhs, rhs))
    return Match(cs[0], clauses, e.complete).with_span(e.span)


def _with_pattern_vars(p: Pattern, new_vars) -> Pattern:
    """``p`` with its variables, left to right, taken from ``new_vars`` (copy on write;
    patterns are small, so recursion is fine)."""
    t = type(p)
    if t is PatternVar:
        v = next(new_vars)
        return p if v is p.var else PatternVar(v)
    if t is PatternConstructor or t is PatternTuple:
        ps = tuple(_with_pattern_vars(q, new_vars) for q in p.patterns)
        if all(a is b for a, b in zip(ps, p.patterns)):
            return p
        if t is PatternTuple:
            return PatternTuple(ps)
        return PatternConstructor(p.constructor, ps)
    return p


# ---------------------------------------------------------------- the table


NODES: dict[type, NodeKind] = {k.cls: k for k in (
    _leaf(Var, "visit_var"),
    _leaf(GlobalVar, "visit_global_var"),
    _leaf(Constant, "visit_constant"),
    _leaf(Op, "visit_op"),
    _leaf(Constructor, "visit_constructor"),
    _dataflow(Call, "visit_call", _call_children, _call_make),
    _dataflow(Tuple, "visit_tuple", lambda e: e.fields,
              lambda e, cs: Tuple(cs).with_span(e.span)),
    _dataflow(TupleGetItem, "visit_tuple_getitem", lambda e: (e.tuple_value,),
              lambda e, cs: TupleGetItem(cs[0], e.index).with_span(e.span)),
    _dataflow(RefCreate, "visit_ref_create", lambda e: (e.value,),
              lambda e, cs: RefCreate(cs[0]).with_span(e.span)),
    _dataflow(RefRead, "visit_ref_read", lambda e: (e.ref,),
              lambda e, cs: RefRead(cs[0]).with_span(e.span)),
    _dataflow(RefWrite, "visit_ref_write", lambda e: (e.ref, e.value),
              lambda e, cs: RefWrite(cs[0], cs[1]).with_span(e.span)),
    NodeKind(Let, "visit_let", _let_children,
             lambda e, cs: Let(cs[0], cs[1], cs[2]).with_span(e.span),
             lambda e: (e.var,), lambda e: _LET_ROLES, False),
    NodeKind(If, "visit_if", _if_children,
             lambda e, cs: If(cs[0], cs[1], cs[2]).with_span(e.span),
             _none, lambda e: _IF_ROLES, False),
    NodeKind(Function, "visit_function", _function_children, _function_make,
             lambda e: e.params, _function_roles, False),
    NodeKind(Match, "visit_match", _match_children, _match_make, _match_binders,
             _match_roles, False),
)}

# classes whose nodes have no children: never bound by ANF, printed in place
LEAVES = frozenset(cls for cls, k in NODES.items() if k.children is _none)
# nodes that only read their inputs (the functor visits these from a worklist)
DATAFLOW_NODES = tuple(cls for cls, k in NODES.items() if k.dataflow)


# ---------------------------------------------------------------- by node


def kind_of(e: Expr) -> NodeKind:
    try:
        return NODES[type(e)]
    except KeyError:
        raise NodeTableError(
            f"expected a Relay expression node, found {type(e).__name__}") from None


def children(e: Expr) -> tuple:
    """Every direct sub-expression of ``e`` (binders included), in evaluation order."""
    try:
        return NODES[type(e)].children(e)
    except KeyError:
        raise NodeTableError(
            f"expected a Relay expression node, found {type(e).__name__}") from None


def dataflow_inputs(e: Expr) -> tuple:
    """The expressions a dataflow node reads (callee included unless it is an op);
    () for any other node."""
    k = kind_of(e)
    return k.children(e) if k.dataflow else ()


def rebuild(e: Expr, new_children: Sequence[Expr]) -> Expr:
    """``e`` around ``new_children`` (as ``children(e)`` lists them); ``e`` if unchanged."""
    return kind_of(e).rebuild(e, new_children)


def binders(e: Expr) -> tuple:
    """The variables ``e`` binds: a let's variable, a function's parameters, the
    variables of a match's patterns."""
    return kind_of(e).binders(e)


def roles(e: Expr) -> tuple:
    """Each child's role: ``BINDER``, ``INPUT`` or the index of the block it ends."""
    k = kind_of(e)
    r = k.roles(e)
    return (INPUT,) * len(k.children(e)) if r is None else r


def operands(e: Expr) -> tuple:
    """The children ``e`` evaluates: all of them but the variables it binds."""
    k = kind_of(e)
    r = k.roles(e)
    cs = k.children(e)
    return cs if r is None else tuple(c for c, role in zip(cs, r) if role != BINDER)


def inputs(e: Expr) -> tuple:
    """The children evaluated in ``e``'s own scope, before it (no binders, no blocks)."""
    k = kind_of(e)
    r = k.roles(e)
    cs = k.children(e)
    return cs if r is None else tuple(c for c, role in zip(cs, r) if role == INPUT)


__all__ = [
    "BINDER", "DATAFLOW_NODES", "INPUT", "LEAVES", "NODES", "NodeKind", "NodeTableError",
    "binders", "children", "dataflow_inputs", "inputs", "kind_of", "operands", "rebuild",
    "roles",
]
