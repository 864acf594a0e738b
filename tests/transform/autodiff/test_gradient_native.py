"""First-order gradients compiled natively: ``build(target="cpu")`` at opt level 3 (graph
executor) and ``vm.compile(target="cpu")`` of the gradients of an MLP, a small CNN and an
attention block match the reference interpreter (float32: the path users train on)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import relayir as r
from relayir.runtime.graph_executor import GraphModule
from relayir.transform import PassContext
from relayir.transform.autodiff import gradient

pytestmark = pytest.mark.skipif(not any(map(shutil.which, ("cc", "gcc", "clang"))),
                                reason="compiles C: no C compiler found")

F = "float32"


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(F)


def _v(name, shape):
    return r.var(name, shape=shape, dtype=F)


def flatten(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in flatten(v)]
    return [np.asarray(value)]


def mlp_softmax_loss():
    x, w1, b1, w2, b2 = (_v("x", (8, 12)), _v("w1", (16, 12)), _v("b1", (16,)),
                         _v("w2", (4, 16)), _v("b2", (4,)))
    h = r.nn.relu(r.nn.bias_add(r.nn.dense(x, w1), b1))
    probs = r.nn.softmax(r.nn.bias_add(r.nn.dense(h, w2), b2))
    labels = np.eye(4, dtype=F)[np.arange(8) % 4]
    loss = r.negative(r.sum(r.log(probs) * r.const(labels))) / r.const(8.0)
    feeds = dict(x=rnd(8, 12), w1=rnd(16, 12, seed=1) * 0.3, b1=rnd(16, seed=2),
                 w2=rnd(4, 16, seed=3) * 0.3, b2=rnd(4, seed=4))
    return r.Function([x, w1, b1, w2, b2], loss), feeds


def small_cnn_log_softmax_loss():
    x, w1, b1, w2, wd = (_v("x", (2, 3, 12, 12)), _v("w1", (4, 3, 3, 3)), _v("b1", (4,)),
                         _v("w2", (6, 2, 3, 3)), _v("wd", (5, 24)))
    h = r.nn.relu(r.nn.bias_add(r.nn.conv2d(x, w1, padding=(1, 1)), b1))
    h = r.nn.max_pool2d(h, pool_size=(2, 2), strides=(2, 2))
    h = r.nn.relu(r.nn.conv2d(h, w2, padding=(1, 1), strides=(2, 2), groups=2))
    h = r.nn.avg_pool2d(h, pool_size=(2, 2), strides=(1, 1))
    logits = r.nn.dense(r.nn.batch_flatten(h), wd)
    labels = np.eye(5, dtype=F)[[1, 3]]
    loss = r.negative(r.sum(r.nn.log_softmax(logits) * r.const(labels)))
    feeds = dict(x=rnd(2, 3, 12, 12), w1=rnd(4, 3, 3, 3, seed=1) * 0.3, b1=rnd(4, seed=2),
                 w2=rnd(6, 2, 3, 3, seed=3) * 0.3, wd=rnd(5, 24, seed=4) * 0.3)
    return r.Function([x, w1, b1, w2, wd], loss), feeds


def attention_block():
    x, wq, wk, wv, gamma, beta = (_v("x", (2, 4, 6)), _v("wq", (6, 6)), _v("wk", (6, 6)),
                                  _v("wv", (6, 6)), _v("gamma", (6,)), _v("beta", (6,)))
    q, k, v = r.nn.dense(x, wq), r.nn.dense(x, wk), r.nn.dense(x, wv)
    a = r.nn.softmax(r.nn.batch_matmul(q, k) * r.const(1 / np.sqrt(6.0), F), axis=-1)
    y = r.nn.layer_norm(r.nn.batch_matmul(a, v, transpose_b=False) + x, gamma, beta)
    feeds = dict(x=rnd(2, 4, 6), wq=rnd(6, 6, seed=1), wk=rnd(6, 6, seed=2),
                 wv=rnd(6, 6, seed=3), gamma=rnd(6, seed=4), beta=rnd(6, seed=5))
    return r.Function([x, wq, wk, wv, gamma, beta], r.tanh(y)), feeds


MODELS = {"mlp": mlp_softmax_loss, "cnn": small_cnn_log_softmax_loss,
          "attention": attention_block}


@pytest.fixture(params=sorted(MODELS))
def model(request):
    fn, feeds = MODELS[request.param]()
    mod = r.IRModule.from_expr(gradient(fn))
    args = [feeds[p.name_hint] for p in fn.params]
    expected = flatten(r.create_executor("debug", mod).evaluate()(*args))
    assert len(expected) == 1 + len(fn.params)
    return mod, feeds, args, expected


def assert_close(got, expected):
    assert len(got) == len(expected)
    for i, (a, b) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"output {i}")


def test_graph_executor_build_opt3_matches_interpreter(model):
    mod, feeds, _, expected = model
    with PassContext(opt_level=3):
        lib = r.build(mod, target="cpu")
    assert lib.get_lib().kernels  # generated C, not the numpy fallback
    m = GraphModule(lib)
    m.run(**feeds)
    assert_close([m.get_output(i) for i in range(m.get_num_outputs())], expected)


def test_vm_compile_matches_interpreter(model):
    mod, _, args, expected = model
    with PassContext(opt_level=3):
        exe = r.vm.compile(mod, target="cpu")
    out = r.vm.VirtualMachine(exe).invoke("main", *args)
    assert_close(flatten(out), expected)
