"""``relayir.runtime.load`` / ``wrap``: one interface over graph, AOT and VM artifacts."""

from __future__ import annotations

import numpy as np
import pytest
from serve_fixtures import HAS_CC, mlp_reference

import relayir
from relayir.runtime import ArtifactError, ArtifactInputError, TensorSpec

KINDS = ["graph_b2", "vm"] + (["aot_b1"] if HAS_CC else [])


def _batch(kind: str) -> int:
    return {"graph_b2": 2, "vm": 3, "aot_b1": 1}[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_every_executor_runs_through_one_interface(artifacts, mlp_params, kind):
    model = relayir.runtime.load(artifacts[kind])
    assert model.executor == kind.split("_")[0]
    x = np.random.default_rng(0).standard_normal((_batch(kind), 784)).astype("float32")
    by_name = model.run({"data": x})
    by_position = model.run([x])
    np.testing.assert_allclose(by_name[0], mlp_reference(mlp_params, x), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(by_name[0], by_position[0])
    assert by_name[0] is not by_position[0]  # the caller owns each result
    (out,) = model.output_info
    assert out.dtype == "float32" and out.shape[-1] == 10
    assert model.target in ("cpu", "numpy")
    assert set(model.kernels.values()) <= {"c", "reference"}
    # a loaded AOT library keeps no kernel table: its kernels are in the entry point
    assert bool(model.kernels) == (kind != "aot_b1")
    if model.target == "cpu" and kind != "aot_b1":
        assert "fused_" in model.c_source or "vm_fused" in model.c_source


def test_input_info_keeps_symbolic_dims(artifacts):
    vm = relayir.runtime.load(artifacts["vm"])
    (spec,) = vm.input_info
    assert spec.name == "data" and spec.dtype == "float32"
    assert not spec.static and spec.shape[1] == 784 and isinstance(spec.shape[0], str)
    assert relayir.runtime.load(artifacts["graph_b2"]).input_info == [
        TensorSpec("data", (2, 784), "float32")]


def test_the_vm_learns_its_output_shapes_from_runs(artifacts):
    vm = relayir.runtime.load(artifacts["vm"])
    assert vm.output_info == []
    for b in (1, 5):
        vm.run([np.zeros((b, 784), "float32")])
    assert vm.output_info == [TensorSpec("output0", ("?", 10), "float32")]


@pytest.mark.parametrize("kind", KINDS)
def test_out_arrays_are_written(artifacts, kind):
    model = relayir.runtime.load(artifacts[kind])
    x = np.ones((_batch(kind), 784), "float32")
    out = [np.empty((_batch(kind), 10), "float32")]
    assert model.run([x], out=out)[0] is out[0]
    np.testing.assert_array_equal(out[0], model.run([x])[0])


@pytest.mark.parametrize("kind", KINDS)
def test_benchmark_profile_save_and_reload(artifacts, tmp_path, kind):
    model = relayir.runtime.load(artifacts[kind])
    assert model.benchmark(number=2, repeat=2).median > 0
    report = model.profile(number=2)
    assert len(report) >= 1 and report.total_ms > 0
    model.save(tmp_path / "copy.relayir")
    again = relayir.runtime.load(tmp_path / "copy.relayir")
    assert again.executor == model.executor and again.input_info == model.input_info
    x = np.ones((_batch(kind), 784), "float32")
    np.testing.assert_array_equal(again.run([x])[0], model.run([x])[0])


@pytest.mark.parametrize("inputs, message", [
    ({"x": np.zeros((2, 784), "float32")}, "no input named 'x'; its inputs are data"),
    ({}, "missing input data"),
    ({"data": np.zeros((2, 784), "float64")}, "'data': expected dtype float32, found float64"),
    ({"data": np.zeros((3, 784), "float32")},
     "'data': expected shape (2, 784), found shape (3, 784)"),
    ([], "takes 1 inputs (data), found 0"),
])
def test_wrong_inputs_name_the_input(artifacts, inputs, message):
    model = relayir.runtime.load(artifacts["graph_b2"])
    with pytest.raises(ArtifactInputError) as info:
        model.run(inputs)
    assert message in str(info.value)


def test_wrap_takes_built_artifacts_and_instances_are_independent(artifacts):
    from relayir.testing.models import get_workload

    mod, params, _ = get_workload("mlp", batch_size=1)
    lib = relayir.build(mod, target="numpy", params=params)
    model = relayir.runtime.wrap(lib)
    assert relayir.runtime.wrap(model) is model
    assert model.executor == "graph" and set(model.kernels.values()) == {"reference"}
    other = model.instance()
    assert other.artifact is lib and other.module is not model.module
    x = np.ones((1, 784), "float32")
    np.testing.assert_array_equal(other.run([x])[0], model.run([x])[0])


def test_not_an_artifact(tmp_path):
    bad = tmp_path / "model.relayir"
    bad.write_bytes(b"not a model")
    with pytest.raises(ArtifactError, match="not a relayir compiled artifact"):
        relayir.runtime.load(bad)
    with pytest.raises(ArtifactError, match="not found"):
        relayir.runtime.load(tmp_path / "missing.relayir")
    with pytest.raises(ArtifactError, match="not a compiled artifact"):
        relayir.runtime.wrap(object())
