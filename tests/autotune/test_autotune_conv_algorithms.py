"""Graph-level tuning: each convolution's algorithm measured in the whole model
(``autotune.tune_conv_algorithms``), its records, and builds that apply them."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import relayir as relay
from relayir import autotune
from relayir.autotune.conv_algorithms import KIND, choices, conv_workloads
from relayir.transform import PassContext

NET = """
def @main(%x: Tensor[(1, 16, 12, 12), float32], %w1: Tensor[(16, 16, 3, 3), float32],
          %w2: Tensor[(32, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  nn.conv2d(%1, %w2)
}
"""
KEY3 = "conv2d_n1_c16_12x12_o16_k3x3_s1x1_p1x1x1x1_d1x1_g1"


@pytest.fixture(scope="module")
def net():
    rng = np.random.default_rng(0)
    params = {"w1": (rng.standard_normal((16, 16, 3, 3)) * 0.2).astype("float32"),
              "w2": (rng.standard_normal((32, 16, 1, 1)) * 0.2).astype("float32")}
    x = rng.standard_normal((1, 16, 12, 12)).astype("float32")
    return relay.parse(NET), params, x


def _run(lib, x):
    gm = relay.graph_executor.GraphModule(lib)
    gm.set_input("x", x)
    gm.run()
    return gm.get_output(0)


def _kernels(lib) -> list[str]:
    graph = json.loads(lib.get_graph_json())
    return [n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] == "tvm_op"]


def test_workloads_in_model_order_and_their_choices(net):
    mod, _, _ = net
    (wl3, n3), (wl1, n1) = conv_workloads(mod)
    assert (wl3.key, n3, wl1.kernel, n1) == (KEY3, 1, (1, 1), 1)
    assert [c["algorithm"] for c in choices(wl3)] == ["direct"] + ["winograd"] * 3
    assert choices(wl1) == [{"algorithm": "direct"}]  # a 1×1 conv has nothing to choose


def test_every_other_choice_is_measured_in_the_model_and_recorded(net, tmp_path):
    mod, params, x = net
    path = tmp_path / "r.json"
    lines = []
    with PassContext(opt_level=3):
        better = autotune.tune_conv_algorithms(mod, params, "cpu", records=path, rounds=2,
                                               runs=2, inputs={"x": x}, log=lines.append)
    records = autotune.load_records(path)
    # the 3×3 conv's four algorithms less the cost rule's own; the 1×1 conv has none
    assert len(records) == 3 and len(lines) == 3
    assert {r.task for r in records} == {KEY3} and {r.kind for r in records} == {KIND}
    for r in records:
        assert r.error is None and len(r.costs) == len(r.reference) == 2
        assert all(c > 0 for c in r.costs + r.reference)
    assert set(better) <= {KEY3}


def _record(schedule, cpu=None, target=None):
    here = autotune.host_cpu()
    return autotune.Record(task=KEY3, name=KEY3, kind=KIND,
                           target=target or autotune.task.target_name("cpu"),
                           cpu=cpu or here, schedule=schedule, costs=[0.5], reference=[1.0])


@pytest.mark.parametrize("schedule,winograd_alpha", [
    ({"algorithm": "winograd", "tile": 6}, 8), ({"algorithm": "winograd", "tile": 2}, 4),
    ({"algorithm": "direct"}, None)])
def test_records_choose_the_algorithm_of_build_and_vm(net, tmp_path, schedule,
                                                      winograd_alpha):
    mod, params, x = net
    path = tmp_path / "r.json"
    autotune.append_records(path, [_record(schedule)])
    with PassContext(opt_level=3):
        want = _run(relay.build(mod, target="cpu", params=params), x)
        with autotune.apply_history_best(path):
            lib = relay.build(mod, target="cpu", params=params)
            exe = relay.vm.compile(mod, target="cpu", params=params)
    wino = [k for k in _kernels(lib) if "winograd" in k]
    assert bool(wino) == (winograd_alpha is not None)
    if winograd_alpha:  # the transformed weight's first axis is the tile + 2
        graph = json.loads(lib.get_graph_json())
        node = next(i for i, n in enumerate(graph["nodes"])
                    if n["op"] == "tvm_op" and "winograd" in n["attrs"]["func_name"])
        entry = graph["nodes"][node]["inputs"][1]
        shape = graph["attrs"]["shape"][1][graph["node_row_ptr"][entry[0]] + entry[1]]
        assert shape[0] == winograd_alpha
    # the VM's weights: Winograd's transformed one (α, α, ...) or the direct 3×3 one
    # (O/y, I/x, 3, 3, x, y): blocks of 16 on AVX-512, of 8 on AVX2
    packed = [c.shape for c in exe.constants if len(c.shape) == 6]
    if winograd_alpha:
        assert any(shape[:2] == (winograd_alpha,) * 2 for shape in packed), packed
    else:
        assert any(shape[2:4] == (3, 3) for shape in packed), packed
    np.testing.assert_allclose(_run(lib, x), want, rtol=1e-4, atol=1e-4)
    vm = relay.vm.VirtualMachine(exe)
    np.testing.assert_allclose(np.asarray(vm.invoke("main", x)), want, rtol=1e-4, atol=1e-4)


def test_records_of_another_cpu_change_nothing_and_the_users_config_wins(net, tmp_path):
    mod, params, _ = net
    path = tmp_path / "r.json"
    autotune.append_records(path, [_record({"algorithm": "winograd", "tile": 6},
                                           cpu="another cpu")])
    with PassContext(opt_level=3), autotune.apply_history_best(path), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib = relay.build(mod, target="cpu", params=params)
    default = [k for k in _kernels(lib)]
    path2 = tmp_path / "r2.json"
    autotune.append_records(path2, [_record({"algorithm": "winograd", "tile": 6})])
    user = {"relay.AlterOpLayout.conv_algorithm": {KEY3: "direct"}}
    with PassContext(opt_level=3, config=user), autotune.apply_history_best(path2):
        lib2 = relay.build(mod, target="cpu", params=params)
        config_after = PassContext.current().config
    assert not any("winograd" in k for k in _kernels(lib2))  # the user's entry wins
    assert config_after == user  # the records' entries were merged only for the build
    with PassContext(opt_level=3):
        plain = relay.build(mod, target="cpu", params=params)
    assert default == _kernels(plain)
