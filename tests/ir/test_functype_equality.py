"""``FuncType ==``: a polymorphic function type is equal up to renaming its type
parameters (Relay's structural equality of types); a monomorphic one field by field."""

from relayir.ir.types import FuncType, TensorType, TupleType, TypeVar


def test_polymorphic_types_equal_up_to_renaming():
    a, b = TypeVar("a"), TypeVar("b")
    assert FuncType([a], a, [a]) == FuncType([b], b, [b])
    assert hash(FuncType([a], a, [a])) == hash(FuncType([b], b, [b]))
    # the binding order matters: fn[a, b](a) -> b is not fn[a, b](b) -> a
    assert FuncType([a], b, [a, b]) != FuncType([b], a, [a, b])
    assert FuncType([a], a, [a]) != FuncType([a], a, [a, b])


def test_nested_function_types_and_sets():
    a, b = TypeVar("A"), TypeVar("B")
    t = TensorType((2, 3), "float32")
    f = FuncType([FuncType([a], t), a], TupleType([a, t]), [a])
    g = FuncType([FuncType([b], t), b], TupleType([b, t]), [b])
    assert f == g and len({f, g}) == 1
    assert TupleType([f]) == TupleType([g])


def test_free_type_variables_compare_by_identity():
    a, a2 = TypeVar("a"), TypeVar("a")
    assert FuncType([a], a) == FuncType([a], a)
    assert FuncType([a], a) != FuncType([a2], a2)  # free: two different variables
    t = TensorType((), "int32")
    assert FuncType([t], t) == FuncType([t], t) and FuncType([t], t) != FuncType([t, t], t)
