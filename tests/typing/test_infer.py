"""Type inference: relations, unification, polymorphism, recursion, ADTs, references."""

import time

import pytest

import relayir as relay
from relayir.ir import Any, FuncType, SymbolicDim, TensorType, TupleType
from relayir.ir.adt import Clause, Match, PatternConstructor, PatternVar, PatternWildcard
from relayir.ir.types import RefType, TypeCall, TypeVar

F32 = "float32"


def infer(mod):
    return relay.transform.InferType()(mod)


def test_readme_example_type():
    x = relay.var("x", shape=(2, 2), dtype=F32)
    w = relay.var("w", shape=(2, 2), dtype=F32)
    h = relay.var("h")
    f = relay.Function([x, w], relay.Let(h, relay.add(x, w), h * relay.const(2.0)))
    mod = infer(relay.IRModule.from_expr(f))
    t = TensorType((2, 2), F32)
    assert mod["main"].checked_type == FuncType([t, t], t)
    assert h.checked_type == t


def test_broadcast_and_dynamic_dims():
    x = relay.var("x", shape=(Any(), 3))
    y = relay.var("y", shape=("n", 1, 3))
    e = relay.add(x, y)
    relay.transform.infer_type(e)
    assert e.checked_type == TensorType((SymbolicDim("n"), Any(), 3))


def test_op_type_error_names_op_and_shapes():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(4,))
    mod = relay.IRModule.from_expr(relay.add(x, y))
    with pytest.raises(relay.TypeInferenceError) as err:
        infer(mod)
    msg = str(err.value)
    assert "add: shapes do not broadcast" in msg
    assert "Tensor[(2, 3), float32]" in msg and "Tensor[(4), float32]" in msg
    assert "add(%x, %y)" in msg


def test_dtype_mismatch():
    x = relay.var("x", shape=(2,), dtype="float64")
    with pytest.raises(relay.TypeInferenceError, match="dtype mismatch"):
        infer(relay.IRModule.from_expr(x * 2.0))


def test_unannotated_lambda_gets_type_from_use():
    a = relay.var("a", shape=(3,))
    p = relay.var("p")
    f = relay.var("f")
    body = relay.Let(f, relay.Function([p], relay.exp(p)), relay.Call(f, [a]))
    mod = infer(relay.IRModule.from_expr(relay.Function([a], body)))
    assert p.checked_type == TensorType((3,))
    assert mod["main"].checked_type.ret_type == TensorType((3,))


def test_polymorphic_global_used_at_two_types():
    mod = relay.IRModule()
    a = TypeVar("A")
    x = relay.Var("x", a)
    ident = relay.GlobalVar("id")
    mod[ident] = relay.Function([x], x, a, [a])
    f = relay.var("f", shape=(2,))
    i = relay.var("i", shape=(), dtype="int32")
    mod["main"] = relay.Function([f, i], relay.Tuple([ident(f), ident(i)]))
    mod = infer(mod)
    assert mod["main"].checked_type.ret_type == TupleType(
        [TensorType((2,)), TensorType((), "int32")])


def test_mutually_recursive_globals():
    mod = relay.IRModule()
    even, odd = relay.GlobalVar("even"), relay.GlobalVar("odd")
    n1 = relay.var("n", shape=(), dtype="int32")
    n2 = relay.var("n", shape=(), dtype="int32")
    one, zero = relay.const(1), relay.const(0)
    mod[even] = relay.Function(
        [n1], relay.If(relay.equal(n1, zero), relay.const(True), odd(relay.subtract(n1, one))))
    mod[odd] = relay.Function(
        [n2], relay.If(relay.equal(n2, zero), relay.const(False), even(relay.subtract(n2, one))))
    mod = infer(mod)
    assert mod["even"].checked_type == FuncType([TensorType((), "int32")], TensorType((), "bool"))


def test_if_condition_must_be_bool_scalar():
    x = relay.var("x", shape=(2,))
    with pytest.raises(relay.TypeInferenceError, match="if condition"):
        infer(relay.IRModule.from_expr(relay.If(x, x, x)))


def test_if_branches_must_agree():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(3,))
    with pytest.raises(relay.TypeInferenceError, match="between the if branches"):
        infer(relay.IRModule.from_expr(relay.If(relay.const(True), x, y)))


