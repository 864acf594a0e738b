"""``relay.TypeFunctor`` / ``TypeVisitor`` / ``TypeMutator`` over relayir's types."""

import pytest

from relayir.tvm import relay
from relayir.tvm.relay.adt import TypeData
from relayir.tvm.relay.ty import TypeRelation


def _types():
    a = relay.TypeVar("a")
    t = relay.TensorType((2, 3), "float32")
    return [a, relay.IncompleteType(), t, relay.FuncType([t, a], relay.TupleType([a]), [a]),
            relay.RefType(relay.TupleType([])), relay.GlobalTypeVar("g"),
            relay.TypeCall(relay.GlobalTypeVar("L"), [t]),
            TypeData(relay.GlobalTypeVar("D"), [a], []), TypeRelation(None, [t, a], 1)]


@pytest.mark.parametrize("typ", _types(), ids=lambda t: type(t).__name__)
def test_functor_visitor_and_identity_mutator(typ):
    with pytest.raises(NotImplementedError):
        relay.TypeFunctor().visit(typ)
    relay.TypeVisitor().visit(typ)
    assert relay.TypeMutator().visit(typ) is typ  # nothing changed: the same object


def test_a_mutator_rewrites_nested_types():
    class F16(relay.TypeMutator):
        def visit_tensor_type(self, t):
            return relay.TensorType(t.shape, "float16")

    seen = []

    class Count(relay.TypeVisitor):
        def visit_tensor_type(self, t):
            seen.append(t)

    a, t = relay.TypeVar("a"), relay.TensorType((4,), "float32")
    ft = relay.FuncType([relay.TupleType([t, a])], relay.RefType(t), [a])
    out = F16().visit(ft)
    h = relay.TensorType((4,), "float16")
    assert out == relay.FuncType([relay.TupleType([h, a])], relay.RefType(h), [a])
    Count().visit(ft)
    assert seen == [t]  # memoised: the shared tensor type is visited once
