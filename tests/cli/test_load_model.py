"""``relayir.frontend.load_model``: one function for every model file, shared by the
command line and Python."""

import numpy as np
import pytest

import relayir
from relayir.frontend import load_model
from relayir.frontend.load_model import InputShapeError, ModelFileError, parse_input_shapes
from relayir.ir.types import Any, SymbolicDim


def _inputs(mod, params):
    return {p.name_hint: p.type_annotation for p in mod["main"].params
            if p.name_hint not in params}


def test_parse_input_shapes():
    assert parse_input_shapes("x:[1,3,224,224] mask:[1, seq]  input:0:[?]  s:[]") == {
        "x": (1, 3, 224, 224), "mask": (1, "seq"), "input:0": ("?",), "s": ()}
    assert parse_input_shapes("") == {}


@pytest.mark.parametrize("text, match", [
    ("x:[1,3", "cannot read 'x:\\[1,3'"),
    ("x[1]", "expected NAME:\\[DIM,...\\]"),
    ("x:[1,-2]", "dim '-2' is not a size"),
    ("x:[1] x:[2]", "input x is given twice"),
])
def test_parse_input_shapes_errors(text, match):
    with pytest.raises(InputShapeError, match=match):
        parse_input_shapes(text)


def test_relay_text_with_params_beside_it(mlp_relay):
    mod, params = load_model(mlp_relay)
    assert set(params) == {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}
    assert str(_inputs(mod, params)["data"]) == "Tensor[(1, 784), float32]"
    mod, _ = load_model(mlp_relay, shape={"data": ("batch", 784)})
    assert _inputs(mod, params)["data"].shape == (SymbolicDim("batch"), 784)
    exe = relayir.vm.compile(mod, "numpy", params)  # the body types at any batch
    out = relayir.vm.VirtualMachine(exe).invoke("main", np.ones((3, 784), "float32"))
    assert out.shape == (3, 10)


def test_onnx_shapes_and_names(resnet_onnx):
    mod, params = load_model(resnet_onnx)
    assert str(_inputs(mod, params)["image"]) == "Tensor[(1, 3, 32, 32), float32]"
    mod, params = load_model(resnet_onnx, "image:[?,3,32,32]")
    assert _inputs(mod, params)["image"].shape[0] is Any()
    with pytest.raises(ModelFileError, match="no input named 'img'; its inputs are image"):
        load_model(resnet_onnx, {"img": (1, 3, 32, 32)})
    with pytest.raises(ModelFileError, match="input image is float32 in the model, not int8"):
        load_model(resnet_onnx, dtype="int8")


def test_pt2_keeps_the_saved_dynamic_dims_and_the_argument_names(transformer_pt2):
    mod, params = load_model(transformer_pt2)
    inputs = _inputs(mod, params)
    assert list(inputs) == ["input_ids", "mask"]  # the forward's argument names
    assert inputs["input_ids"].dtype == "int64"
    seq = inputs["input_ids"].shape[1]
    assert isinstance(seq, SymbolicDim) and inputs["mask"].shape[1] == seq  # one dim
    assert "embed.weight" in params


def test_pt2_dims_named_or_fixed(transformer_pt2):
    mod, params = load_model(transformer_pt2, "input_ids:[2,seq] mask:[2,seq]")
    assert str(_inputs(mod, params)["mask"]) == "Tensor[(2, seq), float32]"
    mod, params = load_model(transformer_pt2, "input_ids:[2,12] mask:[2,?]")
    assert str(_inputs(mod, params)["mask"]) == "Tensor[(2, 12), float32]"


@pytest.mark.parametrize("shape, match", [
    ("input_ids:[3,seq]", "dim 0 is 2 in the saved program, not 3"),
    ("input_ids:[2,seq,1]", "has rank 2 in the saved program"),
    ("input_ids:[2,a] mask:[2,b]", "named a elsewhere"),
    ("input_ids:[2,5] mask:[2,6]", "given 5 elsewhere"),
])
def test_pt2_shape_errors(transformer_pt2, shape, match):
    with pytest.raises(ModelFileError, match=match):
        load_model(transformer_pt2, shape)


def test_file_errors(tmp_path):
    with pytest.raises(ModelFileError, match="nope.onnx: not found"):
        load_model(tmp_path / "nope.onnx")
    (tmp_path / "dir.relay").mkdir()
    with pytest.raises(ModelFileError, match="is a directory"):
        load_model(tmp_path / "dir.relay")
    with pytest.raises(ModelFileError, match="unknown model kind '.tflite'"):
        load_model(tmp_path / "m.tflite")
    (tmp_path / "bad.pt2").write_bytes(b"PK not really")
    pytest.importorskip("torch")
    with pytest.raises(ModelFileError, match="not a program saved by torch.export.save"):
        load_model(tmp_path / "bad.pt2")
    (tmp_path / "bad.relay").write_text("def @main(%x: Tensor[(2), float32]) { nn.dence(%x) }")
    with pytest.raises(relayir.ParseError, match="bad.relay:1:"):
        load_model(tmp_path / "bad.relay")
