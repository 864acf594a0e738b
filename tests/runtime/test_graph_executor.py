"""The graph executor: inputs checked by name, dtype and shape; outputs; params;
benchmark and profile tables; create_executor; export → load in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import relayir as relay
from relayir import graph_executor
from relayir.runtime.graph_executor import BenchmarkResult, GraphExecutorError, ProfileReport
from relayir.runtime.module import ModuleFormatError, load_module
from relayir.testing.models import get_workload, make_inputs
from relayir.transform import PassContext


@pytest.fixture(scope="module")
def mlp():
    mod, params, _ = get_workload("mlp", in_features=64, hidden=32)
    with PassContext(opt_level=3):
        lib = relay.build(mod, target="numpy", params=params)
    inputs = make_inputs("mlp", mod)
    expected = relay.create_executor("debug", mod, params=params).evaluate()(**inputs)
    return lib, inputs, expected


def two_input_module():
    x = relay.var("x", shape=(2, 3))
    ids = relay.var("ids", shape=(2,), dtype="int64")
    table = relay.var("table", shape=(5, 3))
    body = relay.Tuple([relay.nn.relu(x) + relay.take(table, ids, axis=0), relay.sum(x)])
    return relay.IRModule.from_expr(relay.Function([x, ids, table], body))


def test_run_and_outputs(mlp):
    lib, inputs, expected = mlp
    m = graph_executor.GraphModule(lib)
    m.set_input("data", inputs["data"])
    m.run()
    out = m.get_output(0)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    out[...] = 0  # a copy: the executor's storage is untouched
    np.testing.assert_allclose(m.get_output(0), expected, rtol=1e-5)
    dst = np.empty_like(out)
    assert m.get_output(0, out=dst) is dst
    assert m.get_num_inputs() == 1 and m.get_num_outputs() == 1
    shapes, dtypes = m.get_input_info()
    assert shapes == {"data": (1, 64)} and dtypes == {"data": "float32"}
    np.testing.assert_array_equal(m.get_input("data"), inputs["data"])
    # TVM's spelling: lib["default"](device)
    m2 = graph_executor.GraphModule(lib["default"](None))
    m2.run(data=inputs["data"])
    np.testing.assert_array_equal(m2.get_output(0), m.get_output(0))


def test_set_input_errors_name_the_input_and_both_shapes(mlp):
    lib, inputs, expected = mlp
    m = graph_executor.GraphModule(lib)
    with pytest.raises(GraphExecutorError, match=r"inputs not set: data"):
        m.run()
    with pytest.raises(GraphExecutorError,
                       match=r"input 'data': expected shape \(1, 64\), found shape \(1, 65\)"):
        m.set_input("data", np.zeros((1, 65), "float32"))
    with pytest.raises(GraphExecutorError,
                       match=r"input 'data': expected dtype float32, found float64 "
                             r"\(expected shape \(1, 64\), found \(2, 64\)\)"):
        m.set_input("data", np.zeros((2, 64)))
    with pytest.raises(GraphExecutorError, match=r"no input named 'dat'; its inputs are data"):
        m.set_input("dat", inputs["data"])
    with pytest.raises(GraphExecutorError, match="input index 99 is out of range"):
        m.set_input(99, inputs["data"])
    with pytest.raises(GraphExecutorError, match="input 'data': expected shape"):
        m.run(data=np.zeros((64,), "float32"))
    with pytest.raises(GraphExecutorError, match="output index 1 is out of range"):
        m.get_output(1)
    with pytest.raises(GraphExecutorError, match=r"get_output\(0\): no run has completed"):
        m.get_output(0)  # before any run: no output, not uninitialised memory
    m.set_input(0, inputs["data"])  # by index, after the failures: still usable
    m.run()
    np.testing.assert_allclose(m.get_output(0), expected, rtol=1e-5, atol=1e-6)


def test_get_output_after_a_failed_run_is_refused():
    x = relay.var("x", shape=(2,), dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.floor_divide(x, x)))
    m = graph_executor.GraphModule(relay.build(mod, target="numpy"))
    m.run(x=np.array([4, 6], "int32"))
    np.testing.assert_array_equal(m.get_output(0), [1, 1])
    m._calls = (lambda: 1,) + m._calls[1:]  # a kernel that reports failure
    m._call_names = ("failing",) + m._call_names[1:]
    with pytest.raises(GraphExecutorError, match="failing"):
        m.run()
    with pytest.raises(GraphExecutorError, match="no run has completed"):
        m.get_output(0)  # the last run failed: its outputs are not results


def test_inputs_by_kwargs_lists_and_torch():
    mod = two_input_module()
    lib = relay.build(mod)
    m = graph_executor.GraphModule(lib)
    x = np.array([[1, -2, 3], [-4, 5, -6]], "float32")
    table = np.arange(15, dtype="float32").reshape(5, 3)
    m.set_input(x=x, table=table, ids=[4, 0])  # a list takes the input's dtype
    m.run()
    np.testing.assert_array_equal(m.get_output(0), np.maximum(x, 0) + table[[4, 0]])
    assert m.get_output(1) == pytest.approx(x.sum())
    m.set_input("ids", np.array([4, 0], "int32"))  # widening changes no value: converted
    with pytest.raises(GraphExecutorError, match="input 'ids': expected dtype int64, found "
                                                 "float32"):
        m.set_input("ids", np.array([1, 2], "float32"))
    torch = pytest.importorskip("torch")
    m.set_input("x", torch.ones(2, 3))
    m.run()
    np.testing.assert_array_equal(m.get_output(0), 1 + table[[4, 0]])


def test_load_params_dict_and_bytes():
    from relayir.runtime.module import save_params

    mod = two_input_module()
    lib = relay.build(mod)
    m = graph_executor.GraphModule(lib)
    table = np.ones((5, 3), "float32")
    m.load_params(save_params({"table": table}))
    m.load_params({"ids": np.array([0, 1])})
    m.run(x=np.zeros((2, 3), "float32"))
    np.testing.assert_array_equal(m.get_output(0), np.ones((2, 3)))
    with pytest.raises(GraphExecutorError, match="no input named 'w'"):
        m.load_params({"w": table})


def test_params_of_a_built_module_are_graph_params(mlp):
    lib, _, _ = mlp
    params = lib.get_params()
    assert params and all(k.startswith("p") for k in params)
    m = graph_executor.GraphModule(lib)
    assert m.get_num_inputs() == 1  # params are not inputs the caller sets


def test_benchmark_and_profile(mlp):
    lib, inputs, _ = mlp
    m = graph_executor.GraphModule(lib)
    r = m.benchmark(number=3, repeat=4, data=inputs["data"])
    assert isinstance(r, BenchmarkResult) and len(r.results) == 4
    assert 0 < r.min <= r.median <= r.max and r.mean > 0 and r.std >= 0
    assert "median (ms)" in str(r)
    r = m.benchmark(number=1, repeat=2, min_repeat_ms=20)
    assert r.number > 1 and r.median * r.number >= 15  # number grew to fill 20 ms
    p = m.profile(number=3)
    assert isinstance(p, ProfileReport)
    names = [n["attrs"]["func_name"] for n in lib.graph["nodes"] if n["op"] == "tvm_op"]
    assert {row.name for row in p} == set(names)
    assert sum(row.calls for row in p) == 3 * len(names)
    assert sum(row.percent for row in p) == pytest.approx(100)
    assert [row.total_ms for row in p] == sorted((row.total_ms for row in p), reverse=True)
    text = str(p)
    assert "kernel" in text and "calls" in text and "%" in text and names[0] in text


def test_create_executor_graph_matches_debug(mlp):
    mod, params, _ = get_workload("mlp", in_features=64, hidden=32)
    inputs = make_inputs("mlp", mod)
    f = relay.create_executor("graph", mod, params=params).evaluate()
    g = relay.create_executor("debug", mod, params=params).evaluate()
    np.testing.assert_allclose(f(**inputs), g(**inputs), rtol=1e-5)
    np.testing.assert_allclose(f(inputs["data"]), g(**inputs), rtol=1e-5)
    with pytest.raises(GraphExecutorError, match="missing inputs: data"):
        f()


_FRESH = """
import sys, numpy as np
from relayir.runtime.module import load_module
from relayir import graph_executor
lib = load_module(sys.argv[1])
m = graph_executor.GraphModule(lib)
inputs = dict(np.load(sys.argv[2]))
m.run(**inputs)
np.savez(sys.argv[3], *[m.get_output(i) for i in range(m.get_num_outputs())])
"""


def test_export_and_load_in_a_fresh_process(tmp_path, mlp):
    lib, inputs, _ = mlp
    mod = two_input_module()
    cases = [(lib, inputs),
             (relay.build(mod), {"x": np.ones((2, 3), "float32"), "ids": np.array([1, 3]),
                                 "table": np.arange(15, dtype="float32").reshape(5, 3)})]
    for i, (built, ins) in enumerate(cases):
        path = tmp_path / f"model{i}.relayir"
        built.export_library(path)
        with zipfile.ZipFile(path) as z:
            assert {"meta.json", "graph.json", "params.npz"} <= set(z.namelist())
            meta = json.loads(z.read("meta.json"))
        assert meta["format_version"] == 2 and meta["target"] == "numpy"
        assert {k["name"] for k in meta["library"]["kernels"]} == set(built.get_lib())
        m = graph_executor.GraphModule(built)
        m.run(**ins)
        expected = [m.get_output(k) for k in range(m.get_num_outputs())]
        np.savez(tmp_path / "in.npz", **ins)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        subprocess.run([sys.executable, "-c", _FRESH, str(path), str(tmp_path / "in.npz"),
                        str(tmp_path / "out.npz")], check=True, env=env, timeout=120)
        with np.load(tmp_path / "out.npz", allow_pickle=False) as got:
            assert len(got.files) == len(expected)
            for k, e in enumerate(expected):
                np.testing.assert_array_equal(got[f"arr_{k}"], e)
        loaded = load_module(path)  # and here: the same graph and params
        assert loaded.get_graph_json() == built.get_graph_json()
        for k, v in built.get_params().items():
            np.testing.assert_array_equal(loaded.get_params()[k], v)


def _rewrite_archive(src_path, dst_path, meta_edit, graph_edit=None) -> None:
    with zipfile.ZipFile(src_path) as src, zipfile.ZipFile(dst_path, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "meta.json":
                meta = json.loads(data)
                meta_edit(meta)
                data = json.dumps(meta).encode()
            if name == "graph.json" and graph_edit is not None:
                graph = json.loads(data)
                graph_edit(graph)
                data = json.dumps(graph).encode()
            dst.writestr(name, data)


def test_load_module_rejects_other_files_and_versions(tmp_path, mlp):
    lib, _, _ = mlp
    bad = tmp_path / "bad.relayir"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ModuleFormatError, match="not a relayir module archive"):
        load_module(bad)
    good = tmp_path / "good.relayir"
    lib.export_library(good)
    future = tmp_path / "future.relayir"
    _rewrite_archive(good, future, lambda meta: meta.update(format_version=99))
    with pytest.raises(ModuleFormatError,
                       match="format version 99; this relayir reads version 1 or 2"):
        load_module(future)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_a_version_1_module_still_loads_and_runs(tmp_path, mlp):
    """Version 1 had no storage_offset: one buffer per storage id, every view at 0."""
    lib, inputs, _ = mlp
    good = tmp_path / "good.relayir"
    lib.export_library(good)
    graph = lib.graph
    sids = graph["attrs"]["storage_id"][1]
    old = tmp_path / "v1.relayir"

    def to_v1(g):  # one storage per entry, no offsets: a valid version-1 plan
        del g["attrs"]["storage_offset"]
        g["attrs"]["storage_id"][1] = list(range(len(sids)))

    _rewrite_archive(good, old, lambda meta: meta.update(format_version=1), to_v1)
    loaded = load_module(old)
    assert "storage_offset" not in loaded.graph["attrs"]
    m_old, m_new = graph_executor.GraphModule(loaded), graph_executor.GraphModule(lib)
    m_old.run(**inputs)
    m_new.run(**inputs)
    for k in range(m_new.get_num_outputs()):
        np.testing.assert_array_equal(m_old.get_output(k), m_new.get_output(k))


def test_a_failing_kernel_is_an_error_naming_it():
    table = relay.var("table", shape=(5, 3))
    ids = relay.var("ids", shape=(2,), dtype="int64")
    mod = relay.IRModule.from_expr(
        relay.Function([table, ids], relay.take(table, ids, axis=0, mode="fast")))
    m = graph_executor.GraphModule(relay.build(mod))
    m.set_input("table", np.zeros((5, 3), "float32"))
    with pytest.raises(GraphExecutorError,
                       match=r"kernel fused_take \(call 0\) failed: IndexError"):
        m.run(ids=np.array([1, 7]))
    m.run(ids=np.array([1, 4]))  # the module is still usable
