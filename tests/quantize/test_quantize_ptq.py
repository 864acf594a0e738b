"""Post-training quantization (``relay.quantize.quantize``): static (calibrated QDQ that
builds to int8) and dynamic (run-time-quantized dense layers), and the one-line errors
for a dataset or model it cannot quantize."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.quantize import QuantizationError

R = np.random.default_rng(0)


def _w(*shape, scale=0.3):
    return (R.standard_normal(shape) * scale).astype("float32")


def cnn():
    """conv-relu → conv + residual add → relu → max pool → global pool → dense."""
    x = relay.var("x", shape=(1, 3, 16, 16), dtype="float32")
    names = {"w1": _w(8, 3, 3, 3), "b1": _w(8, scale=0.1), "w2": _w(8, 8, 3, 3, scale=0.2),
             "b2": _w(8, scale=0.1), "wd": _w(10, 8), "bd": _w(10, scale=0.1)}
    p = {k: relay.var(k, shape=v.shape, dtype="float32") for k, v in names.items()}
    r1 = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, p["w1"], padding=(1, 1)), p["b1"]))
    c2 = relay.nn.bias_add(relay.nn.conv2d(r1, p["w2"], padding=(1, 1)), p["b2"])
    r2 = relay.nn.relu(c2 + r1)
    g = relay.nn.global_avg_pool2d(relay.nn.max_pool2d(r2, pool_size=(2, 2), strides=(2, 2)))
    y = relay.nn.bias_add(relay.nn.dense(relay.nn.batch_flatten(g), p["wd"]), p["bd"])
    return relay.IRModule.from_expr(relay.Function([x, *p.values()], y)), names


def mlp():
    x = relay.var("x", shape=(4, 32), dtype="float32")
    names = {"w1": _w(64, 32), "b1": _w(64, scale=0.1), "w2": _w(10, 64)}
    p = {k: relay.var(k, shape=v.shape, dtype="float32") for k, v in names.items()}
    h = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, p["w1"]), p["b1"]))
    y = relay.nn.dense(h, p["w2"])
    return relay.IRModule.from_expr(relay.Function([x, *p.values()], y)), names


def _samples(n, shape):
    return [{"x": R.standard_normal(shape).astype("float32")} for _ in range(n)]


def _run(mod, x, executor="graph", params=None):
    return relay.create_executor(executor, mod=mod, target="cpu", params=params).evaluate()(x)


def _optimized_text(mod):
    with relay.transform.PassContext(opt_level=3):
        return relay.transform.optimize(relay.transform.InferType()(mod), fuse=False).astext()


@pytest.mark.parametrize("calibration", ["minmax", "percentile", "entropy"])
def test_static_quantization_runs_as_int8_close_to_float(calibration):
    mod, params = cnn()
    qmod = relay.quantize.quantize(mod, params, dataset=_samples(16, (1, 3, 16, 16)),
                                   calibration=calibration)
    text = _optimized_text(qmod)
    assert text.count("qnn.contrib_conv2d_packed(") == 2 and "qnn.contrib_dense_packed(" in text
    assert "nn.conv2d(" not in text and "nn.dense(" not in text
    x = R.standard_normal((1, 3, 16, 16)).astype("float32")
    want, got = _run(mod, x, params=params), _run(qmod, x)
    assert np.abs(got - want).max() < 0.1 * np.abs(want).max()


def test_the_quantized_model_is_the_same_on_every_executor():
    mod, params = cnn()
    qmod = relay.quantize.quantize(mod, params, dataset=_samples(4, (1, 3, 16, 16)))
    x = R.standard_normal((1, 3, 16, 16)).astype("float32")
    outs = [_run(qmod, x, ex) for ex in ("graph", "vm", "aot")]
    assert all(np.array_equal(outs[0], o) for o in outs[1:])


def test_dynamic_quantization_quantizes_dense_layers_without_data():
    mod, params = mlp()
    qmod = relay.quantize.quantize(mod, params, mode="dynamic")
    assert _optimized_text(qmod).count("qnn.contrib_dense_packed(") == 2
    x = R.standard_normal((4, 32)).astype("float32")
    want, got = _run(mod, x, params=params), _run(qmod, x)
    assert np.abs(got - want).max() < 0.05 * np.abs(want).max()


@pytest.mark.parametrize("dataset,fragment", [
    ([], "the calibration dataset is empty"),
    (None, "the calibration dataset is empty"),
    ([{"x": np.zeros((1, 3, 8, 8), "float32")}],
     "calibration sample 0: input 'x' is float32[1, 3, 8, 8], the model takes "
     "float32[1, 3, 16, 16]"),
    ([{"x": np.zeros((1, 3, 16, 16), "float64")}],
     "input 'x' is float64[1, 3, 16, 16], the model takes float32"),
    ([{"y": np.zeros((1, 3, 16, 16), "float32")}], "calibration sample 0 lacks input 'x'"),
])
def test_a_bad_dataset_is_a_one_line_error(dataset, fragment):
    mod, params = cnn()
    with pytest.raises(QuantizationError) as info:
        relay.quantize.quantize(mod, params, dataset=dataset)
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_a_model_without_a_quantizable_op_is_a_one_line_error(mode):
    x = relay.var("x", shape=(2, 3), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    with pytest.raises(QuantizationError, match="no quantizable op"):
        relay.quantize.quantize(mod, {}, dataset=_samples(1, (2, 3)), mode=mode)


def test_an_unknown_mode_is_an_error():
    mod, params = mlp()
    with pytest.raises(QuantizationError, match="mode must be 'static' or 'dynamic'"):
        relay.quantize.quantize(mod, params, mode="int4")
