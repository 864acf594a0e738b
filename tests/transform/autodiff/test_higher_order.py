"""``gradient(mode="higher_order")``: control flow, closures, recursion, ADTs and the
recursive LSTM, checked against first_order, finite differences and torch.autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import relayir as r
from relayir.ir.adt import Clause, Constructor, Match, PatternConstructor, PatternVar, TypeData
from relayir.ir.types import GlobalTypeVar, TensorType
from relayir.testing.models import lstm_recursive, torch_models
from relayir.transform.autodiff import GRADIENT, gradient

F = "float64"


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(F)


def _v(name, shape, dtype=F):
    return r.var(name, shape=shape, dtype=dtype)


def run(mod, *args):
    return r.create_executor("debug", mod).evaluate()(*args)


def grad_module(fn, mod=None, mode="higher_order"):
    mod = mod if mod is not None else r.IRModule()
    mod["main"] = gradient(fn, mod, mode=mode)
    return r.transform.InferType()(mod)


def finite_differences(fn, mod, args, eps=1e-6):
    """d sum(fn(args)) / d args by central differences (float64)."""
    mod = mod.copy() if mod is not None else r.IRModule()
    mod["main"] = fn
    f = r.create_executor("debug", mod).evaluate()
    grads = []
    for i, a in enumerate(args):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi, lo = [x.copy() for x in args], [x.copy() for x in args]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            g[idx] = (np.sum(f(*hi)) - np.sum(f(*lo))) / (2 * eps)
        grads.append(g)
    return grads


def torch_grads(torch_fn, args):
    ts = [torch.tensor(a, requires_grad=True) for a in args]
    torch_fn(*ts).sum().backward()
    return [t.grad.numpy() for t in ts]


def assert_grads(got, expected, rtol=1e-6, atol=1e-9):
    assert len(got) == len(expected)
    for i, (a, b) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"input {i}")


# ---------------------------------------------------------------- dataflow


def test_seed_example_prints_and_evaluates():
    v = r.var("v", shape=(), dtype="float32")
    g = r.transform.gradient(r.Function([v], r.power(v, r.const(3.0))), mode="higher_order")
    text = r.astext(g)
    assert "fn (%v: float32)" in text and "ref_write" in text and "power" in text
    out = run(r.IRModule.from_expr(g), np.array(2.0, "float32"))
    assert float(out[0]) == 8.0 and len(out[1]) == 1 and float(out[1][0]) == 12.0


def _mlp():
    x, w1, b1, w2, b2 = (_v("x", (4, 6)), _v("w1", (8, 6)), _v("b1", (8,)),
                         _v("w2", (3, 8)), _v("b2", (3,)))
    h = r.nn.relu(r.nn.bias_add(r.nn.dense(x, w1), b1))
    logits = r.nn.bias_add(r.nn.dense(h, w2), b2)
    lab = np.eye(3)[[0, 2, 1, 2]]
    loss = r.negative(r.sum(r.nn.log_softmax(logits) * r.const(lab))) / r.const(4.0, F)
    args = [rnd(4, 6), rnd(8, 6, seed=1), rnd(8, seed=2), rnd(3, 8, seed=3), rnd(3, seed=4)]
    return r.Function([x, w1, b1, w2, b2], r.Tuple([loss, h])), args


def test_mlp_equals_first_order():
    fn, args = _mlp()
    ho = run(grad_module(fn), *args)
    fo = run(grad_module(fn, mode="first_order"), *args)
    np.testing.assert_allclose(ho[0][0], fo[0][0], rtol=1e-12)
    np.testing.assert_allclose(ho[0][1], fo[0][1], rtol=1e-12)
    assert_grads(ho[1], fo[1], rtol=1e-10)


def test_shared_value_and_tuple_ops_accumulate():
    x = _v("x", (2, 3))
    parts = r.split(x, 3, axis=1)
    y = r.concatenate([parts[0] * parts[2], r.exp(parts[1]), x], axis=1)
    fn = r.Function([x], y * r.sin(y))
    a = rnd(2, 3)
    got = run(grad_module(fn), a)[1]
    assert_grads(got, finite_differences(fn, None, [a]), rtol=1e-6)


def test_long_chain_no_python_recursion():
    x = _v("x", (2,))
    e = x
    for _ in range(1500):  # deeper than Python's recursion limit, in the transform and
        e = r.sin(e)       # in the interpreter's chain of back-propagator calls
    g = gradient(r.Function([x], e), mode="higher_order")
    a = rnd(2)
    expected = torch_grads(lambda t: _repeat(torch.sin, t, 1500), [a])
    assert_grads(run(r.IRModule.from_expr(g), a)[1], expected)


def _repeat(f, t, n):
    for _ in range(n):
        t = f(t)
    return t


# ---------------------------------------------------------------- control flow, closures


def test_if_on_a_data_dependent_tensor_condition():
    x, w = _v("x", (3,)), _v("w", (3,))
    s = r.sum(x * w)
    fn = r.Function([x, w], r.If(r.greater(s, r.const(0.0, F)),
                                 r.tanh(x * w) * x, r.exp(w) * s))

    def ref(x, w):
        s = (x * w).sum()
        return torch.tanh(x * w) * x if s > 0 else torch.exp(w) * s

    mod = grad_module(fn)
    branches = set()
    for seed in range(6):
        args = [rnd(3, seed=seed), rnd(3, seed=seed + 10)]
        branches.add(bool(np.sum(args[0] * args[1]) > 0))
        out = run(mod, *args)
        np.testing.assert_allclose(out[0], ref(*map(torch.tensor, args)).numpy(), rtol=1e-12)
        assert_grads(out[1], torch_grads(ref, args))
        assert_grads(out[1], finite_differences(fn, None, args), rtol=1e-5, atol=1e-7)
    assert branches == {True, False}  # both branches were differentiated


def test_if_on_a_bool_scalar_parameter():
    x, flag = _v("x", (3,)), r.var("flag", shape=(), dtype="bool")
    fn = r.Function([x, flag], r.If(flag, x * x, r.sin(x)))
    mod = grad_module(fn)
    a = rnd(3)
    for on, expected in ((True, 2 * a), (False, np.cos(a))):
        dx, dflag = run(mod, a, np.array(on))[1]
        np.testing.assert_allclose(dx, expected, rtol=1e-12)
        assert dflag.dtype == np.bool_ and not dflag.any()  # a zero of the input's type


def test_references_in_the_program():
    """``let c = ref(x); c := sin(!c) * w; c := !c * !c; !c`` (state threaded through a cell)."""
    x, w = _v("x", (3,)), _v("w", (3,))
    c, u1, u2 = r.var("c"), r.var("u1"), r.var("u2")
    body = r.Let(c, r.RefCreate(x),
                 r.Let(u1, r.RefWrite(c, r.sin(r.RefRead(c)) * w),
                       r.Let(u2, r.RefWrite(c, r.RefRead(c) * r.RefRead(c)), r.RefRead(c))))
    fn = r.Function([x, w], body)
    args = [rnd(3), rnd(3, seed=1)]
    out = run(grad_module(fn), *args)
    assert_grads(out[1], torch_grads(lambda x, w: (torch.sin(x) * w) ** 2, args))


def test_closure_created_then_called():
    x, w = _v("x", (4,)), _v("w", (4,))
    a = r.var("a", shape=(4,), dtype=F)
    f = r.var("f")
    closure = r.Function([a], r.sin(a) * w + a)  # captures %w
    fn = r.Function([x, w], r.Let(f, closure, r.Call(f, [r.Call(f, [x]) * x])))

    def ref(x, w):
        g = lambda a: torch.sin(a) * w + a  # noqa: E731
        return g(g(x) * x)

    args = [rnd(4), rnd(4, seed=1)]
    out = run(grad_module(fn), *args)
    assert_grads(out[1], torch_grads(ref, args))


def test_recursive_global():
    """``@repeat(x, w, n) = n == 0 ? x : @repeat(tanh(x * w) + x, w, n - 1)``."""
    mod = r.IRModule()
    rep = r.GlobalVar("repeat")
    x, w, n = _v("x", (3,)), _v("w", (3,)), r.var("n", shape=(), dtype="int32")
    body = r.If(r.equal(n, r.const(0)), x,
                rep(r.tanh(x * w) + x, w, r.subtract(n, r.const(1))))
    mod[rep] = r.Function([x, w, n], body, TensorType((3,), F))
    x, w = _v("x", (3,)), _v("w", (3,))
    fn = r.Function([x, w], rep(x, w, r.const(4)) * w)

    def ref(x, w):
        return _repeat(lambda t: torch.tanh(t * w) + t, x, 4) * w

    args = [rnd(3), rnd(3, seed=1)]
    gmod = grad_module(fn, mod)
    assert "repeat_grad" in [g.name_hint for g in gmod.get_global_vars()]
    out = run(gmod, *args)
    np.testing.assert_allclose(out[0], ref(*map(torch.tensor, args)).numpy(), rtol=1e-12)
    assert_grads(out[1], torch_grads(ref, args))


def test_map_and_foldl_over_a_list():
    """``foldl(fn (acc, y) { acc * y + sin(y) }, x0, map(fn (t) { t * w }, [a, b, c]))``."""
    mod = r.IRModule()
    p = r.Prelude(mod)
    x0, a, b, c, w = (_v(n, (2,)) for n in ("x0", "a", "b", "c", "w"))
    t, acc, y = _v("t", (2,)), _v("acc", (2,)), _v("y", (2,))
    scaled = p.map(r.Function([t], t * w), p.Cons(a, p.Cons(b, p.Cons(c, p.Nil()))))
    out = p.foldl(r.Function([acc, y], acc * y + r.sin(y)), x0, scaled)
    fn = r.Function([x0, a, b, c, w], out)

    def ref(x0, a, b, c, w):
        for v in (a, b, c):
            x0 = x0 * (v * w) + torch.sin(v * w)
        return x0

    args = [rnd(2, seed=s) for s in range(5)]
    out = run(grad_module(fn, mod), *args)
    assert_grads(out[1], torch_grads(ref, args))


def test_a_global_passed_as_a_function_value():
    """``map(@cube_plus, [a, b])`` then a sum of the two: the global is a closure value."""
    mod = r.IRModule()
    p = r.Prelude(mod)
    cube = r.GlobalVar("cube_plus")
    t = _v("t", (2,))
    mod[cube] = r.Function([t], t * t * t + t, TensorType((2,), F))
    a, b = _v("a", (2,)), _v("b", (2,))
    mapped = p.map(cube, p.Cons(a, p.Cons(b, p.Nil())))
    fn = r.Function([a, b], p.hd(mapped) * p.hd(p.tl(mapped)))
    args = [rnd(2), rnd(2, seed=1)]
    out = run(grad_module(fn, mod), *args)
    f = lambda t: t ** 3 + t  # noqa: E731
    assert_grads(out[1], torch_grads(lambda a, b: f(a) * f(b), args))


def test_closures_returned_by_functions():
    """``@iterate(f, 3)(x)``: the prelude composes closures (``@compose``) and passes the
    polymorphic ``@id`` as a value."""
    mod = r.IRModule()
    p = r.Prelude(mod)
    x, w, t = _v("x", (3,)), _v("w", (3,)), _v("t", (3,))
    step = r.Function([t], r.sin(t) * w)
    fn = r.Function([x, w], r.Call(p.iterate(step, r.const(3)), [x]))
    args = [rnd(3), rnd(3, seed=1)]
    out = run(grad_module(fn, mod), *args)
    expected = torch_grads(lambda x, w: _repeat(lambda t: torch.sin(t) * w, x, 3), args)
    assert_grads(out[1], expected)


# ---------------------------------------------------------------- the recursive LSTM


@pytest.mark.parametrize("seq_len", [1, 3, 6])
def test_recursive_lstm_matches_torch_autograd(seq_len):
    batch, inp, hidden = 2, 3, 4
    mod, params = lstm_recursive(batch_size=batch, seq_len=seq_len, input_size=inp,
                                 hidden_size=hidden, seed=seq_len)
    main = mod["main"]
    names = [p.name_hint for p in main.params]
    data = np.random.default_rng(seq_len).standard_normal((seq_len, batch, inp))
    feeds = dict(params, data=data.astype("float32"))
    gmod = grad_module(main, mod)
    out = run(gmod, *[feeds[n] for n in names])

    net = torch_models.load(torch_models.build("lstm_recursive", input_size=inp,
                                               hidden_size=hidden), params).double()
    ts = {n: torch.tensor(np.asarray(v, F), requires_grad=True) for n, v in feeds.items()}
    y = torch.func.functional_call(net, {n: ts[n] for n in names[1:]}, (ts["data"],))
    y.sum().backward()
    np.testing.assert_allclose(out[0], y.detach().numpy(), rtol=1e-4, atol=1e-6)
    assert_grads(out[1], [ts[n].grad.numpy() for n in names], rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- errors


def test_adt_with_a_concrete_float_field_is_refused():
    header = GlobalTypeVar("Box")
    box = Constructor("Box", [TensorType((2,), F)], header)
    mod = r.IRModule()
    mod.add_type(TypeData(header, [], [box]))
    x, y = _v("x", (2,)), _v("y", (2,))
    fn = r.Function([x], Match(box(x), [Clause(PatternConstructor(box, [PatternVar(y)]),
                                               y * y)]))
    with pytest.raises(r.Error, match="constructor Box has a float tensor field"):
        gradient(fn, mod, mode="higher_order")


def test_non_differentiable_op_gives_zero_and_a_missing_rule_is_named():
    x = _v("x", (3,))
    fn = r.Function([x], r.floor(x) * x + r.argmax(x).astype(F))
    a = np.array([0.5, 1.5, -2.2])
    np.testing.assert_allclose(run(grad_module(fn), a)[1][0], np.floor(a))
    saved = GRADIENT._entries.pop("exp")
    try:
        with pytest.raises(r.Error, match="no gradient is registered for operator exp"):
            gradient(r.Function([x], r.exp(x)), mode="higher_order")
    finally:
        GRADIENT._entries["exp"] = saved


def test_global_call_without_a_module_is_refused():
    x = _v("x", (2,))
    fn = r.Function([x], r.GlobalVar("missing")(x))
    with pytest.raises(r.Error, match="missing"):
        gradient(fn, mode="higher_order")
