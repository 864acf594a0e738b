"""``to_python`` / ``run_as_python``: a program written as Python source gives the
interpreter's values, in the interpreter's order of effects."""

import numpy as np
import pytest

import relayir as relay
from relayir.ir.adt import (
    Clause,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from relayir.ir.expr import If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from relayir.runtime import ConstructorValue, to_list
from relayir.runtime.python_source import PythonSourceError, run_as_python, to_python


def _interp(expr, mod=None):
    mod = relay.IRModule() if mod is None else mod
    mod["main"] = relay.Function([], expr)
    return relay.create_executor("debug", mod).evaluate()()


def test_ops_tuples_and_lets_match_the_interpreter():
    x = relay.const(np.array([1.0, np.nan, -np.inf, -0.0], "float32"))
    v = Var("v")
    e = Let(v, relay.exp(x), Tuple([relay.add(v, x), TupleGetItem(Tuple([v, x]), 1),
                                    Tuple([])]))
    got, want = run_as_python(e), _interp(e)
    np.testing.assert_array_equal(got[0], want[0])  # NaN and -inf where numpy has them
    np.testing.assert_array_equal(got[1], want[1])
    assert np.signbit(got[1][3]) and got[2] == ()
    source, _ = to_python(e)
    assert source.startswith("def _run():") and "_apply_op(" in source


def test_effects_run_once_in_order():
    r = Var("r")
    one = relay.const(1.0)
    writes = Tuple([RefWrite(r, relay.add(RefRead(r), one)), RefRead(r),
                    RefWrite(r, relay.add(RefRead(r), one)), RefRead(r)])
    e = Let(r, RefCreate(relay.const(0.0)), writes)
    got = run_as_python(e)
    assert [float(got[1]), float(got[3])] == [1.0, 2.0]
    assert float(_interp(e)[3]) == 2.0


def test_if_closures_and_local_recursion():
    n = relay.var("n", shape=(), dtype="int32")
    loop = Var("loop")
    fn = relay.Function([n], If(relay.less(n, relay.const(1)), n,
                                relay.Call(loop, [relay.subtract(n, relay.const(1))])))
    x, y = Var("x"), Var("y")
    adder = relay.Function([x], relay.Function([y], relay.add(x, y)))
    e = Let(loop, fn, Tuple([relay.Call(loop, [relay.const(30)]),
                             relay.Call(relay.Call(adder, [relay.const(2)]), [relay.const(3)])]))
    got = run_as_python(e)
    assert (int(got[0]), int(got[1])) == (0, 5)


def test_global_recursion_and_match_over_a_list():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    cons, nil = p.Cons, p.Nil
    length = relay.GlobalVar("length")
    xs, h, t = Var("xs"), Var("h"), Var("t")
    mod[length] = relay.Function([xs], Match(xs, [
        Clause(PatternConstructor(cons, [PatternWildcard(), PatternVar(t)]),
               relay.add(relay.const(1), length(t))),
        Clause(PatternConstructor(nil, []), relay.const(0)),
    ]))
    lst = cons(relay.const(4), cons(relay.const(5), cons(relay.const(6), nil())))
    assert int(run_as_python(length(lst), mod)) == 3
    got = run_as_python(lst, mod)
    assert isinstance(got, ConstructorValue) and [int(v) for v in to_list(got)] == [4, 5, 6]
    pair = Match(Tuple([relay.const(1), relay.const(2)]),
                 [Clause(PatternTuple([PatternVar(h), PatternVar(t)]), relay.subtract(t, h))])
    assert int(run_as_python(pair, mod)) == 1


def test_a_long_let_chain_is_written_without_python_recursion():
    vs = [Var(f"v{i}") for i in range(5000)]  # let v0 = 0 + 1; let v1 = v0 + 1; ...
    prev = relay.const(np.float32(0.0))
    chain = []
    for v in vs:
        chain.append((v, relay.add(prev, relay.const(np.float32(1.0)))))
        prev = v
    body = prev
    for v, value in reversed(chain):
        body = Let(v, value, body)
    assert float(run_as_python(body)) == 5000.0


def test_errors_name_the_problem():
    with pytest.raises(PythonSourceError, match="free variable %z"):
        run_as_python(relay.add(Var("z"), relay.const(1.0)))
    with pytest.raises(PythonSourceError, match="@nowhere is not in the module"):
        run_as_python(relay.Call(relay.GlobalVar("nowhere"), []), relay.IRModule())
    mod = relay.IRModule()
    f, n = relay.GlobalVar("f"), relay.var("n", shape=(), dtype="int32")
    mod[f] = relay.Function([n], relay.add(f(n), n))  # never stops
    with pytest.raises(PythonSourceError, match="deeper than Python's stack"):
        run_as_python(f(relay.const(1)), mod)
