"""``tvm.ir.structural_hash(node, map_free_vars)`` agrees with ``structural_equal``: equal
nodes hash alike; without ``map_free_vars`` two nodes with different free variables
are unequal and hash apart, with it they are equal and hash alike (TVM's contract)."""

from relayir.tvm import ir, relay


def _consistent(x, y, map_free_vars=False) -> bool:
    equal = ir.structural_equal(x, y, map_free_vars)
    same_hash = ir.structural_hash(x, map_free_vars) == ir.structural_hash(y, map_free_vars)
    assert equal == same_hash, (x, y, map_free_vars)
    return equal


def test_free_variables_count_by_identity_unless_mapped():
    v1, v2 = relay.var("v1"), relay.var("v2")
    assert _consistent(v1, v1) and not _consistent(v1, v2)
    assert _consistent(v1, v2, map_free_vars=True)
    one = relay.const(1)
    assert _consistent(relay.Let(v1, one, v1), relay.Let(v2, one, v2))      # bound: renamed
    assert not _consistent(relay.Let(v1, one, v1), relay.Let(v1, one, v2))  # v2 free
    assert not _consistent(relay.Tuple([v1, v2]), relay.Tuple([v2, v1]))
    assert _consistent(relay.Tuple([v1, v2]), relay.Tuple([v1, v2]))


def test_free_type_variables_count_by_name():
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    assert not _consistent(a, b) and _consistent(a, relay.TypeVar("a"))
    assert not _consistent(relay.TupleType([a, b]), relay.TupleType([b, a]))
    assert _consistent(relay.FuncType([a], a, [a]), relay.FuncType([b], b, [b]))
