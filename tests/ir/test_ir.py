"""IR nodes, structural equality/hashing, variable analyses and visitors."""

import numpy as np
import pytest

import relayir as relay
from relayir.ir import (
    Any,
    ExprMutator,
    ExprVisitor,
    SymbolicDim,
    TensorType,
    check_well_formed,
    free_vars,
    structural_equal,
    structural_hash,
)
from relayir.ir.adt import Constructor, TypeData
from relayir.ir.types import GlobalTypeVar, TypeCall, TypeVar


def test_nodes_are_immutable():
    x = relay.var("x", shape=(2,))
    with pytest.raises(AttributeError):
        x.name_hint = "y"
    c = relay.add(x, x)
    with pytest.raises(AttributeError):
        c.args = ()
    k = relay.const(np.ones(3, "float32"))
    with pytest.raises(ValueError):
        k.data[0] = 2.0


def test_constant_defaults_follow_relay():
    assert relay.const(1.0).data.dtype == np.float32
    assert relay.const(1).data.dtype == np.int32
    assert relay.const(True).data.dtype == np.bool_
    assert relay.const([1.5, 2.5]).data.dtype == np.float32
    assert relay.const(2, "int64").data.dtype == np.int64
    with pytest.raises(relay.Error, match="unsupported dtype"):
        relay.const(np.array([1 + 2j]))


def test_tensor_type_dims():
    t = TensorType((2, None, "n"), "float32")
    assert t.shape == (2, Any(), SymbolicDim("n"))
    assert not t.is_static
    assert TensorType((2, 3)) == TensorType((2, 3), "float32")
    with pytest.raises(relay.Error):
        TensorType((-1,))
    with pytest.raises(relay.Error):
        TensorType((2,), "complex64")


def test_operator_overloading_builds_calls():
    x = relay.var("x", shape=(2,))
    e = -(x + 1.0) * x / 2.0 - x
    assert isinstance(e, relay.Call) and e.op.name == "subtract"
    assert e.args[0].op.name == "divide"
    t = relay.Tuple([x, x])
    assert t[1] is x
    assert list(t) == [x, x]  # a tuple node unpacks into its fields, as in Relay
    assert isinstance(relay.add(x, x)[0], relay.TupleGetItem)
    with pytest.raises(TypeError):
        list(x)


def test_structural_equal_alpha_equivalence():
    def make(name):
        x = relay.var(name, shape=(3,))
        y = relay.var("y" + name)
        return relay.Function([x], relay.Let(y, relay.add(x, x), relay.multiply(y, x)))

    a, b = make("a"), make("b")
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    # different body
    x = relay.var("x", shape=(3,))
    c = relay.Function([x], relay.subtract(x, x))
    assert not structural_equal(a, c)
    # free variables are equal only when identical, unless mapped
    p, q = relay.var("p"), relay.var("q")
    assert not structural_equal(relay.add(p, p), relay.add(q, q))
    assert structural_equal(relay.add(p, p), relay.add(q, q), map_free_vars=True)
    assert not structural_equal(relay.add(p, q), relay.add(q, q), map_free_vars=True)


def test_structural_equal_constants_and_attrs():
    assert structural_equal(relay.const(np.arange(4.0, dtype="float32")),
                            relay.const(np.arange(4.0, dtype="float32")))
    assert not structural_equal(relay.const(1.0), relay.const(2.0))
    assert not structural_equal(relay.const(1.0), relay.const(1.0, "float64"))
    nan = relay.const(np.float32("nan"))
    assert structural_equal(nan, relay.const(np.float32("nan")))


def test_structural_equal_of_sequences_and_numbers():
    assert structural_equal([10, (2, 3)], [10, (2, 3)])
    assert not structural_equal([10, 10], [10, 11])
    assert not structural_equal([1, 2], [1, 2, 3])
    assert not structural_equal([1], (1,))


def test_structural_equal_type_params_and_annotations():
    a1, a2 = TypeVar("A"), TypeVar("B")
    x1, x2 = relay.Var("x", a1), relay.Var("x", a2)
    f1 = relay.Function([x1], x1, a1, [a1])
    f2 = relay.Function([x2], x2, a2, [a2])
    assert structural_equal(f1, f2)
    x3 = relay.Var("x", TensorType((2,)))
    assert not structural_equal(f1, relay.Function([x3], x3))


def test_free_vars_and_well_formed():
    x, y, z = relay.var("x"), relay.var("y"), relay.var("z")
    body = relay.Let(y, relay.add(x, z), relay.multiply(y, x))
    assert free_vars(body) == [x, z]
    assert free_vars(relay.Function([x, z], body)) == []
    check_well_formed(relay.Function([x, z], body))
    with pytest.raises(relay.WellFormedError, match="not bound"):
        check_well_formed(relay.Function([x], body))
    twice = relay.Function([x], relay.Let(y, x, relay.Let(y, x, y)))
    with pytest.raises(relay.WellFormedError, match="bound more than once"):
        check_well_formed(twice)


def _chain(n):
    x = relay.var("x", shape=(4,))
    e = x
    for _ in range(n):
        e = relay.negative(e)
    return x, e


def test_visitors_do_not_recurse_on_long_chains():
    x, e = _chain(100_000)

    class Count(ExprVisitor):
        n = 0

        def visit_call(self, call):
            self.n += 1
            super().visit_call(call)

    counter = Count()
    counter.visit(e)
    assert counter.n == 100_000

    class Rename(ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            return relay.abs(new.args[0]) if call.args[0] is x else new

    out = Rename().visit(e)
    assert out is not e
    assert structural_hash(out) != structural_hash(e)
    assert structural_equal(e, e)
    assert free_vars(e) == [x]


def test_mutator_is_copy_on_write():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.Tuple([relay.add(x, x), relay.If(relay.const(True), x, x)]))
    assert ExprMutator().visit(f) is f


def test_shared_nodes_visited_once():
    x = relay.var("x", shape=(2,))
    e = x
    for _ in range(60):  # a DAG with 2**60 paths
        e = relay.add(e, e)
    seen = []

    class V(ExprVisitor):
        def visit_call(self, call):
            seen.append(call)
            super().visit_call(call)

    V().visit(e)
    assert len(seen) == 60
    assert structural_equal(e, e)
    structural_hash(e)


def test_adt_definitions_and_module():
    lst = GlobalTypeVar("MyList")
    a = TypeVar("A")
    cons = Constructor("MyCons", [a, TypeCall(lst, [a])], lst)
    nil = Constructor("MyNil", [], lst)
    td = TypeData(lst, [a], [cons, nil])
    assert (cons.tag, nil.tag) == (0, 1)
    mod = relay.IRModule()
    mod.add_type(td)
    assert mod.get_constructor("MyNil") is nil
    assert mod.get_global_type_var("MyList") == lst
    with pytest.raises(relay.Error, match="no function @foo"):
        mod["foo"]


def test_from_expr_wraps_free_vars():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    mod = relay.IRModule.from_expr(relay.add(x, y))
    assert list(mod["main"].params) == [x, y]
