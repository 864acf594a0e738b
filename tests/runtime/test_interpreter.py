"""The reference interpreter: dataflow, closures, recursion, ADTs, references."""

import time

import numpy as np
import pytest

import relayir as relay
from relayir.ir.adt import Clause, Match, PatternConstructor, PatternVar
from relayir.ir.types import FuncType, TensorType, TypeCall
from relayir.runtime import ConstructorValue, RefValue, to_list

I32 = "int32"


def run_main(mod, *args):
    return relay.create_executor("debug", mod).evaluate()(*args)


def test_readme_example_matches_numpy():
    x = relay.var("x", shape=(2, 2), dtype="float32")
    w = relay.var("w", shape=(2, 2), dtype="float32")
    h = relay.var("h")
    f = relay.Function([x, w], relay.Let(h, relay.maximum(relay.subtract(x, w), relay.const(0.0)),
                                         h * relay.const(2.0)))
    a = np.array([[1, -2], [3, 4]], "float32")
    b = np.array([[0.5, 1], [-1, 2]], "float32")
    out = run_main(relay.IRModule.from_expr(f), a, b)
    np.testing.assert_allclose(out, np.maximum(a - b, 0) * 2)
    assert out.dtype == np.float32


def factorial_module():
    mod = relay.IRModule()
    fact = relay.GlobalVar("fact")
    n = relay.var("n", shape=(), dtype=I32)
    body = relay.If(relay.equal(n, relay.const(0)), relay.const(1),
                    relay.multiply(n, fact(relay.subtract(n, relay.const(1)))))
    mod[fact] = relay.Function([n], body, TensorType((), I32))
    m = relay.var("m", shape=(), dtype=I32)
    mod["main"] = relay.Function([m], fact(m))
    return mod


def test_factorial_recursion():
    assert int(run_main(factorial_module(), np.int32(10))) == 3628800


def test_deep_recursion_does_not_hit_python_limit():
    mod = relay.IRModule()
    count = relay.GlobalVar("count")
    n = relay.var("n", shape=(), dtype=I32)
    acc = relay.var("acc", shape=(), dtype=I32)
    one = relay.const(1)
    mod[count] = relay.Function(
        [n, acc],
        relay.If(relay.equal(n, relay.const(0)), acc,
                 count(relay.subtract(n, one), relay.add(acc, one))),
        TensorType((), I32))
    m = relay.var("m", shape=(), dtype=I32)
    mod["main"] = relay.Function([m], count(m, relay.const(0)))
    assert int(run_main(mod, np.int32(20_000))) == 20_000


def test_closures_capture_and_run_later():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    adder = relay.var("adder")
    make = relay.Function([x], relay.Function([y], relay.add(x, y)))
    add3 = relay.var("add3")
    body = relay.Let(adder, make,
                     relay.Let(add3, relay.Call(adder, [relay.const([3.0, 3.0])]),
                               relay.Call(add3, [relay.const([1.0, 2.0])])))
    out = run_main(relay.IRModule.from_expr(relay.Function([], body)))
    np.testing.assert_allclose(out, [4.0, 5.0])


def test_recursive_let_bound_function():
    n = relay.var("n", shape=(), dtype=I32)
    loop = relay.var("loop", FuncType([TensorType((), I32)], TensorType((), I32)))
    fn = relay.Function([n], relay.If(relay.less(n, relay.const(1)), n,
                                      relay.Call(loop, [relay.subtract(n, relay.const(1))])))
    body = relay.Let(loop, fn, relay.Call(loop, [relay.const(50)]))
    assert int(run_main(relay.IRModule.from_expr(relay.Function([], body)))) == 0


def test_foldl_over_list_of_tensors(list_mod):
    mod, header, cons, nil = list_mod
    t2 = TensorType((2,))
    foldl = relay.GlobalVar("foldl")
    f = relay.var("f", FuncType([t2, t2], t2))
    acc = relay.var("acc", t2)
    xs = relay.var("xs", TypeCall(header, [t2]))
    h, rest = relay.var("h"), relay.var("rest")
    mod[foldl] = relay.Function([f, acc, xs], Match(xs, [
        Clause(PatternConstructor(cons, [PatternVar(h), PatternVar(rest)]),
               foldl(f, relay.Call(f, [acc, h]), rest)),
        Clause(PatternConstructor(nil, []), acc),
    ]), t2)
    a, b = relay.var("a", t2), relay.var("b", t2)
    add_fn = relay.Function([a, b], relay.add(a, b))
    items = [np.array([i, 2 * i], "float32") for i in range(1, 6)]
    lst = nil()
    for v in reversed(items):
        lst = cons(relay.const(v), lst)
    mod["main"] = relay.Function([], foldl(add_fn, relay.const([0.0, 0.0]), lst))
    np.testing.assert_allclose(run_main(mod), sum(items))


def test_adt_values_are_returned(list_mod):
    mod, header, cons, nil = list_mod
    mod["main"] = relay.Function([], cons(relay.const(1.0), cons(relay.const(2.0), nil())))
    out = run_main(mod)
    assert isinstance(out, ConstructorValue) and out.name == "Cons"
    assert [float(v) for v in to_list(out)] == [1.0, 2.0]


def test_references_are_mutable():
    r = relay.var("r")
    u = relay.var("u")
    body = relay.Let(r, relay.RefCreate(relay.const(1.0)),
                     relay.Let(u, relay.RefWrite(r, relay.add(relay.RefRead(r), relay.const(5.0))),
                               relay.Tuple([relay.RefRead(r), r])))
    out = run_main(relay.IRModule.from_expr(relay.Function([], body)))
    assert float(out[0]) == 6.0
    assert isinstance(out[1], RefValue)


def test_tuples_and_projection():
    x = relay.var("x", shape=(3,))
    t = relay.Tuple([x, relay.negative(x)])
    out = run_main(relay.IRModule.from_expr(relay.Function([x], relay.TupleGetItem(t, 1))),
                   np.ones(3, "float32"))
    np.testing.assert_allclose(out, -np.ones(3))


def test_wrong_input_shape_is_a_clear_error():
    x = relay.var("x", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.negative(x)))
    with pytest.raises(relay.Error, match="input x: expected shape"):
        run_main(mod, np.ones((3, 2), "float32"))
    with pytest.raises(relay.Error, match="expected dtype float32"):
        run_main(mod, np.ones((2, 3), "float64"))


def test_dag_is_evaluated_once_per_node():
    x = relay.var("x", shape=())
    e = x
    for _ in range(60):
        e = relay.add(e, e)
    out = run_main(relay.IRModule.from_expr(relay.Function([x], e)), np.float32(1))
    assert float(out) == 2.0**60


def test_chain_of_100k_calls_evaluates():
    x = relay.var("x", shape=(4,))
    e = x
    for _ in range(100_000):
        e = relay.negative(e)
    mod = relay.IRModule.from_expr(relay.Function([x], e))
    start = time.perf_counter()
    out = run_main(mod, np.arange(4, dtype="float32"))
    assert time.perf_counter() - start < 10
    np.testing.assert_allclose(out, np.arange(4))
