"""``build(..., executor="aot")``: the same kernels and memory plan as the graph executor,
called from one native entry point; outputs equal to the graph executor's bit for bit."""

from __future__ import annotations

import ctypes
import importlib.util
import sys
import tarfile
import threading
from pathlib import Path

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Tuple, Var
from relayir.ir.op import call
from relayir.ir.types import TensorType
from relayir.runtime.executor import AotError, AotExecutorFactoryModule, AotModule
from relayir.runtime.graph_executor import BenchmarkResult
from relayir.runtime.tensors import aligned_empty
from relayir.testing.models import get_workload, make_inputs

LOWER_OPS = Path(__file__).parents[1] / "codegen" / "test_lower_ops.py"


def _workload(name: str, **knobs):
    mod, params, _ = get_workload(name, **knobs)
    return mod, params, make_inputs(name, mod, seed=3)


def test_mlp_equals_graph_executor_bit_for_bit(aot):
    mod, params, inputs = _workload("mlp", batch_size=1)
    graph, lib = aot.check_equal(mod, params, inputs)
    assert isinstance(lib, AotExecutorFactoryModule)
    # same kernels (the graph executor's translation unit) and the same plan
    assert graph.get_lib().source in lib.get_source()
    assert lib.library.workspace_size >= graph.memory_plan.planned_bytes
    assert lib.memory_plan.planned_bytes == graph.memory_plan.planned_bytes


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "bert"])
def test_models_equal_graph_executor_bit_for_bit(aot, name):
    mod, params, inputs = _workload(name)
    aot.check_equal(mod, params, inputs)


