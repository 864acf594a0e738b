"""The node table: one record per Relay expression class, read by every traversal."""

import sys

import pytest

import relayir as relay
from relayir.ir import ExprFunctor, ExprMutator, ExprVisitor, post_order
from relayir.ir import node_table as nt
from relayir.ir.adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from relayir.ir.expr import (
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
    Span,
    Tuple,
    TupleGetItem,
    Var,
)
from relayir.ir.types import GlobalTypeVar, TensorType, TypeCall, TypeVar

SPAN = Span("test", 3, 7)


def _all_subclasses(cls):
    """Subclasses reachable by their module and name (``dataclass(slots=True)`` leaves
    the class it replaced among ``__subclasses__`` until it is collected)."""
    out, stack = set(), [cls]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in out:
                out.add(sub)
                stack.append(sub)
    return {c for c in out if getattr(sys.modules[c.__module__], c.__qualname__, None) is c}


def _samples() -> dict:
    """One node of every kind (spans set, so that rebuilding must keep them)."""
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    f = relay.var("f")
    lst = GlobalTypeVar("L")
    a = TypeVar("A")
    cons = Constructor("C", [a, TypeCall(lst, [a])], lst)
    nil = Constructor("N", [], lst)
    TypeData(lst, [a], [cons, nil])
    h, t, u = relay.var("h"), relay.var("t"), relay.var("u")
    op_call = relay.add(x, y)
    fn = Function([x, y], op_call, TensorType((2,), "float32"), [a], {"Inline": 1})
    match = Match(relay.var("d"), [
        Clause(PatternConstructor(cons, [PatternVar(h), PatternTuple([PatternVar(t),
                                                                      PatternWildcard()])]),
               h),
        Clause(PatternVar(u), u),
        Clause(PatternWildcard(), x),
    ], complete=False)
    nodes = {
        Var: x,
        GlobalVar: relay.GlobalVar("g"),
        Constant: relay.const(1.0),
        Op: op_call.op,
        Constructor: cons,
        Call: op_call,
        Tuple: Tuple([x, op_call]),
        TupleGetItem: TupleGetItem(Tuple([x, y]), 1),
        Let: Let(f, x, f),
        If: If(relay.var("c", "bool"), x, y),
        Function: fn,
        Match: match,
        RefCreate: RefCreate(x),
        RefRead: RefRead(RefCreate(x)),
        RefWrite: RefWrite(RefCreate(x), y),
    }
    extra = {"call of a value": Call(f, (x,), None, (TensorType((2,), "float32"),)),
             "call of a constructor": Call(cons, (x, relay.var("l"))),
             "op call with attrs": relay.nn.softmax(x, axis=0)}
    for e in [*nodes.values(), *extra.values()]:
        if type(e) not in nt.LEAVES:
            e.with_span(SPAN)
    return {**{c.__name__: e for c, e in nodes.items()}, **extra}


SAMPLES = _samples()


def test_every_expression_class_has_one_record():
    import relayir  # noqa: F401  (every layer loaded: no Expr subclass hides anywhere)

    classes = _all_subclasses(Expr)
    assert classes == set(nt.NODES), "Expr subclasses without a node-table record"
    assert {type(e) for e in SAMPLES.values()} == set(nt.NODES)
    for cls, kind in nt.NODES.items():
        assert kind.cls is cls
        assert getattr(ExprFunctor, kind.visit) is ExprFunctor._unhandled
    assert set(nt.DATAFLOW_NODES) == {Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite}
    assert set(nt.LEAVES) == {Var, GlobalVar, Constant, Op, Constructor}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_rebuild_with_the_same_children_is_the_node_itself(name):
    e = SAMPLES[name]
    cs = nt.children(e)
    assert nt.rebuild(e, cs) is e
    assert nt.rebuild(e, list(cs)) is e
    assert ExprMutator().visit(e) is e


def _replacement(c):
    return Var(c.name_hint + "_new", c.type_annotation) if type(c) is Var else relay.var("r")


@pytest.mark.parametrize("name", sorted(n for n, e in SAMPLES.items()
                                        if type(e) not in nt.LEAVES))
