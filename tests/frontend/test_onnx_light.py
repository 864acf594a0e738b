"""The 9 ``light`` models of onnx's backend test data, built for the cpu target.

Each model is fed the input onnx's test runner generates (``arange(n) / n``, float32) and
must match the stored ``output_0.pb`` with the runner's tolerance (rtol 1e-3, atol 1e-7).
Those outputs are softmaxes of equal logits (the light models' weights are constants),
so the logits the softmax reads (the output itself where the model has no softmax) are
also exposed as a second output and checked against onnxruntime.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

import relayir  # noqa: E402
from relayir.frontend import from_onnx  # noqa: E402

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
FAST = {"bvlc_alexnet", "squeezenet", "zfnet512"}
MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
          "shufflenet", "squeezenet", "vgg19", "zfnet512"]


def _input(model):
    """The runner's dummy input: ``arange(n).reshape(shape) / n`` in float32."""
    inits = {i.name for i in model.graph.initializer}
    (vi,) = [i for i in model.graph.input if i.name not in inits]
    shape = tuple(d.dim_value if d.HasField("dim_value") else 1
                  for d in vi.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    return vi.name, (np.arange(n).reshape(shape) / n).astype(np.float32)


def _with_logits(model):
    """The model with the tensor its final Softmax reads added as a second output."""
    last = model.graph.node[-1]
    logits = last.input[0] if last.op_type == "Softmax" else model.graph.output[0].name
    model.graph.output.append(helper.make_tensor_value_info(logits, onnx.TensorProto.FLOAT,
                                                            None))
    return model


def _onnxruntime(model, name, data):
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {name: data})


@pytest.mark.parametrize("name", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow)
                                  for n in MODELS])
def test_light_model_matches_expected_output(name):
    model = onnx.load(os.path.join(LIGHT, f"light_{name}.onnx"))
    expected = numpy_helper.to_array(
        onnx.load_tensor(os.path.join(LIGHT, f"light_{name}_output_0.pb")))
    in_name, data = _input(model)
    model = _with_logits(model)

    start = time.perf_counter()
    mod, params = from_onnx(model, shape={in_name: data.shape})
    imported = time.perf_counter()
    with relayir.transform.PassContext(opt_level=3):
        lib = relayir.build(mod, target="cpu", params=params)
    built = time.perf_counter()
    m = relayir.graph_executor.GraphModule(lib)
    m.set_input(in_name, data)  # by the name the ONNX model declares
    m.run()
    out, logits = m.get_output(0), m.get_output(1)
    print(f"\n{name}: import {imported - start:.1f}s, build {built - imported:.1f}s, "
          f"max |out - expected| {np.abs(out - expected).max():.3g}")

    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-7)
    _, want = _onnxruntime(model, in_name, data)
    scale = np.abs(want).max()
    print(f"{name}: max |logits - onnxruntime| {np.abs(logits - want).max():.3g} "
          f"(logits up to {scale:.3g})")
    np.testing.assert_allclose(logits, want, rtol=1e-3, atol=1e-5 * max(scale, 1.0))
