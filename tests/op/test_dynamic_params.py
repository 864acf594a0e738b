"""The ``dyn`` ops of ``op/dynamic_params.py``: a run-time parameter (axes, k, depth,
sizes, scales, NMS limits). Each is checked three ways against its static op: the VM
runs it with the parameter as an input (cpu and numpy targets), ``DynamicToStatic``
turns it into the static op when the parameter is a constant, and the result types
have the rank the parameter's static length gives."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.ir.types import Any
from relayir.op import dynamic_params as DP
from relayir.op.dynamic import DYNAMIC
from relayir.transform.bind import bind

rng = np.random.default_rng(0)
X = rng.normal(size=(2, 3, 4)).astype("float32")
IMG = rng.normal(size=(1, 2, 4, 5)).astype("float32")
BOXES = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 5, 1, 6]]], "float32")
SCORES = np.array([[[0.9, 0.8, 0.7]]], "float32")


def _i64(*v):
    return np.array(v, "int64")


# name: (build(data vars, param vars), data arrays, param arrays, expected numpy result)
CASES = {
    "sum keepdims": (lambda d, p: DP.reduce("sum", d[0], p[0], keepdims=True), [X], [_i64(1)],
                     X.sum(1, keepdims=True)),
    "max two axes": (lambda d, p: DP.reduce("max", d[0], p[0]), [X], [_i64(0, -1)],
                     X.max((0, 2))),
    "mean": (lambda d, p: DP.reduce("mean", d[0], p[0]), [X], [_i64(2)], X.mean(2)),
    "logsumexp": (lambda d, p: DP.reduce("logsumexp", d[0], p[0]), [X], [_i64(1)],
                  np.log(np.exp(X).sum(1))),
    "squeeze": (lambda d, p: DP.squeeze(d[0], p[0]), [X[:, :1]], [_i64(1)], X[:, 0]),
    "unsqueeze": (lambda d, p: DP.unsqueeze(d[0], p[0]), [X], [_i64(-1, 0)], X[None, ..., None]),
    "cumsum": (lambda d, p: DP.scan("cumsum", d[0], p[0], reverse=True), [X], [_i64(1)],
               np.flip(np.cumsum(np.flip(X, 1), 1), 1)),
    "cumprod": (lambda d, p: DP.scan("cumprod", d[0], p[0]), [X], [np.array(2, "int64")],
                np.cumprod(X, 2)),
    "trilu": (lambda d, p: DP.trilu(d[0], p[0], upper=False), [X], [_i64(-1)], np.tril(X, -1)),
    "topk": (lambda d, p: relay.Tuple(list(DP.topk(d[0], p[0], axis=1, dtype="int64"))), [X],
             [_i64(2)], (-np.sort(-X, 1)[:, :2], np.argsort(-X, 1, kind="stable")[:, :2])),
    "one_hot": (lambda d, p: DP.one_hot(d[0], relay.const(5.0), relay.const(-1.0), p[0]),
                [_i64(0, 2, 1)], [_i64(4)], np.where(np.eye(4)[[0, 2, 1]] > 0, 5.0, -1.0)),
    "split": (lambda d, p: DP.split(d[0], p[0], axis=2), [X], [_i64(1, 3)],
              (X[..., :1], X[..., 1:])),
    "resize2d": (lambda d, p: DP.resize(2, d[0], p[0], p[1], p[2], method="nearest_neighbor",
                                        coordinate_transformation_mode="asymmetric",
                                        rounding_method="floor"),
                 [IMG], [_i64(8, 10), np.array([2.0, 2.0], "float32"), np.zeros(0, "float32")],
                 IMG.repeat(2, 2).repeat(2, 3)),
    "nms": (lambda d, p: DP.non_max_suppression(d[0], d[1], p[0], p[1], p[2]), [BOXES, SCORES],
            [_i64(2), np.array([0.5], "float32"), np.zeros(0, "float32")],
            _i64(0, 0, 0, 0, 0, 2).reshape(2, 3)),
}


def _function(name):
    build, data, params, _ = CASES[name]
    dvars = [relay.var(f"d{i}", shape=a.shape, dtype=a.dtype.name) for i, a in enumerate(data)]
    pvars = [relay.var(f"p{i}", shape=a.shape, dtype=a.dtype.name) for i, a in enumerate(params)]
    return relay.Function(dvars + pvars, build(dvars, pvars))


def _check(got, want):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _check(g, w)
        return
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["numpy", "cpu"])
@pytest.mark.parametrize("name", list(CASES))
def test_the_vm_runs_it_with_the_parameter_at_run_time(name, target):
    _, data, params, want = CASES[name]
    mod = relay.IRModule.from_expr(_function(name))
    run = relay.create_executor("vm", mod, target=target).evaluate()
    _check(run(*data, *params), want)


@pytest.mark.parametrize("name", list(CASES))
def test_constant_parameters_become_the_static_op(name):
    _, data, params, want = CASES[name]
    fn = _function(name)
    n = len(data)
    body = bind(fn.body, {v: relay.const(a) for v, a in zip(fn.params[n:], params)})
    mod = relay.IRModule.from_expr(relay.Function(fn.params[:n], body))
    mod = relay.transform.DynamicToStatic()(relay.transform.InferType()(mod))
    assert "dyn." not in mod.astext(), mod.astext()
    _check(relay.create_executor("debug", mod).evaluate()(*data), want)


def test_result_rank_comes_from_the_parameter_length():
    x = relay.var("x", shape=(2, 3, 4))
    axes = relay.var("axes", shape=(2,), dtype="int64")
    body = relay.Tuple([DP.reduce("sum", x, axes), DP.reduce("sum", x, axes, keepdims=True),
                        DP.unsqueeze(x, axes), DP.squeeze(x, axes)])
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, axes], body)))
    ranks = [len(t.shape) for t in mod["main"].checked_type.ret_type.fields]
    assert ranks == [1, 3, 5, 1]
    assert all(isinstance(d, Any) for t in mod["main"].checked_type.ret_type.fields
               for d in t.shape)


def test_a_parameter_without_a_static_length_is_a_type_error():
    x = relay.var("x", shape=(2, 3))
    axes = relay.var("axes", shape=(relay.Any(),), dtype="int64")
    with pytest.raises(relay.TypeInferenceError, match="axes must be a 1-D integer tensor of "
                                                       "static length"):
        relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function([x, axes], DP.reduce("sum", x, axes))))
    k = relay.var("k", shape=(2,), dtype="int64")
    with pytest.raises(relay.TypeInferenceError, match="k must be a scalar or a 1-element"):
        relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function([x, k], DP.trilu(x, k))))


def test_a_bad_run_time_value_is_a_clear_error():
    fn = _function("split")
    run = relay.create_executor("vm", relay.IRModule.from_expr(fn), target="numpy").evaluate()
    with pytest.raises(relay.Error, match="add up to the extent 4"):
        run(X, _i64(1, 2))


def test_every_new_op_is_in_the_dynamic_table():
    ours = {n for n in DYNAMIC if n.split(".", 1)[1] in (
        *DP.REDUCTIONS, "squeeze", "unsqueeze", "cumsum", "cumprod", "trilu", "topk", "one_hot",
        "split", "image.resize1d", "image.resize2d", "image.resize3d",
        "vision.non_max_suppression")}
    assert len(ours) == len(DP.REDUCTIONS) + 12
