"""ONNX input names as the model declares them (``gpu_0/data_0``), accepted by every
executor, kept through the text format and saved artifacts; C names are derived inside
the code generators."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import relayir as relay  # noqa: E402
from relayir.frontend import from_onnx  # noqa: E402

X = np.array([[1, -2, 3], [-4, 5, -6]], "float32")
W = np.full((2, 3), 0.5, "float32")
WANT = np.maximum(X, 0) + W


@pytest.fixture(scope="module")
def imported():
    nodes = [helper.make_node("Relu", ["gpu_0/data_0"], ["out:0"]),
             helper.make_node("Add", ["out:0", "w/b"], ["gpu_0/softmax"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("gpu_0/data_0", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("gpu_0/softmax", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(W, "w/b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return from_onnx(model, freeze_params=False)


def test_parameters_keep_the_model_names_through_the_text_format(imported):
    mod, params = imported
    assert [p.name_hint for p in mod["main"].params] == ["gpu_0/data_0", "w/b"]
    assert list(params) == ["w/b"]
    text = mod.astext()
    assert '%"gpu_0/data_0": Tensor[(2, 3), float32]' in text
    assert [p.name_hint for p in relay.parse(text)["main"].params] == ["gpu_0/data_0", "w/b"]


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_the_graph_executor_takes_the_onnx_name_also_after_export(imported, target, tmp_path):
    mod, params = imported
    lib = relay.build(mod, target=target, params=params)
    m = relay.graph_executor.GraphModule(lib)
    m.set_input("gpu_0/data_0", X)
    m.run()
    np.testing.assert_array_equal(m.get_output(0), WANT)
    path = tmp_path / "m.relayir"
    lib.export_library(path)
    loaded = relay.graph_executor.GraphModule(relay.runtime.load_module(path))
    assert list(loaded.get_input_info()[0]) == ["gpu_0/data_0"]
    loaded.run(**{"gpu_0/data_0": X})
    np.testing.assert_array_equal(loaded.get_output(0), WANT)


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_the_vm_takes_the_onnx_name_also_after_save(imported, target, tmp_path):
    mod, params = imported
    exe = relay.vm.compile(mod, target=target, params=params)
    path = tmp_path / "e.relayvm"
    exe.save(path)
    for executable in (exe, relay.vm.Executable.load(path)):
        vm = relay.vm.VirtualMachine(executable)
        vm.set_input("main", **{"gpu_0/data_0": X})
        np.testing.assert_array_equal(vm.invoke("main"), WANT)


def test_the_interpreter_and_aot_take_the_onnx_name(imported):
    mod, params = imported
    run = relay.create_executor("debug", mod).evaluate()
    np.testing.assert_array_equal(run(**{"gpu_0/data_0": X, "w/b": W}), WANT)
    lib = relay.build(mod, target="cpu", params=params, executor="aot")
    a = relay.runtime.executor.AotModule(lib)
    a.set_input("gpu_0/data_0", X)
    a.run()
    np.testing.assert_array_equal(a.get_output(0), WANT)


def test_a_wrong_name_lists_the_onnx_names(imported):
    mod, params = imported
    m = relay.graph_executor.GraphModule(relay.build(mod, target="numpy", params=params))
    with pytest.raises(relay.Error, match="no input named 'gpu_0_data_0'; its inputs are "
                                          "gpu_0/data_0"):
        m.set_input("gpu_0_data_0", X)


def test_outputs_by_their_onnx_names(imported, tmp_path):
    mod, params = imported
    assert mod["main"].attrs["output_names"] == ("gpu_0/softmax",)
    lib = relay.build(mod, target="cpu", params=params)
    path = tmp_path / "m.relayir"
    lib.export_library(path)
    for factory in (lib, relay.runtime.load_module(path)):
        m = relay.graph_executor.GraphModule(factory)
        m.run(**{"gpu_0/data_0": X})
        np.testing.assert_array_equal(m.get_output("gpu_0/softmax"), WANT)
        with pytest.raises(relay.Error, match="no output named 'prob'; its outputs are "
                                              "gpu_0/softmax"):
            m.get_output("prob")
