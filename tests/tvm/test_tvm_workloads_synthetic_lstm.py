"""Relay's ``relay.testing.synthetic`` and ``relay.testing.lstm`` workloads and the
``ChangeBatch`` rewrite (``relay/_change_batch.py``) through ``relayir.tvm``: the inputs,
weights and types Relay's tests rely on, and each net's value against a numpy
reference on the interpreter and on a compiled executor."""

from __future__ import annotations

import numpy as np
import pytest

import relayir
from relayir.tvm import ir, relay
from relayir.tvm.relay._change_batch import change_batch
from relayir.tvm.relay.testing import lstm, synthetic

SYNTHETIC_WEIGHTS = ["dense_weight", "conv_weight", "bias", "batch_norm_gamma",
                     "batch_norm_beta", "batch_norm_moving_mean", "batch_norm_moving_var",
                     "dense2_weight", "conv2_weight"]


# ------------------------------------------------------------ numpy references


def _conv3x3_same(x, w):
    _, _, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((x.shape[0], w.shape[0], h, wd))
    for dy in range(3):
        for dx in range(3):
            out += np.einsum("nchw,oc->nohw", padded[:, :, dy:dy + h, dx:dx + wd],
                             w[:, :, dy, dx])
    return out


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _synthetic_reference(x, p):
    def block(v, dense, conv):
        rows = np.maximum(v.reshape(-1, x.shape[3]) @ p[dense].T, 0).reshape(x.shape)
        return rows + _softmax(_conv3x3_same(v, p[conv]))

    def per_channel(name):
        return p[name][None, :, None, None]

    y = block(x, "dense_weight", "conv_weight") + per_channel("bias")
    y = (y - per_channel("batch_norm_moving_mean")) / np.sqrt(
        per_channel("batch_norm_moving_var") + 1e-5)
    y = y * per_channel("batch_norm_gamma") + per_channel("batch_norm_beta")
    return block(y, "dense2_weight", "conv2_weight")


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _lstm_reference(inputs, p):
    h = c = np.zeros_like(inputs[0])
    for i, x in enumerate(inputs):
        gates = (x @ p[f"i2h_{i}_weight"].T + p[f"i2h_{i}_bias"]
                 + h @ p[f"h2h_{i}_weight"].T + p[f"h2h_{i}_bias"])
        in_gate, forget, transform, out_gate = np.split(gates, 4, axis=1)
        c = _sigmoid(forget) * c + _sigmoid(in_gate) * np.tanh(transform)
        h = _sigmoid(out_gate) * np.tanh(c)
    return h


# ------------------------------------------------------------ helpers


def _random_params(mod, rng, skip=("data",)):
    """A value for every parameter not in ``skip`` (positive for variances, so the
    check exercises every weight rather than the workload's even ones)."""
    out = {}
    for p in mod["main"].params:
        if p.name_hint in skip:
            continue
        t = p.checked_type
        shape = tuple(int(d) for d in t.shape)
        low = 0.5 if p.name_hint.endswith("var") else -1.0
        out[p.name_hint] = rng.uniform(low, 1.5, shape).astype(t.dtype)
    return out


def _compiler_for(kind: str, request) -> None:
    """The compiled executors build C for target ``"llvm"``: skip them without a compiler."""
    if kind != "debug":
        request.getfixturevalue("needs_cc")


def _positional(mod, inputs, params):
    """``@main``'s arguments in order: the step inputs (all named ``data``) in turn,
    the weights by name."""
    feed = iter(inputs)
    return [next(feed) if p.name_hint == "data" else params[p.name_hint]
            for p in mod["main"].params]


# ------------------------------------------------------------ synthetic