def test_children_rebuild_round_trip(name):
    e = SAMPLES[name]
    kind = nt.NODES[type(e)]
    cs = nt.children(e)
    roles = nt.roles(e)
    assert len(roles) == len(cs)
    assert nt.binders(e) == tuple(c for c, r in zip(cs, roles) if r == nt.BINDER)
    assert nt.operands(e) == tuple(c for c, r in zip(cs, roles) if r != nt.BINDER)
    assert nt.dataflow_inputs(e) == (cs if kind.dataflow else ())
    new = tuple(_replacement(c) for c in cs)
    out = nt.rebuild(e, new)
    assert type(out) is type(e) and out is not e
    assert all(a is b for a, b in zip(nt.children(out), new, strict=True))
    assert out.span == SPAN
    assert len(nt.binders(out)) == len(nt.binders(e))
    for field in ("attrs", "type_args", "index", "ret_type", "type_params", "complete"):
        assert getattr(out, field, None) == getattr(e, field, None), field
    if type(e) is Call:
        assert (out.op is e.op) == (type(e.op) in nt.LEAVES and type(e.op) is not Var)
    if type(e) is Match:  # the patterns keep their shape; only their variables change
        for old_c, new_c in zip(e.clauses, out.clauses, strict=True):
            assert type(old_c.lhs) is type(new_c.lhs)
        assert out.clauses[2].lhs is e.clauses[2].lhs  # a wildcard clause's pattern is kept
    # back again: the original children give a node with the original's children
    back = nt.rebuild(out, cs)
    assert all(a is b for a, b in zip(nt.children(back), cs, strict=True))


def test_children_follow_evaluation_order():
    x, f = relay.var("x"), relay.var("f")
    assert nt.children(Call(f, (x,))) == (f, x)  # a value callee is evaluated first
    assert nt.children(relay.negative(x)) == (x,)  # an op is no child
    m = SAMPLES["Match"]
    h = m.clauses[0].lhs.patterns[0].var
    t = m.clauses[0].lhs.patterns[1].patterns[0].var
    assert nt.children(m)[:4] == (m.data, h, t, m.clauses[0].rhs)
    assert nt.roles(m) == (nt.INPUT, nt.BINDER, nt.BINDER, 0, nt.BINDER, 1, 2)
    assert nt.roles(SAMPLES["If"]) == (nt.INPUT, 0, 1)
    assert nt.inputs(SAMPLES["If"]) == (SAMPLES["If"].cond,)
    assert nt.binders(SAMPLES["Let"]) == (SAMPLES["Let"].var,)
    assert nt.binders(SAMPLES["Function"]) == SAMPLES["Function"].params


def test_bad_input_is_a_relayir_error():
    with pytest.raises(relay.Error, match="expected a Relay expression node, found int"):
        nt.children(3)
    with pytest.raises(relay.Error, match="expected a Relay expression node"):
        post_order(TensorType((2,), "float32"))
    with pytest.raises(relay.Error, match="Tuple: expected 2 children, found 1"):
        nt.rebuild(SAMPLES["Tuple"], (relay.var("z"),))


def test_visitors_still_see_op_callees():
    x = relay.var("x", shape=(2,))
    e = relay.nn.relu(relay.negative(x))
    seen = []

    class Ops(ExprVisitor):
        def visit_op(self, op):
            seen.append(op.name)

    Ops().visit(e)
    assert seen == ["negative", "nn.relu"]

    class Swap(ExprMutator):  # an op callee is no child, but a mutator may replace it
        def visit_op(self, op):
            return relay.abs(x).op if op.name == "negative" else op

    out = Swap().visit(e)
    assert [n.op.name for n in post_order(out) if type(n) is Call] == ["abs", "nn.relu"]
    assert all(type(n) is not Op for n in post_order(out))


def test_a_100000_long_chain_is_walked_and_rebuilt_without_recursion():
    n = 100_000
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    e = x
    for i in range(n):
        e = relay.negative(e) if i % 3 else Tuple([e, x])
        if i % 3 == 0:
            e = TupleGetItem(e, 0)
    # a bottom-up rewrite written only with the table: replace x by y
    new: dict = {}
    stack = [(e, False)]
    while stack:
        node, ready = stack.pop()
        if node in new:
            continue
        cs = nt.children(node)
        if ready or not cs:
            new[node] = y if node is x else nt.rebuild(node, [new[c] for c in cs])
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in cs if c not in new)
    out = new[e]
    assert out is not e
    nodes = post_order(out)
    assert x not in nodes and y in nodes
    assert len(nodes) == len(post_order(e))
    # unchanged sub-chains are shared, not copied
    z = relay.var("z", shape=(2,))
    assert nt.rebuild(relay.add(e, z), [e, z]).args[0] is e
