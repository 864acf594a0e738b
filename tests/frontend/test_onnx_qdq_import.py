"""Quantized ONNX models import as the QNN dialect and run as integer arithmetic that
equals ONNX Runtime bit for bit: the ONNX backend's node cases of the quantization ops
(8-bit ones), and QLinear* / *Integer nodes over random data."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import relayir as relay

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

OPS = ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "MatMulInteger",
       "ConvInteger", "DynamicQuantizeLinear")
EIGHT_BIT = {onnx.TensorProto.FLOAT, onnx.TensorProto.INT8, onnx.TensorProto.UINT8,
             onnx.TensorProto.INT32}


def _node_cases():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    out = []
    for c in cases:
        g = c.model.graph
        if len(g.node) != 1 or g.node[0].op_type not in OPS:
            continue
        elems = {v.type.tensor_type.elem_type for v in list(g.input) + list(g.output)}
        if elems <= EIGHT_BIT:
            out.append(c)
    return out


CASES = _node_cases()
# "Non per-tensor quantization is not supported now" (a per-channel weight zero point)
ORT_REFUSES = {"test_convinteger_with_padding"}


def _arrays(values):
    from onnx import numpy_helper

    return [numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v for v in values]


def run_ort(model, inputs):
    """onnxruntime 1.32 implements these ops up to opset 21; their 8-bit semantics have not
    changed since, so a newer case runs at 21."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and o.version > 21:
            o.version = 21
    inputs = [np.asarray(v) for v in inputs]
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip([i.name for i in sess.get_inputs()], inputs)))


def run_relay(model, inputs, target="numpy", executor="debug"):
    mod, params = relay.frontend.from_onnx(model)
    f = relay.create_executor(executor, mod=mod, target=target, params=params).evaluate()
    out = f(*inputs)
    return (list(out) if isinstance(out, (list, tuple)) else [out]), mod


def assert_bits(got, want):
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        assert np.array_equal(g, w), f"{np.count_nonzero(g != w)} values differ: {g} vs {w}"


def test_the_node_cases_are_found():
    names = {c.name for c in CASES}
    assert {"test_qlinearconv", "test_qlinearmatmul_2D_uint8_float32", "test_matmulinteger",
            "test_convinteger_with_padding", "test_quantizelinear",
            "test_dequantizelinear"} <= names, sorted(names)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_backend_node_cases_import_as_qnn_and_equal_onnx_and_onnxruntime(case):
    for inputs, expected in case.data_sets:
        inputs, expected = _arrays(inputs), _arrays(expected)
        got, mod = run_relay(case.model, inputs)
        assert_bits(got, expected)
        if case.name not in ORT_REFUSES:
            assert_bits(got, run_ort(case.model, inputs))
    if "blocked" not in case.name:  # blocked scales keep the float emulation
        assert "qnn." in mod.astext()


def _graph(nodes, inputs, outputs, inits=()):
    g = onnx.helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 21)])


def _init(name, value):
    return onnx.numpy_helper.from_array(np.asarray(value), name)


@pytest.mark.parametrize("executor", ["graph", "vm"])
def test_a_qlinear_chain_with_constant_weights_runs_as_integers_on_cpu(executor):
    """QuantizeLinear → QLinearConv (per-channel) → QLinearMatMul → DequantizeLinear."""
    r = np.random.default_rng(0)
    T = onnx.TensorProto
    inits = [
        _init("xs", np.float32(0.05)), _init("xz", np.uint8(120)),
        _init("w", r.integers(-128, 128, (8, 3, 3, 3)).astype("int8")),
        _init("ws", r.uniform(0.002, 0.02, 8).astype("float32")),
        _init("wz", np.zeros(8, "int8")), _init("b", r.integers(-500, 500, 8).astype("int32")),
        _init("ys", np.float32(0.2)), _init("yz", np.uint8(110)),
        _init("shape", np.array([1, -1], "int64")),
        _init("m", r.integers(-128, 128, (8 * 6 * 6, 10)).astype("int8")),
        _init("ms", np.float32(0.01)), _init("mz", np.int8(0)),
        _init("os", np.float32(0.3)), _init("oz", np.uint8(128)),
    ]
    nodes = [
        onnx.helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        onnx.helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz",
                                              "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        onnx.helper.make_node("Reshape", ["c", "shape"], ["f"]),
        onnx.helper.make_node("QLinearMatMul", ["f", "ys", "yz", "m", "ms", "mz", "os", "oz"],
                              ["o"]),
        onnx.helper.make_node("DequantizeLinear", ["o", "os", "oz"], ["y"]),
    ]
    model = _graph(nodes, [onnx.helper.make_tensor_value_info("x", T.FLOAT, [1, 3, 12, 12])],
                   [onnx.helper.make_tensor_value_info("y", T.FLOAT, [1, 10]),
                    onnx.helper.make_tensor_value_info("c", T.UINT8, None)], inits)
    x = (r.standard_normal((1, 3, 12, 12)) * 3).astype("float32")
    got, mod = run_relay(model, [x], target="cpu", executor=executor)
    assert_bits(got, run_ort(model, [x]))
    assert {"qnn.conv2d", "qnn.dense", "qnn.quantize"} <= {
        n.split("(")[0].split()[-1] for n in mod.astext().split("\n") if "qnn." in n}


