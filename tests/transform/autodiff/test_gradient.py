"""The gradient transform: the seed example, whole models against torch.autograd, and
the gradient function surviving the optimisation pipeline and ``build``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import relayir as r
from relayir.runtime.graph_executor import GraphModule
from relayir.transform import PassContext, optimize
from relayir.transform.autodiff import gradient

F = "float64"


def rnd(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(F)


def run_debug(fn, *args):
    return r.create_executor("debug", r.IRModule.from_expr(fn)).evaluate()(*args)


def flatten(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in flatten(v)]
    return [np.asarray(value)]


def run_built(fn, feeds: dict):
    mod = r.IRModule.from_expr(fn)
    with PassContext(opt_level=3):
        lib = r.build(mod, target="numpy")
    m = GraphModule(lib)
    m.run(**feeds)
    return [m.get_output(i) for i in range(m.get_num_outputs())]


def test_seed_example_cube():
    v = r.var("v", shape=(), dtype="float32")
    f = r.Function([v], r.power(v, r.const(3.0)))
    g = gradient(f, mode="first_order")
    text = r.astext(g)
    assert "fn (%v: float32)" in text and "power" in text
    out = run_debug(g, np.array(2.0, "float32"))
    assert float(out[0]) == 8.0 and float(out[1][0]) == 12.0
    assert len(out[1]) == 1


def test_shared_input_and_tuples_accumulate():
    x = r.var("x", shape=(3,), dtype=F)
    y = r.var("y", shape=(3,), dtype=F)
    t = r.Tuple([x * y, r.exp(x)])
    f = r.Function([x, y], r.TupleGetItem(t, 0) + r.TupleGetItem(t, 1) * x)
    xv, yv = rnd(3), rnd(3, seed=1)
    out = run_debug(gradient(f), xv, yv)
    np.testing.assert_allclose(out[1][0], yv + np.exp(xv) * xv + np.exp(xv))
    np.testing.assert_allclose(out[1][1], xv)


def test_unused_input_gets_zero_and_tuple_output():
    x = r.var("x", shape=(2,), dtype=F)
    y = r.var("y", shape=(2,), dtype=F)
    f = r.Function([x, y], r.Tuple([x * r.const(3.0, F), r.sin(x)]))
    out = run_debug(gradient(f), np.array([0.1, 0.2]), np.array([1.0, 2.0]))
    np.testing.assert_allclose(out[1][0], 3.0 + np.cos([0.1, 0.2]))
    np.testing.assert_allclose(out[1][1], 0.0)


def test_bad_mode_and_control_flow_errors():
    x = r.var("x", shape=(), dtype=F)
    f = r.Function([x], r.If(r.greater(x, r.const(0.0, F)), x, r.negative(x)))
    with pytest.raises(r.Error, match="If"):
        gradient(f)
    with pytest.raises(r.Error, match="mode"):
        gradient(f, mode="third_order")


def test_long_chain_no_recursion():
    x = r.var("x", shape=(2,), dtype=F)
    e = x
    for _ in range(3000):
        e = r.sin(e)
    g = gradient(r.Function([x], e))
    assert isinstance(g, r.Function)


# ---------------------------------------------------------------- models vs torch


def _check(fn, feeds, torch_fn, rtol=1e-4, built=True):
    g = gradient(fn)
    names = [p.name_hint for p in fn.params]
    out = run_debug(g, *[feeds[n] for n in names])
    ts = {n: torch.tensor(v, requires_grad=True) for n, v in feeds.items()}
    y = torch_fn(**ts)
    y.sum().backward()
    np.testing.assert_allclose(out[0], y.detach().numpy(), rtol=rtol, atol=1e-8)
    for n, dx in zip(names, out[1]):
        np.testing.assert_allclose(dx, ts[n].grad.numpy(), rtol=rtol, atol=1e-8, err_msg=n)
    if built:
        got = run_built(g, feeds)
        expected = flatten(out)
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    return g


def _v(name, shape):
    return r.var(name, shape=shape, dtype=F)


def test_mlp_matches_torch_and_builds():
    x, w1, b1, w2, b2 = (_v("x", (4, 6)), _v("w1", (8, 6)), _v("b1", (8,)),
                         _v("w2", (3, 8)), _v("b2", (3,)))
    h = r.nn.relu(r.nn.bias_add(r.nn.dense(x, w1), b1))
    logits = r.nn.bias_add(r.nn.dense(h, w2), b2)
    lab = np.eye(3)[[0, 2, 1, 2]]
    loss = r.negative(r.sum(r.nn.log_softmax(logits) * r.const(lab))) / r.const(4.0, F)
    fn = r.Function([x, w1, b1, w2, b2], loss)
    feeds = dict(x=rnd(4, 6), w1=rnd(8, 6, seed=1), b1=rnd(8, seed=2), w2=rnd(3, 8, seed=3),
                 b2=rnd(3, seed=4))
    tl = torch.tensor(lab)

    def ref(x, w1, b1, w2, b2):
        h = torch.relu(x @ w1.T + b1)
        return -(torch.log_softmax(h @ w2.T + b2, -1) * tl).sum() / 4.0

    _check(fn, feeds, ref)


def test_cnn_matches_torch_and_builds():
    x, w1, w2, wd = _v("x", (2, 3, 8, 8)), _v("w1", (4, 3, 3, 3)), _v("w2", (4, 2, 3, 3)), \
        _v("wd", (5, 16))
    h = r.nn.relu(r.nn.conv2d(x, w1, padding=(1, 1)))
    h = r.nn.max_pool2d(h, pool_size=(2, 2), strides=(2, 2))
    h = r.nn.relu(r.nn.conv2d(h, w2, padding=(1, 1), strides=(2, 2), groups=2))
    h = r.nn.avg_pool2d(h, pool_size=(1, 1))
    out = r.nn.dense(r.nn.batch_flatten(h), wd)
    fn = r.Function([x, w1, w2, wd], out)
    feeds = dict(x=rnd(2, 3, 8, 8), w1=rnd(4, 3, 3, 3, seed=1), w2=rnd(4, 2, 3, 3, seed=2),
                 wd=rnd(5, 16, seed=3))
    F_ = torch.nn.functional

    def ref(x, w1, w2, wd):
        h = F_.max_pool2d(torch.relu(F_.conv2d(x, w1, padding=1)), 2, 2)
        h = torch.relu(F_.conv2d(h, w2, padding=1, stride=2, groups=2))
        return h.flatten(1) @ wd.T

    _check(fn, feeds, ref)


def test_attention_matches_torch_and_builds():
    x, wq, wk, wv, gam, bet = (_v("x", (2, 4, 6)), _v("wq", (6, 6)), _v("wk", (6, 6)),
                               _v("wv", (6, 6)), _v("gamma", (6,)), _v("beta", (6,)))
    q, k, v = r.nn.dense(x, wq), r.nn.dense(x, wk), r.nn.dense(x, wv)
    s = r.nn.batch_matmul(q, k) * r.const(1 / np.sqrt(6.0), F)
    a = r.nn.softmax(s, axis=-1)
    o = r.nn.batch_matmul(a, v, transpose_b=False)
    y = r.nn.layer_norm(o + x, gam, bet)
    fn = r.Function([x, wq, wk, wv, gam, bet], r.tanh(y))
    feeds = dict(x=rnd(2, 4, 6), wq=rnd(6, 6, seed=1), wk=rnd(6, 6, seed=2),
                 wv=rnd(6, 6, seed=3), gamma=rnd(6, seed=4), beta=rnd(6, seed=5))

    def ref(x, wq, wk, wv, gamma, beta):
        q, k, v = x @ wq.T, x @ wk.T, x @ wv.T
        a = torch.softmax(q @ k.transpose(1, 2) / np.sqrt(6.0), -1)
        y = torch.nn.functional.layer_norm(a @ v + x, (6,), gamma, beta, eps=1e-5)
        return torch.tanh(y)

    _check(fn, feeds, ref)


@pytest.mark.parametrize("name,relay_fn,torch_fn,shape", [
    ("conv2d_strided_dilated",
     lambda x, w: r.nn.conv2d(x, w, strides=(2, 1), padding=(1, 2), dilation=(1, 2)),
     lambda x, w: torch.nn.functional.conv2d(x, w, stride=(2, 1), padding=(1, 2),
                                             dilation=(1, 2)), ((1, 2, 7, 7), (3, 2, 3, 3))),
    ("avg_pool_pad", lambda x, w: r.nn.avg_pool2d(x * w, pool_size=(3, 3), strides=(2, 2),
                                                  padding=(1, 1)),
     lambda x, w: torch.nn.functional.avg_pool2d(x * w, 3, 2, 1, count_include_pad=False),
     ((1, 2, 6, 6), (1, 2, 6, 6))),
    ("max_pool_pad", lambda x, w: r.nn.max_pool2d(x * w, pool_size=(3, 3), strides=(2, 2),
                                                  padding=(1, 1)),
     lambda x, w: torch.nn.functional.max_pool2d(x * w, 3, 2, 1), ((1, 2, 6, 6), (1, 2, 6, 6))),
])
def test_op_gradients_match_torch(name, relay_fn, torch_fn, shape):
    xs, ws = shape
    fn = r.Function([_v("x", xs), _v("w", ws)], relay_fn(_v("x", xs), _v("w", ws)))
    x, w = fn.params
    fn = r.Function([x, w], relay_fn(x, w))
    _check(fn, dict(x=rnd(*xs), w=rnd(*ws, seed=1)), torch_fn, built=False)


def test_optimised_gradient_still_matches():
    x, w = _v("x", (3, 4)), _v("w", (5, 4))
    fn = r.Function([x, w], r.sum(r.sigmoid(r.nn.dense(x, w)) * r.const(2.0, F)))
    g = gradient(fn)
    mod = r.IRModule.from_expr(g)
    with PassContext(opt_level=3):
        opt = optimize(mod)
    xv, wv = rnd(3, 4), rnd(5, 4, seed=1)
    a = flatten(run_debug(g, xv, wv))
    b = flatten(r.create_executor("debug", opt).evaluate()(xv, wv))
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-10)


def test_train_mlp_example_loss_falls():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[3] / "examples" / "train_mlp.py"
    spec = importlib.util.spec_from_file_location("train_mlp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ours, torch_run = mod.main(20, target="cpu")  # generated C kernels
    assert ours.losses[-1] < 0.5 * ours.losses[0] and ours.accuracy[1] > 0.9
    np.testing.assert_allclose(ours.losses, torch_run.losses, rtol=1e-3)
    assert ours.accuracy == torch_run.accuracy and len(ours.step_times) == 20
