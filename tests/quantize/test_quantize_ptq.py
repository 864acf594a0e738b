"""Post-training quantization (``relay.quantize.quantize``): static (calibrated QDQ that
builds to int8) and dynamic (run-time-quantized dense layers), and the one-line errors
for a dataset or model it cannot quantize."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.backend.target import Target
from relayir.ir.functor import post_order
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


def mobile_block():
    """MobileNetV2's block: conv → ReLU6 (clip) → depthwise → ReLU6 (maximum / minimum, as
    ONNX's Clip imports) → pointwise → residual add → global pool → dense."""
    x = relay.var("x", shape=(1, 3, 16, 16), dtype="float32")
    names = {"w1": _w(16, 3, 3, 3), "b1": _w(16, scale=0.1), "wd": _w(16, 1, 3, 3),
             "bd": _w(16, scale=0.1), "wp": _w(16, 16, 1, 1, scale=0.2),
             "bp": _w(16, scale=0.1), "wf": _w(10, 16)}
    p = {k: relay.var(k, shape=v.shape, dtype="float32") for k, v in names.items()}
    c1 = relay.nn.bias_add(relay.nn.conv2d(x, p["w1"], padding=(1, 1)), p["b1"])
    r1 = relay.clip(c1, 0.0, 6.0)
    d = relay.nn.bias_add(relay.nn.conv2d(r1, p["wd"], padding=(1, 1), groups=16), p["bd"])
    r2 = relay.minimum(relay.maximum(d, relay.const(0.0)), relay.const(6.0))
    pw = relay.nn.bias_add(relay.nn.conv2d(r2, p["wp"]), p["bp"])
    g = relay.nn.global_avg_pool2d(pw + r1)
    y = relay.nn.dense(relay.nn.batch_flatten(g), p["wf"])
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


def _calls_op(e):
    return getattr(getattr(e, "op", None), "name", None)


def _calls(mod, name):
    return [e for e in post_order(mod["main"]) if _calls_op(e) == name]


def _optimized_text(mod, target=None):
    with relay.transform.PassContext(opt_level=3):
        return relay.transform.optimize(relay.transform.InferType()(mod), fuse=False,
                                        target=target).astext()


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


def test_depthwise_convolutions_and_relu6_run_as_int8_in_nhwc():
    mod, params = mobile_block()
    qmod = relay.quantize.quantize(mod, params, dataset=_samples(16, (1, 3, 16, 16)))
    # a chain whose input is the previous chain's output reuses its pair: no quantize of
    # a dequantize in the same parameters
    pairs = [(c.args[1].data.item(), c.args[2].data.item(), c.args[0].args[1].data.item(),
              c.args[0].args[2].data.item()) for c in _calls(qmod, "qnn.quantize")
             if _calls_op(c.args[0]) == "qnn.dequantize"]
    assert pairs and all(p[:2] != p[2:] for p in pairs)  # the dense input: a new range
    text = _optimized_text(qmod, target=Target("cpu"))
    # each requantized as it is stored (FuseRequantize)
    assert text.count("qnn.contrib_conv2d_packed_requant(") == 2
    assert text.count("qnn.contrib_depthwise_conv2d_requant(") == 1
    convs = [line for line in text.splitlines() if "qnn.contrib_" in line and "conv2d" in line]
    assert all('layout="NHWC"' in line for line in convs)  # the cpu target, opt level >= 2
    assert text.count("layout_transform(") == 2  # into NHWC after the input, out at the end
    assert "nn.conv2d(" not in text and "minimum(" not in text and "maximum(" not in text
    x = R.standard_normal((1, 3, 16, 16)).astype("float32")
    with relay.transform.PassContext(opt_level=3):
        got = _run(qmod, x)
    want = _run(mod, x, params=params)
    assert np.abs(got - want).max() < 0.1 * np.abs(want).max()
    with relay.transform.PassContext(opt_level=1):
        nchw = _run(qmod, x)  # NCHW, the int32 accumulators requantized apart
    assert np.array_equal(got, nchw) and np.array_equal(_run(qmod, x), got)


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
