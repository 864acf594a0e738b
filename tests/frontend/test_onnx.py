"""ONNX frontend: per-op models checked against onnx's reference evaluator, exported
torch models against onnxruntime, and the error paths."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import relayir  # noqa: E402
from relayir.executor import create_executor  # noqa: E402
from relayir.frontend import UnsupportedOperatorError, from_onnx  # noqa: E402
from relayir.testing.onnx_oracle import expected_outputs  # noqa: E402

F = TensorProto.FLOAT
RNG = np.random.default_rng(0)


def _vi(name, arr):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype),
                                         arr.shape)


def _model(nodes, inputs, outputs, opset, inits=(), out_type=0):
    graph = helper.make_graph(
        nodes, "g", [_vi(n, a) for n, a in inputs.items()],
        [helper.make_tensor_value_info(o, out_type, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in dict(inits).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def _run(model, inputs, **kw):
    mod, params = from_onnx(model, **kw)
    out = create_executor("debug", mod).evaluate()(*inputs.values(), **params)
    return [np.asarray(o) for o in out] if isinstance(out, (list, tuple)) else [np.asarray(out)]


def check(nodes, inputs, outputs=("y",), opset=17, inits=(), rtol=1e-5, ort=False):
    model = _model(nodes, inputs, list(outputs), opset, inits, out_type=F if ort else 0)
    # ort: where onnx's reference evaluator implements only the newest semantics
    want = expected_outputs(model, inputs, onnxruntime=ort)
    got = _run(model, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == np.asarray(w).shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)


def x(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype("float32")


def node(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), **attrs)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"])
def test_binary_broadcast(op):
    check([node(op, ["a", "b"])], {"a": x(2, 3, 4), "b": x(3, 1)})


def test_pow():
    check([node("Pow", ["a", "b"])], {"a": x(2, 3, lo=0.5), "b": x(3)})


@pytest.mark.parametrize("op", ["Neg", "Abs", "Exp", "Floor", "Ceil", "Round", "Sign", "Sin",
                                "Cos", "Tanh", "Sigmoid", "Erf", "Relu", "LeakyRelu", "Elu",
                                "Selu", "HardSigmoid", "Softplus", "Identity", "Reciprocal"])
def test_unary(op):
    check([node(op, ["a"])], {"a": x(2, 5)})


@pytest.mark.parametrize("op", ["Log", "Sqrt"])
def test_unary_positive(op):
    check([node(op, ["a"])], {"a": x(2, 5, lo=0.1)})


def test_prelu_gelu():
    check([node("PRelu", ["a", "s"])], {"a": x(2, 3, 4), "s": x(3, 1)})
    check([node("Gelu", ["a"])], {"a": x(2, 5)}, opset=20)
    check([node("Gelu", ["a"], approximate="tanh")], {"a": x(2, 5)}, opset=20)


def test_compare_logic_where():
    a, b = x(3, 4), x(4)
    check([node("Less", ["a", "b"], ["c"]), node("Greater", ["a", "b"], ["d"]),
           node("Xor", ["c", "d"], ["e"]), node("Not", ["e"], ["f"]),
           node("Where", ["f", "a", "b"])], {"a": a, "b": b})
    check([node("Equal", ["a", "a"], ["c"]), node("Cast", ["c"], to=TensorProto.FLOAT)],
          {"a": a})


@pytest.mark.parametrize("opset", [6, 11, 13])
def test_clip(opset):
    if opset < 11:
        check([node("Clip", ["a"], min=-0.5, max=0.7)], {"a": x(3, 4)}, opset=opset)
    else:
        check([node("Clip", ["a", "", "hi"])], {"a": x(3, 4)}, opset=opset,
              inits={"hi": np.float32(0.3)})


def test_matmul_gemm():
    check([node("MatMul", ["a", "b"])], {"a": x(2, 3, 4), "b": x(4, 5)})
    check([node("MatMul", ["a", "b"])], {"a": x(2, 3, 4), "b": x(2, 4, 5)})
    check([node("MatMul", ["a", "b"])], {"a": x(3, 1, 3, 4), "b": x(2, 4, 5)})
    check([node("MatMul", ["a", "b"])], {"a": x(4), "b": x(2, 4, 3)})
    check([node("MatMul", ["a", "b"])], {"a": x(2, 3, 4), "b": x(4)})
    check([node("MatMul", ["a", "b"])], {"a": x(3), "b": x(3)})
    check([node("Gemm", ["a", "b", "c"], alpha=0.5, beta=2.0, transB=1)],
          {"a": x(3, 4), "b": x(5, 4), "c": x(5)})


@pytest.mark.parametrize("attrs", [dict(), dict(pads=[1, 0, 2, 1], strides=[2, 1]),
                                   dict(dilations=[2, 2], group=2),
                                   dict(auto_pad="SAME_UPPER", strides=[2, 2])])
def test_conv(attrs):
    check([node("Conv", ["a", "w", "b"], **attrs)], {"a": x(1, 4, 7, 8)},
          inits={"w": x(6, 4 // attrs.get("group", 1), 3, 3), "b": x(6)}, rtol=1e-4)


def test_pools():
    a = {"a": x(1, 2, 7, 7)}
    check([node("MaxPool", ["a"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])], a)
    check([node("AveragePool", ["a"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)], a)
    check([node("AveragePool", ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                count_include_pad=1)], a)
    check([node("GlobalAveragePool", ["a"])], a)
    check([node("GlobalMaxPool", ["a"])], a)


def test_norms():
    check([node("BatchNormalization", ["a", "s", "b", "m", "v"], epsilon=1e-3)],
          {"a": x(2, 3, 4, 4)},
          inits={"s": x(3), "b": x(3), "m": x(3), "v": x(3, lo=0.5)}, rtol=1e-4)
    check([node("LayerNormalization", ["a", "s", "b"])], {"a": x(2, 3, 8)},
          inits={"s": x(8), "b": x(8)}, rtol=1e-4)
    check([node("LayerNormalization", ["a", "s"], axis=1)], {"a": x(2, 3, 4)},
          inits={"s": x(3, 4)}, rtol=1e-4)
    check([node("RMSNormalization", ["a", "s"], axis=-2)], {"a": x(2, 3, 4)},
          inits={"s": x(3, 4)}, opset=23, rtol=1e-4)
    check([node("InstanceNormalization", ["a", "s", "b"])], {"a": x(2, 3, 4, 4)},
          inits={"s": x(3), "b": x(3)}, rtol=1e-4)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax(op, opset):
    check([node(op, ["a"], axis=1)], {"a": x(2, 3, 4)}, opset=opset, ort=True)


def test_castlike_mod_range():
    a = x(2, 3)
    check([node("CastLike", ["a", "i"])], {"a": a}, inits={"i": np.array([1])})
    check([node("Mod", ["a", "b"], fmod=1)], {"a": a, "b": x(3, lo=0.5)})
    ia, ib = np.array([-7, 7, 5, -3]), np.array([3, -3, 2, 2])
    check([node("Mod", ["a", "b"])], {"a": ia, "b": ib})
    check([node("Mod", ["a", "b"], fmod=1)], {"a": ia, "b": ib})
    check([node("Range", ["s", "l", "d"])], {},
          inits={"s": np.float32(1), "l": np.float32(4), "d": np.float32(0.5)})


def test_dropout_shape_ops():
    a = x(2, 3, 4)
    check([node("Dropout", ["a"])], {"a": a})
    check([node("Dropout", ["a"], ["y", "m"])], {"a": a}, outputs=("y", "m"))
    check([node("Flatten", ["a"], axis=2)], {"a": a})
    check([node("Transpose", ["a"], perm=[2, 0, 1])], {"a": a})
    check([node("Concat", ["a", "a"], axis=-1)], {"a": a})
    check([node("Shape", ["a"], ["s"]), node("ConstantOfShape", ["s"],
                                             value=helper.make_tensor("v", F, [1], [2.5]))],
          {"a": a})
    check([node("Expand", ["a", "s"])], {"a": x(3, 1)}, inits={"s": np.array([2, 1, 4])})
    check([node("Tile", ["a", "r"])], {"a": a}, inits={"r": np.array([1, 2, 1])})
    check([node("Pad", ["a", "p", "v"])], {"a": a},
          inits={"p": np.array([0, 1, 2, 1, 0, 1]), "v": np.float32(1.5)})
    check([node("Gather", ["a", "i"], axis=1)], {"a": a}, inits={"i": np.array([[2, -1]])})


@pytest.mark.parametrize("opset", [11, 13])
def test_reshape_squeeze_unsqueeze_split(opset):
    a = x(2, 1, 6)
    axes = {"axes": [1]} if opset < 13 else {}
    ins = ["a", "ax"] if opset >= 13 else ["a"]
    inits = {"ax": np.array([1])} if opset >= 13 else {}
    check([node("Squeeze", ins, **axes)], {"a": a}, opset=opset, inits=inits)
    check([node("Unsqueeze", ins, **axes)], {"a": a}, opset=opset, inits=inits)
    check([node("Reshape", ["a", "s"])], {"a": a}, opset=opset,
          inits={"s": np.array([0, 3, -1])})
    if opset < 13:
        check([node("Split", ["a"], ["p", "q"], axis=2, split=[2, 4])], {"a": a},
              outputs=("p", "q"), opset=opset)
    else:
        check([node("Split", ["a", "sp"], ["p", "q"], axis=2)], {"a": a},
              outputs=("p", "q"), opset=opset, inits={"sp": np.array([2, 4])})
    check([node("Split", ["a"], ["p", "q", "r"], axis=-1)], {"a": a},
          outputs=("p", "q", "r"), opset=opset)


def test_slice():
    a = x(4, 5, 6)
    check([node("Slice", ["a", "s", "e", "ax", "st"])], {"a": a},
          inits={"s": np.array([1, -1]), "e": np.array([100, 0]), "ax": np.array([0, 2]),
                 "st": np.array([2, -2])})
    check([node("Slice", ["a", "s", "e"])], {"a": a},
          inits={"s": np.array([1, 1]), "e": np.array([3, -1])})
    check([node("Slice", ["a"], starts=[1], ends=[3], axes=[1])], {"a": a}, opset=9)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                "ReduceProd"])
@pytest.mark.parametrize("opset", [11, 18])
def test_reduce(op, opset):
    a = x(2, 3, 4)
    new = opset >= (13 if op == "ReduceSum" else 18)
    if new:
        check([node(op, ["a", "ax"], keepdims=0)], {"a": a}, opset=opset,
              inits={"ax": np.array([0, -1])})
    else:
        check([node(op, ["a"], axes=[0, -1], keepdims=0)], {"a": a}, opset=opset)
    check([node(op, ["a"])], {"a": a}, opset=opset)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg(op):
    check([node(op, ["a"], axis=1, keepdims=0)], {"a": x(3, 4)})


def test_constant_and_names():
    c = helper.make_tensor("c", F, [3], [1.0, 2.0, 3.0])
    model = _model([node("Constant", [], ["k"], value=c), node("Add", ["in.put", "k"], ["y"]),
                    node("Mul", ["y", "w"], ["z"])],
                   {"in.put": x(2, 3)}, ["y", "z"], 17, inits={"w": x(3)})
    mod, params = from_onnx(model, freeze_params=False)
    assert [p.name_hint for p in mod["main"].params] == ["in.put", "w"]
    assert set(params) == {"w"}
    a = x(2, 3)
    got = _run(model, {"in.put": a})
    want = ReferenceEvaluator(model).run(None, {"in.put": a})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_shape_override():
    model = _model([node("Relu", ["a"])], {"a": x(2, 3)}, ["y"], 17)
    mod, _ = from_onnx(model, shape={"a": (4, 3)})
    assert tuple(mod["main"].params[0].type_annotation.shape) == (4, 3)


def test_unsupported_lists_all():
    model = _model([node("Foo", ["a"], ["b"]), node("Foo", ["b"], ["c"]),
                    node("Bar", ["c"], ["y"])], {"a": x(2)}, ["y"], 17)
    with pytest.raises(UnsupportedOperatorError) as e:
        from_onnx(model)
    assert e.value.missing == {"Bar": 1, "Foo": 2}


def test_training_dropout_rejected():
    model = _model([node("Dropout", ["a", "r", "t"])], {"a": x(2)}, ["y"], 17,
                   inits={"r": np.float32(0.5), "t": np.bool_(True)})
    with pytest.raises(relayir.Error, match="training mode"):
        from_onnx(model)


def test_malformed_file(tmp_path):
    p = tmp_path / "bad.onnx"
    p.write_bytes(b"\x07not a protobuf at all\xff\xff")
    with pytest.raises(relayir.Error, match="cannot read ONNX model"):
        from_onnx(str(p))


def test_missing_tensor():
    model = _model([node("Add", ["a", "ghost"], ["y"], name="adder")], {"a": x(2)}, ["y"], 17)
    with pytest.raises(relayir.Error, match="adder.*ghost"):
        from_onnx(model)


def test_external_data_outside_folder(tmp_path):
    t = numpy_helper.from_array(x(3), "w")
    t.data_location = TensorProto.EXTERNAL
    t.ClearField("raw_data")
    for k, v in (("location", "../../etc/passwd"), ("offset", "0"), ("length", "12")):
        t.external_data.add(key=k, value=v)
    model = _model([node("Add", ["a", "w"], ["y"])], {"a": x(3)}, ["y"], 17)
    model.graph.initializer.append(t)
    p = tmp_path / "m.onnx"
    onnx.save(model, str(p))
    with pytest.raises(relayir.Error, match="outside the model's folder"):
        from_onnx(str(p))


def test_external_data_inside_folder(tmp_path):
    w = x(3)
    (tmp_path / "w.bin").write_bytes(w.tobytes())
    t = numpy_helper.from_array(w, "w")
    t.data_location = TensorProto.EXTERNAL
    t.ClearField("raw_data")
    for k, v in (("location", "w.bin"), ("offset", "0"), ("length", "12")):
        t.external_data.add(key=k, value=v)
    model = _model([node("Add", ["a", "w"], ["y"])], {"a": x(3)}, ["y"], 17)
    model.graph.initializer.append(t)
    p = tmp_path / "m.onnx"
    onnx.save(model, str(p))
    a = x(3)
    np.testing.assert_allclose(_run(str(p), {"a": a})[0], a + w, rtol=1e-6)


def _torch_check(model, example, rtol=1e-4):
    torch = pytest.importorskip("torch")
    ort = pytest.importorskip("onnxruntime")
    import io

    buf = io.BytesIO()
    torch.onnx.export(model.eval(), (example,), buf, input_names=["x"], output_names=["y"],
                      dynamo=False, opset_version=17)
    proto = onnx.load_from_string(buf.getvalue())
    feed = {"x": example.numpy()}
    want = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"]).run(
        None, feed)[0]
    got = _run(proto, feed)[0]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5)


def test_torch_mlp():
    torch = pytest.importorskip("torch")
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4),
                          nn.Softmax(-1))
    _torch_check(model, torch.randn(3, 8))


def test_torch_cnn():
    torch = pytest.importorskip("torch")
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=2, groups=2),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
    _torch_check(model, torch.randn(2, 3, 16, 16))


def test_an_empty_file_is_not_an_empty_model(tmp_path):
    p = tmp_path / "empty.onnx"
    p.write_bytes(b"")
    with pytest.raises(relayir.Error, match="holds no ONNX graph"):
        from_onnx(str(p))
    with pytest.raises(relayir.Error, match="holds no ONNX graph"):
        from_onnx(onnx.ModelProto())


def test_an_opset_newer_than_the_converters_is_refused():
    from relayir.frontend.onnx import MAX_OPSET

    model = _model([node("Neg", ["a"], ["y"])], {"a": x(2)}, ["y"], 99)
    with pytest.raises(relayir.Error, match=f"opset 99 .* knows opsets 1 to {MAX_OPSET}"):
        from_onnx(model)
    model = _model([node("Neg", ["a"], ["y"])], {"a": x(2)}, ["y"], MAX_OPSET)
    assert "negative" in from_onnx(model)[0].astext()


def test_max_opset_covers_every_converter_version():
    from relayir.frontend.onnx import MAX_OPSET
    from relayir.frontend.onnx_ops import TABLE

    assert max(since for versions in TABLE.values() for since, _ in versions) <= MAX_OPSET
