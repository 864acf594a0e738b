"""The numbers in a report are the compiler's own: each is checked against what the
same calls give when a user makes them (relay.build's graph JSON and memory plan,
print(exe.bytecode), transform.gradient's text, the surfaces' analytic gradients)."""

import json

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Call, Op
from relayir.ir.functor import post_order
from relayir.ir.module import IRModule
from relayir.runtime.memory_plan import MemoryPlan
from relayir.testing.models import get_workload
from relayir.transform import PassContext, gradient
from relayir.typing.infer import infer_module
from relayir.viz import example_module
from relayir.viz.gradient_view import MLP_SIZES, mlp_loss


def _build(name):
    mod, params, _ = get_workload(name)
    with PassContext(opt_level=3):
        return relay.build(mod, target="cpu", params=params)


def _check_executor(section, lib):
    graph = json.loads(lib.get_graph_json())
    assert section["graph"] == graph
    plan = MemoryPlan.from_graph(graph)
    assert section["plan"]["planned_bytes"] == plan.planned_bytes == lib.memory_plan.planned_bytes
    assert section["plan"]["naive_bytes"] == plan.naive_bytes
    assert section["plan"]["peak_bytes"] == plan.peak_bytes
    entries = section["entries"]
    assert [e["offset"] for e in entries] == graph["attrs"]["storage_offset"][1]
    assert [e["storage"] for e in entries] == graph["attrs"]["storage_id"][1]
    # the timeline's bars: tensors alive at the same kernel never share arena bytes
    arena = [e for e in entries if e["kind"] == "intermediate"]
    for i, a in enumerate(arena):
        for b in arena[i + 1:]:
            if a["start"] <= b["end"] and b["start"] <= a["end"]:
                assert a["offset"] + a["bytes"] <= b["offset"] or \
                    b["offset"] + b["bytes"] <= a["offset"], (a, b)
    kernels = [n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] != "null"]
    assert [k["name"] for k in section["kernels"]] == kernels


def test_mlp_memory_plan_is_relay_builds(viz_report):
    section = viz_report("mlp").data["executor"]
    _check_executor(section, _build("mlp"))
    assert section["latency_ms"] > 0 and all(k["us"] >= 0 for k in section["kernels"])


@pytest.mark.slow
def test_resnet18_memory_plan_is_relay_builds(viz_report):
    report = viz_report("resnet18")
    _check_executor(report.data["executor"], _build("resnet18"))
    assert report.data["executor"]["plan"]["planned_bytes"] < \
        report.data["executor"]["plan"]["naive_bytes"]


@pytest.mark.parametrize("name", ["mlp", "list"])
def test_bytecode_is_print_exe_bytecode(viz_report, name, capsys):
    data = viz_report(name).data["vm"]
    if name == "list":
        mod, params = example_module("list"), {}
    else:
        mod, params, _ = get_workload(name)
    with PassContext(opt_level=3):
        exe = relay.vm.compile(mod, target="cpu", params=params)
    print(exe.bytecode)
    assert data["bytecode"] + "\n" == capsys.readouterr().out
    for fn in data["functions"]:
        listing = exe.bytecode.function_text(fn["name"]).splitlines()[3:]
        assert [f"{pc}: {line}" for pc, line in enumerate(fn["lines"])] == listing


def test_the_trace_is_a_real_run(viz_report):
    data = viz_report("list").data["vm"]
    trace = data["trace"]
    exe = relay.vm.compile(example_module("list"), target="cpu")
    vm = relay.vm.VirtualMachine(exe)
    rng = np.random.default_rng(0)  # the report's inputs: random from the types, seed 0
    a, b = (rng.standard_normal(2).astype("float32") for _ in range(2))
    assert len(trace["steps"]) == vm.profile(a, b).instructions
    first = vm.run(a, b)[0]
    assert trace["result"][0] == "tuple"
    assert f"{first[0]:.4g}"[:5] in trace["result"][1]


def test_gradient_program_is_transform_gradients(viz_report):
    data = viz_report("mlp").data["gradient"]
    mod = infer_module(IRModule.from_expr(mlp_loss(**MLP_SIZES)))
    expected = IRModule.from_expr(gradient(mod["main"], mod)).astext(show_meta_data=False)
    assert data["before"]["text"] == expected
    ops = [n for n in post_order(relay.parse(expected)["main"]) if type(n) is Call and
           type(n.op) is Op]
    assert data["before"]["counts"]["ops"] == len(ops)
    torch = data.get("torch", {})
    if "unavailable" not in torch and torch:
        assert abs(data["value"] - torch["value"]) < 1e-5
        assert torch["max_grad_difference"] < 1e-5


def _rosenbrock_grad(x, y):
    return np.array([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)])


def test_optimiser_paths_follow_relayirs_gradient(viz_report):
    data = viz_report("mlp").data["optimizers"]
    rosen = next(s for s in data["surfaces"] if s["name"] == "Rosenbrock")
    start = np.array(rosen["start"])
    for k, lr in enumerate(rosen["lrs"]["SGD"]):
        path = np.array(rosen["paths"]["SGD"][k])
        np.testing.assert_allclose(path[0], start)
        np.testing.assert_allclose(path[1], start - lr * _rosenbrock_grad(*start), rtol=1e-3,
                                   atol=1e-4)
    # AdaGrad's first step is lr * sign(g): each coordinate moves by lr
    lr = rosen["lrs"]["AdaGrad"][0]
    step = np.array(rosen["paths"]["AdaGrad"][0][1]) - start
    np.testing.assert_allclose(np.abs(step), [lr, lr], rtol=1e-3)
    quad = next(s for s in data["surfaces"] if s["name"] == "Quadratic")
    assert len(quad["paths"]["SGD"][-1]) <= data["steps"]  # lr 0.11 > 2/20: it diverges
    assert len(quad["paths"]["SGD"][0]) == data["steps"] + 1
    n = rosen["grid"]["n"]
    x0, x1, y0, y1 = rosen["bounds"]
    gx, gy = np.meshgrid(np.linspace(x0, x1, n), np.linspace(y0, y1, n))
    expected = (1 - gx) ** 2 + 100 * (gy - gx * gx) ** 2
    np.testing.assert_allclose(np.array(rosen["grid"]["values"]).reshape(n, n), expected,
                               rtol=2e-4, atol=1e-3)


def test_list_program_says_why_the_graph_executor_does_not_apply(viz_report):
    data = viz_report("list").data
    assert "runs dataflow only" in data["executor"]["unavailable"]
    assert data["vm"]["trace"]["steps"]