# ---------------------------------------------------------------- QDQ models


def _float_cnn(r):
    """Conv → Conv → residual Add → MaxPool → GlobalAveragePool → Flatten → Gemm."""
    T, h = onnx.TensorProto, onnx.helper

    def init(name, *shape, scale=0.3):
        return _init(name, (r.standard_normal(shape) * scale).astype("float32"))

    inits = [init("w1", 8, 3, 3, 3), init("b1", 8, scale=0.1), init("w2", 8, 8, 3, 3, scale=0.2),
             init("b2", 8, scale=0.1), init("wd", 10, 8), init("bd", 10, scale=0.1)]
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             h.make_node("Add", ["c2", "r1"], ["a"]),
             h.make_node("Relu", ["a"], ["r2"]),
             h.make_node("MaxPool", ["r2"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("GlobalAveragePool", ["mp"], ["g"]),
             h.make_node("Flatten", ["g"], ["f"]),
             h.make_node("Gemm", ["f", "wd", "bd"], ["y"], transB=1)]
    return _graph(nodes, [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 16, 16])],
                  [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)


@pytest.fixture(scope="module")
def qdq_model(tmp_path_factory):
    """The float CNN quantized by onnxruntime's ``quantize_static`` (QDQ, per-channel
    int8 weights, uint8 activations), as users make them."""
    quantization = pytest.importorskip("onnxruntime.quantization")
    r = np.random.default_rng(0)
    d = tmp_path_factory.mktemp("qdq")
    onnx.save(_float_cnn(r), d / "f.onnx")

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": r.standard_normal((1, 3, 16, 16)).astype("float32")}
                            for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    quantization.quantize_static(
        str(d / "f.onnx"), str(d / "q.onnx"), Reader(), quant_format=quantization.QuantFormat.QDQ,
        per_channel=True, activation_type=quantization.QuantType.QUInt8,
        weight_type=quantization.QuantType.QInt8)
    return onnx.load(d / "q.onnx")


@pytest.mark.parametrize("executor", ["graph", "vm", "aot"])
def test_an_onnxruntime_qdq_model_runs_as_int8_and_equals_onnxruntime(qdq_model, executor):
    x = np.random.default_rng(5).standard_normal((1, 3, 16, 16)).astype("float32")
    got, _ = run_relay(qdq_model, [x], target="cpu", executor=executor)
    assert_bits(got, run_ort(qdq_model, [x]))


def test_the_qdq_model_has_no_float_product_left_after_the_pipeline(qdq_model):
    mod, params = relay.frontend.from_onnx(qdq_model)
    mod = relay.transform.InferType()(mod)
    with relay.transform.PassContext(opt_level=3):
        mod = relay.transform.optimize(mod, fuse=False)
    text = mod.astext()
    floats = [line for line in text.split("\n") if "nn.conv2d(" in line or "nn.dense(" in line]
    assert floats == []  # every product is the packed 8-bit one
    assert text.count("qnn.contrib_conv2d_packed(") == 2
    assert text.count("qnn.contrib_dense_packed(") == 1
    assert "qnn." not in text.replace("qnn.contrib_dense_packed", "").replace(
        "qnn.contrib_conv2d_packed", "")


def test_an_onnxruntime_dynamic_model_imports_as_packed_int8_and_matches(tmp_path):
    """``quantize_dynamic`` writes DynamicQuantizeLinear → MatMulInteger → scale Mul: the
    run-time zero point goes into the packed product's correction."""
    quantization = pytest.importorskip("onnxruntime.quantization")
    r = np.random.default_rng(3)
    T, h = onnx.TensorProto, onnx.helper
    inits = [_init("w1", (r.standard_normal((32, 64)) * 0.3).astype("float32")),
             _init("b1", (r.standard_normal(64) * 0.1).astype("float32")),
             _init("w2", (r.standard_normal((64, 10)) * 0.3).astype("float32"))]
    nodes = [h.make_node("MatMul", ["x", "w1"], ["m1"]), h.make_node("Add", ["m1", "b1"], ["a"]),
             h.make_node("Relu", ["a"], ["r"]), h.make_node("MatMul", ["r", "w2"], ["y"])]
    model = _graph(nodes, [h.make_tensor_value_info("x", T.FLOAT, [3, 5, 32])],
                   [h.make_tensor_value_info("y", T.FLOAT, [3, 5, 10])], inits)
    onnx.save(model, tmp_path / "f.onnx")
    quantization.quantize_dynamic(str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"),
                                  weight_type=quantization.QuantType.QInt8)
    q = onnx.load(tmp_path / "q.onnx")
    x = r.standard_normal((3, 5, 32)).astype("float32")
    got, mod = run_relay(q, [x], target="cpu", executor="graph")
    want = run_ort(q, [x])[0]
    assert np.abs(got[0] - want).max() <= 1e-5 * np.abs(want).max()
    with relay.transform.PassContext(opt_level=3):
        text = relay.transform.optimize(relay.transform.InferType()(mod), fuse=False).astext()
    assert text.count("qnn.contrib_dense_packed(") == 2
