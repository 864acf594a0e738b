"""``relayir.build`` with the numpy target: models, tuple outputs, opt levels, graph JSON,
errors. Every result is checked against the reference interpreter (debug executor)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import relayir as relay
from relayir.backend import BuildError, GraphCodegenError, optimize
from relayir.backend.lowering import LOWERINGS
from relayir.backend.target import Target
from relayir.runtime.graph_executor import GraphModule
from relayir.testing.models import get_workload, make_inputs
from relayir.transform import PassContext
from relayir.transform.pipeline import optimize_passes

MODELS = {
    "mlp": dict(),
    "resnet18": dict(image_size=32),
    "mobilenet_v2": dict(image_size=32),
    "bert": dict(num_layers=2, seq_len=16, vocab=1000),
}


def debug_run(mod, params, inputs):
    return relay.create_executor("debug", mod, params=params).evaluate()(**inputs)


def graph_run(mod, params, inputs, opt_level=3, **build_kw):
    with PassContext(opt_level=opt_level):
        lib = relay.build(mod, target="numpy", params=params, **build_kw)
    m = GraphModule(lib)
    m.run(**inputs)
    return lib, m


@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_debug_executor(name):
    mod, params, _ = get_workload(name, **MODELS[name])
    inputs = make_inputs(name, mod)
    expected = debug_run(mod, params, inputs)
    lib, m = graph_run(mod, params, inputs)
    assert m.get_num_outputs() == 1
    out = m.get_output(0)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    # fused: fewer kernel calls than ops, and equal groups share a kernel
    calls = [n for n in lib.graph["nodes"] if n["op"] == "tvm_op"]
    assert len(lib.get_lib()) <= len(calls)
    m.run()  # a second run on the same storage gives the same answer
    np.testing.assert_array_equal(m.get_output(0), out)


def test_opt_levels_agree():
    mod, params, _ = get_workload("mobilenet_v2", image_size=32)
    inputs = make_inputs("mobilenet_v2", mod)
    expected = debug_run(mod, params, inputs)
    calls = []
    for level in range(4):
        lib, m = graph_run(mod, params, inputs, opt_level=level)
        np.testing.assert_allclose(m.get_output(0), expected, rtol=1e-5, atol=1e-5)
        calls.append(sum(n["op"] == "tvm_op" for n in lib.graph["nodes"]))
    assert calls[0] > calls[3]  # level 0: one kernel per op; level 3 fuses


def tuple_program():
    x = relay.var("x", shape=(2, 6))
    y = relay.var("y", shape=(2, 6))
    parts = relay.split(x, indices_or_sections=3, axis=1)  # one kernel, three outputs
    s = relay.nn.relu(x + y)
    inner = relay.Tuple([parts[2], relay.exp(y)])
    return relay.Function([x, y], relay.Tuple([s, inner, parts[0], x]))


def test_tuple_outputs_and_multi_output_kernels():
    mod = relay.IRModule.from_expr(tuple_program())
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal((2, 6), "float32"),
              "y": rng.standard_normal((2, 6), "float32")}
    expected = debug_run(mod, None, inputs)
    for level in (0, 3):
        lib, m = graph_run(mod, None, inputs, opt_level=level)
        assert m.get_num_outputs() == 5  # the nested tuple is flattened
        flat = [expected[0], *expected[1], expected[2], expected[3]]
        for i, e in enumerate(flat):
            np.testing.assert_allclose(m.get_output(i), e, rtol=1e-6)
        split_nodes = [n for n in lib.graph["nodes"] if "split" in n["name"]]
        assert split_nodes and split_nodes[0]["attrs"]["num_outputs"] == "3"
    # create_executor rebuilds the tuple structure
    f = relay.create_executor("graph", mod).evaluate()
    out = f(**inputs)
    assert isinstance(out, tuple) and isinstance(out[1], tuple) and len(out) == 4
    np.testing.assert_allclose(out[1][1], expected[1][1], rtol=1e-6)
    np.testing.assert_array_equal(out[3], inputs["x"])


def test_graph_json_has_tvm_keys():
    mod, params, _ = get_workload("mlp")
    with PassContext(opt_level=3):
        lib = relay.build(mod, params=params)
    graph = json.loads(lib.get_graph_json())
    assert set(graph) >= {"nodes", "arg_nodes", "heads", "attrs", "node_row_ptr"}
    assert graph["attrs"]["storage_id"][0] == "list_int"
    assert graph["attrs"]["shape"][0] == "list_shape"
    assert graph["attrs"]["dltype"][0] == "list_str"
    n_entries = graph["node_row_ptr"][-1]
    assert len(graph["node_row_ptr"]) == len(graph["nodes"]) + 1
    for key in ("storage_id", "shape", "dltype"):
        assert len(graph["attrs"][key][1]) == n_entries
    assert graph["nodes"][0] == {"op": "null", "name": "data", "inputs": []}
    assert graph["arg_nodes"] == [i for i, n in enumerate(graph["nodes"]) if n["op"] == "null"]
    for node in graph["nodes"]:
        if node["op"] == "tvm_op":
            attrs = node["attrs"]
            assert set(attrs) >= {"func_name", "num_inputs", "num_outputs", "flatten_data"}
            assert attrs["func_name"] in lib.get_lib()
            assert int(attrs["num_inputs"]) == len(node["inputs"])
            assert all(len(e) == 3 for e in node["inputs"])
    assert graph["heads"] == [[len(graph["nodes"]) - 1, 0, 0]]
    assert set(lib.get_params()) == {graph["nodes"][i]["name"] for i in graph["arg_nodes"][1:]}
    assert graph["attrs"]["shape"][1][0] == [1, 784]


def test_identity_constant_and_let_programs():
    x = relay.var("x", shape=(3,))
    v = relay.var("v")
    c = relay.const(np.arange(3, dtype="float32"))
    body = relay.Let(v, relay.nn.relu(x), relay.Tuple([v * relay.const(2.0), x, c]))
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    a = np.array([-1.0, 0.5, 2.0], "float32")
    expected = debug_run(mod, None, {"x": a})
    out = relay.create_executor("graph", mod).evaluate()(a)
    for e, o in zip(expected, out):
        np.testing.assert_array_equal(o, e)


def test_fuse_ops_disabled_still_builds():
    mod, params, _ = get_workload("mlp")
    inputs = make_inputs("mlp", mod)
    expected = debug_run(mod, params, inputs)
    with PassContext(opt_level=3, disabled_pass=["FuseOps"]):
        lib = relay.build(mod, params=params)
    m = GraphModule(lib)
    m.run(**inputs)
    np.testing.assert_allclose(m.get_output(0), expected, rtol=1e-5)
    names = [n["attrs"]["func_name"] for n in lib.graph["nodes"] if n["op"] == "tvm_op"]
    assert "fused_nn_dense" in names


def test_pipeline_is_documented_and_optimize_fuses():
    names = [p.info.name for p in optimize_passes().passes]
    assert names[-1] == "FuseOps" and "FoldConstant" in names
    mod, params, _ = get_workload("mlp")
    from relayir.transform import bind_params

    bound = bind_params(mod, {k: relay.const(v) for k, v in params.items()})
    with PassContext(opt_level=3):
        fused = optimize(bound, "numpy")
    text = fused.astext(show_meta_data=False)
    assert "Primitive=1" in text


def test_cpu_target_aliases_resolve_to_the_c_lowering():
    for target in ("cpu", "llvm", "llvm -mcpu=skylake", "c"):
        assert Target.parse(target).kind == "cpu"
    assert LOWERINGS[Target.parse("llvm").kind] is LOWERINGS["cpu"]


def test_bad_target_executor_and_params():
    x = relay.var("x", shape=(2,))
    w = relay.var("w", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x, w], x * w))
    with pytest.raises(BuildError, match="unknown target 'cuda'"):
        relay.build(mod, target="cuda")
    with pytest.raises(BuildError, match="executor='vm'"):
        relay.build(mod, executor="vm")
    with pytest.raises(BuildError, match=r"param w: @main declares .*\(3,\)"):
        relay.build(mod, params={"w": np.ones(3, "float32")})
    with pytest.raises(BuildError, match="float64"):
        relay.build(mod, params={"w": np.ones(2)})
    assert Target.parse("llvm -mcpu=skylake").options == ("-mcpu=skylake",)


def test_dynamic_shape_names_the_dimension_and_suggests_the_vm():
    x = relay.var("x", shape=(relay.Any(), 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    with pytest.raises(GraphCodegenError, match=r"input %x .*dimension 0 .*VM"):
        relay.build(mod)


def test_control_flow_suggests_the_vm():
    x = relay.var("x", shape=(), dtype="float32")
    body = relay.If(relay.greater(x, relay.const(0.0)), x, relay.negative(x))
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    with pytest.raises(GraphCodegenError, match="dataflow only.*If.*vm"):
        relay.build(mod)


def test_int_and_bool_dtypes():
    x = relay.var("x", shape=(4,), dtype="int32")
    y = relay.var("y", shape=(4,), dtype="int32")
    body = relay.Tuple([x + y, relay.greater(x, y), relay.cast(x, "float32")])
    mod = relay.IRModule.from_expr(relay.Function([x, y], body))
    a = np.array([1, 2, 3, 4], "int32")
    b = np.array([4, 3, 2, 1], "int32")
    out = relay.create_executor("graph", mod).evaluate()(a, b)
    np.testing.assert_array_equal(out[0], a + b)
    assert out[1].dtype == np.bool_
    np.testing.assert_array_equal(out[1], a > b)
    assert out[2].dtype == np.float32