def test_synthetic_has_relays_inputs_weights_and_types():
    mod, params = synthetic.get_workload()
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["data", *SYNTHETIC_WEIGHTS]
    assert main.params[0].type_annotation == relay.TensorType((1, 3, 24, 12))
    assert main.checked_type.ret_type == relay.TensorType((1, 3, 24, 12))
    assert list(params) == SYNTHETIC_WEIGHTS
    shapes = {k: v.shape for k, v in params.items()}
    assert shapes["dense_weight"] == shapes["dense2_weight"] == (12, 12)
    assert shapes["conv_weight"] == shapes["conv2_weight"] == (3, 3, 3, 3)
    assert all(shapes[k] == (3,) for k in SYNTHETIC_WEIGHTS[2:7])
    # Relay's Constant initializer: each weight sums to one; vectors by their names
    np.testing.assert_allclose(params["conv_weight"].numpy().sum(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(params["dense2_weight"].numpy(), np.full((12, 12), 1 / 144))
    assert not params["bias"].numpy().any() and (params["batch_norm_moving_var"].numpy() == 1).all()
    assert ir.structural_equal(relay.fromtext(mod.astext()), mod)


def test_synthetic_follows_its_input_shape_and_weight_dtype():
    mod, params = synthetic.get_workload(input_shape=(2, 4, 6, 5), dtype="float64")
    assert mod["main"].checked_type.ret_type == relay.TensorType((2, 4, 6, 5), "float64")
    assert params["dense_weight"].shape == (5, 5) and params["conv2_weight"].shape == (4, 4, 3, 3)
    assert {str(v.dtype) for v in params.values()} == {"float64"}
    net = synthetic.get_net(wtype="float16")
    assert net.params[1].type_annotation == relay.TensorType((12, 12), "float16")
    assert net.params[0].type_annotation.dtype == "float32"


@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_synthetic_matches_numpy(kind, request):
    _compiler_for(kind, request)
    mod, _ = synthetic.get_workload(input_shape=(2, 3, 5, 4))
    rng = np.random.default_rng(0)
    params = _random_params(mod, rng)
    x = rng.standard_normal((2, 3, 5, 4)).astype("float32")
    out = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(x, **params)
    expected = _synthetic_reference(x.astype("float64"),
                                    {k: v.astype("float64") for k, v in params.items()})
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_synthetic_fuses_into_seven_distinct_functions():
    mod, _ = synthetic.get_workload()
    assert len(relay.analysis.extract_fused_functions(mod)) == 7


# ------------------------------------------------------------ lstm


def test_lstm_names_each_steps_input_data_and_its_own_weights():
    mod, params = lstm.get_workload(iterations=3, num_hidden=4, batch_size=2)
    main = mod["main"]
    names = [p.name_hint for p in main.params]
    assert names.count("data") == 3
    assert set(params) == {f"{layer}_{i}_{kind}" for i in range(3) for layer in ("i2h", "h2h")
                           for kind in ("weight", "bias")}
    assert params["i2h_2_weight"].shape == (16, 4) and params["h2h_0_bias"].shape == (16,)
    assert all(p.type_annotation == relay.TensorType((2, 4)) for p in main.params
               if p.name_hint == "data")
    assert main.ret_type == relay.TensorType((2, 4))
    assert main.checked_type.ret_type == relay.TensorType((2, 4))
    # one cell function literal per step, bound by typed lets
    text = mod.astext()
    assert text.count("fn (%inputs") == 3 and "let %slice_gates" in text
    assert ir.structural_equal(relay.fromtext(text), mod)


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_lstm_matches_numpy(kind, request):
    _compiler_for(kind, request)
    mod, _ = lstm.get_workload(iterations=3, num_hidden=4, batch_size=2)
    rng = np.random.default_rng(1)
    params = _random_params(mod, rng)
    inputs = [rng.standard_normal((2, 4)).astype("float32") for _ in range(3)]
    fn = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    out = fn(*_positional(mod, inputs, params))
    np.testing.assert_allclose(out.numpy(), _lstm_reference(inputs, params),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_lstm_in_other_float_dtypes(dtype):
    mod, params = lstm.get_workload(iterations=2, num_hidden=3, dtype=dtype)
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 3), dtype)
    assert {str(v.dtype) for v in params.values()} == {dtype}
    rng = np.random.default_rng(2)
    inputs = [rng.uniform(-1, 1, (1, 3)).astype(dtype) for _ in range(2)]
    numpy_params = {k: v.numpy() for k, v in params.items()}
    out = relay.create_executor("debug", mod=mod).evaluate()(
        *_positional(mod, inputs, numpy_params)).numpy()
    assert out.dtype == dtype
    expected = _lstm_reference([x.astype("float64") for x in inputs],
                               {k: v.astype("float64") for k, v in numpy_params.items()})
    tol = 1e-2 if dtype == "float16" else 1e-12
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)


# ------------------------------------------------------------ change_batch


def test_change_batch_retypes_and_keeps_the_per_sample_values():
    mod, params = synthetic.get_workload()
    data = mod["main"].params[0]
    new = change_batch(mod, {data: 0}, batch_size=3)
    assert new["main"].checked_type.ret_type == relay.TensorType((3, 3, 24, 12))
    assert new["main"].params[0].name_hint == "data"
    assert new["main"].params[1] is mod["main"].params[1]        # weights untouched
    assert mod["main"].params[0].type_annotation.shape[0] == 1   # the input module too
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 3, 24, 12)).astype("float32")
    batched = relay.create_executor("debug", mod=new).evaluate()(x, **params).numpy()
    one = relay.create_executor("debug", mod=mod).evaluate()
    for row in range(3):
        np.testing.assert_allclose(batched[row:row + 1], one(x[row:row + 1], **params).numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_change_batch_on_another_axis_and_its_errors():
    x = relay.var("x", shape=(4, 2))
    mod = relay.transform.InferType()(relayir.IRModule.from_expr(relay.Function(
        [x], relay.nn.relu(x))))
    new = change_batch(mod, {mod["main"].params[0]: -1}, batch_size=7)
    assert new["main"].checked_type.ret_type == relay.TensorType((4, 7))
    with pytest.raises(relayir.Error, match="no axis 2"):
        change_batch(mod, {mod["main"].params[0]: 2})
    w = relay.var("w")
    bare = relayir.IRModule.from_expr(relay.Function([w], w))
    with pytest.raises(relayir.Error, match="tensor type annotation"):
        change_batch(bare, {bare["main"].params[0]: 0})
