"""``relay.analysis._ffi_api._test_type_solver()`` over relayir's ``TypeSolver``, with
``tvm.ir.EnvFunc``'s ``Broadcast`` and ``Identity`` relations."""

import pytest

import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.error import NotInRelayirError, TVMError


def _solver():
    s = relay.analysis._ffi_api._test_type_solver()

    def gen(name, args, out=None):
        out = out or relay.IncompleteType()
        func = tvm.ir.EnvFunc.get("tvm.relay.type_relation." + name)
        s("AddConstraint")(relay.ty.TypeRelation(func, [*args, out], len(args)))
        return out

    return s, gen


def test_forward_and_backward_relations():
    s, gen = _solver()
    t0, tc = relay.TensorType((10, 20)), relay.TensorType((10, 1, 1))
    t1 = relay.IncompleteType()
    t3 = gen("Broadcast", [t0, t1])  # waits for t1
    gen("Identity", [t1], out=tc)  # types t1 backwards
    assert s("Solve")()
    assert s("Resolve")(t3) == relay.TensorType((10, 10, 20))


def test_unify_resolves_and_refuses_mismatches():
    s, _ = _solver()
    t1, t2 = relay.IncompleteType(), relay.IncompleteType()
    tensor = relay.TensorType((2, 3))
    assert s("Unify")(relay.TupleType([t1, t2]), relay.TupleType([tensor, tensor])) == \
        relay.TupleType([tensor, tensor])
    gtv = relay.GlobalTypeVar("g")
    assert s("Unify")(gtv, gtv) == gtv
    with pytest.raises(TVMError, match="type mismatch in Unify"):
        s("Unify")(relay.TupleType([t1, t1]), relay.TupleType([tensor, relay.TensorType((3,))]))
    with pytest.raises(TVMError):
        s("Unify")(relay.GlobalTypeVar("a"), relay.GlobalTypeVar("b"))


def test_unknown_names_are_refused():
    with pytest.raises(NotInRelayirError, match="EnvFunc.get"):
        tvm.ir.EnvFunc.get("tvm.relay.type_relation.Conv2D")
    with pytest.raises(NotInRelayirError, match="_ffi_api.Other"):
        relay.analysis._ffi_api.Other  # noqa: B018
    with pytest.raises(NotInRelayirError, match="'Reset'"):
        relay.analysis._ffi_api._test_type_solver()("Reset")
