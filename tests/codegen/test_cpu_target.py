"""The cpu target end to end: build → generated C kernels → graph executor, checked
against the numpy target and the reference interpreter; export → load in a fresh
process; bad inputs are errors, never crashes."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relayir as relay
from relayir.testing.models import get_workload, make_inputs
from relayir.transform import PassContext

MODELS = [
    ("mlp", {}),
    ("resnet18", {"image_size": 32}),
    ("mobilenet_v2", {"image_size": 32}),
    ("bert", {"num_layers": 2, "seq_len": 16, "vocab": 200}),
]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RELAYIR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def _run(lib, inputs):
    gm = relay.graph_executor.GraphModule(lib)
    gm.run(**inputs)
    return gm.get_output(0)


@pytest.mark.parametrize("name,knobs", MODELS, ids=[m[0] for m in MODELS])
def test_model_on_cpu_matches_numpy_target_and_interpreter(name, knobs):
    mod, params, _ = get_workload(name, **knobs)
    inputs = make_inputs(name, mod)
    with PassContext(opt_level=3):
        cpu = relay.build(mod, target="cpu", params=params)
        ref = relay.build(mod, target="numpy", params=params)
    assert cpu.get_lib().kind == "c"
    expected = relay.create_executor("debug", mod, params=params).evaluate()(**inputs)
    out_cpu, out_np = _run(cpu, inputs), _run(ref, inputs)
    scale = float(np.max(np.abs(expected)))
    # dense/conv accumulate in float32 in C (numpy references accumulate in float64)
    np.testing.assert_allclose(out_cpu, expected, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(out_np, expected, rtol=1e-5, atol=1e-6 * scale)


def test_export_and_load_in_a_fresh_process(tmp_path):
    mod, params, _ = get_workload("resnet18", image_size=32)
    inputs = make_inputs("resnet18", mod)
    with PassContext(opt_level=3):
        lib = relay.build(mod, target="cpu", params=params)
    expected = _run(lib, inputs)
    path = tmp_path / "resnet18.relayir"
    lib.export_library(str(path))
    np.savez(tmp_path / "inputs.npz", **inputs)
    script = textwrap.dedent(f"""
        import numpy as np, relayir as relay
        lib = relay.runtime.load_module({str(path)!r})
        gm = relay.graph_executor.GraphModule(lib)
        inputs = dict(np.load({str(tmp_path / "inputs.npz")!r}))
        gm.run(**inputs)
        np.save({str(tmp_path / "out.npy")!r}, gm.get_output(0))
    """)
    subprocess.run([sys.executable, "-c", script], check=True)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), expected)


def test_wrong_inputs_are_errors_not_crashes():
    mod, params, _ = get_workload("mlp")
    lib = relay.build(mod, target="cpu", params=params)
    gm = relay.graph_executor.GraphModule(lib)
    with pytest.raises(relay.Error, match=r"data.*\(1, 784\).*\(1, 785\)"):
        gm.set_input("data", np.zeros((1, 785), "float32"))
    with pytest.raises(relay.Error, match="float64"):
        gm.set_input("data", np.zeros((1, 784), "float64"))
    with pytest.raises(relay.Error, match="nope"):
        gm.set_input("nope", np.zeros((1, 784), "float32"))


def test_generated_source_is_one_translation_unit():
    mod, params, _ = get_workload("mlp")
    with PassContext(opt_level=3):
        lib = relay.build(mod, target="cpu", params=params)
    source = lib.get_lib().get_source()
    for name in lib.get_lib():
        assert f"int32_t {name}(" in source