def test_match_and_constructors(list_mod):
    mod, header, cons, nil = list_mod
    xs = relay.Var("xs", TypeCall(header, [TensorType((2,))]))
    h, t = relay.var("h"), relay.var("t")
    body = Match(xs, [
        Clause(PatternConstructor(cons, [PatternVar(h), PatternVar(t)]), h),
        Clause(PatternWildcard(), relay.const([0.0, 0.0])),
    ])
    mod["main"] = relay.Function([xs], body)
    mod = infer(mod)
    assert mod["main"].checked_type.ret_type == TensorType((2,))
    assert t.checked_type == TypeCall(header, [TensorType((2,))])
    # constructing a list infers the element type
    y = relay.var("y", shape=(3,))
    mod["build"] = relay.Function([y], cons(y, cons(y, nil())))
    mod = infer(mod)
    assert mod["build"].checked_type.ret_type == TypeCall(header, [TensorType((3,))])


def test_constructor_argument_mismatch(list_mod):
    mod, header, cons, nil = list_mod
    y = relay.var("y", shape=(3,))
    z = relay.var("z", shape=(2,))
    mod["main"] = relay.Function([y, z], cons(y, cons(z, nil())))
    with pytest.raises(relay.TypeInferenceError, match="type mismatch"):
        infer(mod)


def test_references():
    x = relay.var("x", shape=(2,))
    r = relay.var("r")
    write = relay.RefWrite(r, relay.add(x, x))
    body = relay.Let(r, relay.RefCreate(x), relay.Let(relay.var("u"), write, relay.RefRead(r)))
    mod = infer(relay.IRModule.from_expr(relay.Function([x], body)))
    assert r.checked_type == RefType(TensorType((2,)))
    assert mod["main"].checked_type.ret_type == TensorType((2,))


def test_return_annotation_checked():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], x, TensorType((3,)))
    with pytest.raises(relay.TypeInferenceError, match="return type"):
        infer(relay.IRModule.from_expr(f))


def test_wrong_arity_call():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], x)
    with pytest.raises(relay.TypeInferenceError, match="takes 1 arguments, found 2"):
        relay.transform.infer_type(relay.Call(f, [relay.const([1.0, 2.0])] * 2))


def test_chain_of_100k_calls_type_checks_fast():
    x = relay.var("x", shape=(4,))
    e = x
    for _ in range(100_000):
        e = relay.negative(e)
    start = time.perf_counter()
    mod = infer(relay.IRModule.from_expr(relay.Function([x], e)))
    assert time.perf_counter() - start < 10
    assert mod["main"].checked_type.ret_type == TensorType((4,))


def test_let_chain_of_100k_type_checks():
    x = relay.var("x", shape=(4,))
    vs = [relay.var(f"v{i}") for i in range(100_000)]
    body = vs[-1]
    for i in reversed(range(len(vs))):
        body = relay.Let(vs[i], relay.negative(vs[i - 1] if i else x), body)
    mod = infer(relay.IRModule.from_expr(relay.Function([x], body)))
    assert mod["main"].checked_type.ret_type == TensorType((4,))


@pytest.mark.parametrize("shape,dtype", [((2**64, 4), "float32"), ((2**62, 2), "int16"),
                                         ((2**61, 2**2), "float64")])
def test_a_tensor_of_more_than_2_63_bytes_is_a_type_error(shape, dtype):
    x = relay.var("x", shape=shape, dtype=dtype)
    with pytest.raises(relay.TypeInferenceError, match=r"%x has type .* more than a tensor"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], x)))


def test_an_op_whose_result_would_overflow_is_a_type_error():
    y = relay.var("y", shape=(2**40,), dtype="int8")
    with pytest.raises(relay.TypeInferenceError, match="tile: the result has type"):
        relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function([y], relay.tile(y, (2**30,)))))
    z = relay.var("z", shape=(2**31, 2**31), dtype="int8")  # 2**62 bytes: fits
    relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([z], z)))


def test_a_named_dim_does_not_broadcast_against_a_static_extent():
    # (1, s, 4) + (10, 4) holds only if s is 10: an importer that baked an example size
    a, b = relay.var("a", shape=(1, "s", 4)), relay.var("b", shape=(10, 4))
    with pytest.raises(relay.TypeInferenceError, match="dimension -2 is s vs 10"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([a, b], a + b)))
    c = relay.var("c", shape=(1, 4))  # against 1 it broadcasts; Any still takes an extent
    d = relay.var("d", shape=(relay.Any(), 4))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([a, c, d, b], relay.Tuple([a + c, d + b]))))
    assert str(mod["main"].checked_type.ret_type) == (
        "(Tensor[(1, s, 4), float32], Tensor[(10, 4), float32])")