def _op_cases():
    spec = importlib.util.spec_from_file_location("aot_lower_op_cases", LOWER_OPS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.CASES


def _ops_module(cases):
    """One ``@main`` calling every op case: its first argument an input, the others
    weights (bound as params), all results returned as one tuple."""
    params, inputs, results, args = {}, {}, [], []
    for n, case in enumerate(cases):
        call_args = []
        for i, value in enumerate(case.inputs):
            fields = []
            for k, array in enumerate(value if isinstance(value, tuple) else (value,)):
                array = np.asarray(array)
                var = Var(f"c{n}_{i}_{k}", TensorType(array.shape, array.dtype.name))
                args.append(var)
                (inputs if i == 0 else params)[var.name_hint] = array
                fields.append(var)
            call_args.append(Tuple(fields) if isinstance(value, tuple) else fields[0])
        results.append(call(case.op, call_args, **case.attrs))
    return relay.IRModule.from_expr(relay.Function(args, Tuple(results))), params, inputs


@pytest.mark.slow
def test_every_op_test_model_equals_graph_executor_bit_for_bit(aot):
    """The kernel test records of tests/codegen (every op with a compute, every dtype),
    as one module: multiple inputs, weights of every dtype, a tuple of outputs."""
    cases = _op_cases()
    mod, params, inputs = _ops_module(cases)
    graph, lib = aot.check_equal(mod, params, inputs)
    dtypes = {t.dtype for t in lib.library.inputs + lib.library.outputs}
    assert {"float16", "float64", "int8", "uint8", "int64", "bool"} <= dtypes
    assert len(lib.library.outputs) >= len(cases)


def _tuple_module():
    """Two inputs; outputs: a kernel result, an input returned as is, the same kernel
    result again, and a weight returned as is."""
    x = relay.var("x", shape=(3, 4), dtype="float32")
    y = relay.var("y", shape=(4,), dtype="int32")
    w = relay.var("w", shape=(3, 4), dtype="float32")
    z = relay.nn.relu(relay.add(x, w))
    body = relay.Tuple([z, y, z, relay.const(np.arange(5, dtype="int64"))])
    mod = relay.IRModule.from_expr(relay.Function([x, y, w], body))
    params = {"w": np.full((3, 4), 0.5, "float32")}
    inputs = {"x": np.linspace(-1, 1, 12, dtype="float32").reshape(3, 4),
              "y": np.array([1, -2, 3, -4], "int32")}
    return mod, params, inputs


def test_tuple_outputs_inputs_and_weights_as_outputs(aot):
    mod, params, inputs = _tuple_module()
    _, lib = aot.check_equal(mod, params, inputs)
    out = aot.run_aot(lib, inputs)
    np.testing.assert_array_equal(out[1], inputs["y"])
    np.testing.assert_array_equal(out[3], np.arange(5))
    np.testing.assert_array_equal(out[0], np.maximum(inputs["x"] + 0.5, 0))
    assert [t.name for t in lib.library.inputs] == ["x", "y"]
    assert [t.name for t in lib.library.outputs] == ["output0", "output1", "output2", "output3"]


def test_aot_module_api_follows_graph_module(aot):
    mod, params, inputs = _workload("mlp", batch_size=2, in_features=32, hidden=16)
    graph, lib = aot.build_both(mod, params)
    m, gm = AotModule(lib), relay.graph_executor.GraphModule(graph)
    assert m.get_num_inputs() == gm.get_num_inputs() == 1
    assert m.get_num_outputs() == gm.get_num_outputs()
    assert m.get_input_info() == gm.get_input_info()
    m.set_input(0, inputs["data"])
    np.testing.assert_array_equal(m.get_input("data"), inputs["data"])
    m.run()
    out = np.empty_like(m.get_output(0))
    assert m.get_output(0, out) is out
    assert isinstance(m.benchmark(number=3, repeat=2), BenchmarkResult)
    assert lib["default"]().get_num_outputs() == 1
    with pytest.raises(AotError, match="no input named 'nope'; its inputs are data"):
        m.set_input("nope", inputs["data"])
    with pytest.raises(AotError, match="input 'data': expected dtype float32, found float64"):
        m.set_input("data", inputs["data"].astype("float64"))
    with pytest.raises(AotError, match="inputs not set: data"):
        AotModule(lib).run()


def test_create_executor_aot(aot):
    mod, params, inputs = _tuple_module()
    mod = relay.transform.InferType()(mod)
    f = relay.create_executor("aot", mod, target="cpu").evaluate()
    g = relay.create_executor("graph", mod, target="cpu").evaluate()
    got, want = f(inputs["x"], inputs["y"], params["w"]), g(**inputs, **params)
    aot.assert_bitwise_equal(list(got), list(want))
    assert isinstance(f.module, AotModule)


def test_export_so_and_load_module(aot, tmp_path):
    mod, params, inputs = _tuple_module()
    _, lib = aot.build_both(mod, params)
    lib.export_library(tmp_path / "model.so")
    header = (tmp_path / "model.h").read_text()
    assert "int32_t relayir_run(const void* const* inputs, void* const* outputs);" in header
    loaded = relay.runtime.load_module(tmp_path / "model.so")
    assert isinstance(loaded, AotExecutorFactoryModule)
    aot.assert_bitwise_equal(aot.run_aot(loaded, inputs), aot.run_aot(lib, inputs))
    with pytest.raises(AotError, match="loaded from"):
        loaded.export_library(tmp_path / "again.so")


def test_exported_sources_build_with_their_makefile(aot, tmp_path):
    """The tar holds model sources, header, weights and a Makefile; `make` there gives a
    library equal to the one built here."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make")
    mod, params, inputs = _tuple_module()
    _, lib = aot.build_both(mod, params, mod_name="tup")
    lib.export_library(tmp_path / "tup.tar")
    with tarfile.open(tmp_path / "tup.tar") as tar:
        assert sorted(tar.getnames()) == ["tup/Makefile", "tup/tup.c", "tup/tup.h",
                                          "tup/weights.bin"]
        tar.extractall(tmp_path, filter="data")
    subprocess.run(["make", "-C", str(tmp_path / "tup")], check=True, capture_output=True)
    rebuilt = relay.runtime.load_module(tmp_path / "tup" / "tup.so")
    assert rebuilt.library.prefix == "relayir_tup_"
    aot.assert_bitwise_equal(aot.run_aot(rebuilt, inputs), aot.run_aot(lib, inputs))
    lib.export_library(f"{tmp_path / 'dir'}/")
    assert sorted(p.name for p in (tmp_path / "dir").iterdir()) == [
        "Makefile", "model.c", "model.h", "weights.bin"]


def test_concurrent_runs_from_two_threads(aot):
    """Each calling thread runs in its own workspace: two threads running the same
    library at once (ctypes releases the GIL) each get their own inputs' results."""
    mod, params, _ = _workload("mlp", batch_size=8, in_features=64, hidden=256)
    graph, lib = aot.build_both(mod, params)
    rng = np.random.default_rng(0)
    batches = [rng.normal(size=(8, 64)).astype("float32") for _ in range(2)]
    expected = [aot.run_graph(graph, {"data": b})[0] for b in batches]
    failures = []

    def work(k: int) -> None:
        m = AotModule(lib)
        m.set_input("data", batches[k])
        for _ in range(300):
            m.run()
            if m.get_output(0).tobytes() != expected[k].tobytes():
                failures.append(k)
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_run_with_a_caller_workspace(aot):
    mod, params, inputs = _workload("mlp", batch_size=1, in_features=32, hidden=16)
    graph, lib = aot.build_both(mod, params)
    library = lib.get_lib()
    workspace = aligned_empty(library.workspace_size)
    out = np.zeros((1, 10), "float32")
    ins = (ctypes.c_void_p * 1)(inputs["data"].ctypes.data)
    outs = (ctypes.c_void_p * 1)(out.ctypes.data)
    assert library.run_with_workspace(ins, outs, workspace.ctypes.data) == 0
    aot.assert_bitwise_equal([out], aot.run_graph(graph, inputs))
    misaligned = workspace.ctypes.data + 1
    assert library.run_with_workspace(ins, outs, misaligned) != 0
    assert "64-byte aligned" in library.last_error()
