"""The cpu target runs primitive functions holding a reference-only op (no compute:
sorting, bitwise) with the numpy references, next to the C kernels of the rest, and
saves/loads such a library; results match numpy."""

import numpy as np
import pytest

import relayir as relay
from relayir.backend.lowering import uses_reference_only
from relayir.op import algorithm as A
from relayir.runtime.c_kernels import CKernel
from relayir.runtime.numpy_kernels import NumpyKernel
from relayir.te.computes import REFERENCE_ONLY
from relayir.transform import PassContext

pytestmark = pytest.mark.needs_cc


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RELAYIR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def _topk_add_module():
    x = relay.var("x", shape=(3, 6), dtype="float32")
    y = relay.var("y", shape=(3, 2), dtype="float32")
    values = A.topk(x, k=2, axis=1, ret_type="values")
    body = relay.nn.relu(relay.add(values, y)) * relay.const(2.0)
    return relay.IRModule.from_expr(relay.Function([x, y], body))


def _inputs():
    rng = np.random.default_rng(0)
    return {"x": rng.normal(size=(3, 6)).astype("float32"),
            "y": rng.normal(size=(3, 2)).astype("float32")}


def _expected(inputs):
    top = -np.sort(-inputs["x"], axis=1)[:, :2]
    return np.maximum(top + inputs["y"], 0) * 2


def _run(lib, inputs):
    gm = relay.graph_executor.GraphModule(lib)
    gm.run(**inputs)
    return gm.get_output(0)


def test_topk_then_add_on_cpu_mixes_reference_and_c_kernels():
    assert "topk" in REFERENCE_ONLY
    with PassContext(opt_level=3):
        lib = relay.build(_topk_add_module(), target="cpu")
    kernels = lib.get_lib().kernels.values()
    assert any(isinstance(k, NumpyKernel) for k in kernels)
    assert any(isinstance(k, CKernel) for k in kernels)
    inputs = _inputs()
    np.testing.assert_allclose(_run(lib, inputs), _expected(inputs), rtol=1e-6)


def test_library_with_reference_kernels_exports_and_loads(tmp_path):
    with PassContext(opt_level=3):
        lib = relay.build(_topk_add_module(), target="cpu")
    path = tmp_path / "topk.relayir"
    lib.export_library(str(path))
    loaded = relay.runtime.load_module(str(path))
    kinds = {type(k) for k in loaded.get_lib().kernels.values()}
    assert kinds == {NumpyKernel, CKernel}
    inputs = _inputs()
    np.testing.assert_allclose(_run(loaded, inputs), _expected(inputs), rtol=1e-6)


def test_only_reference_kernels_build_without_c_and_round_trip(tmp_path):
    a = relay.var("a", shape=(8,), dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([a], A.sort(a, is_ascend=False)))
    with PassContext(opt_level=3):
        lib = relay.build(mod, target="cpu")
    assert all(isinstance(k, NumpyKernel) for k in lib.get_lib().kernels.values())
    path = tmp_path / "bits.relayir"
    lib.export_library(str(path))
    loaded = relay.runtime.load_module(str(path))
    av = np.array([3, -1, 7, 0, -4, 2, 2, 5], "int32")
    want = np.sort(av)[::-1]
    for m in (lib, loaded):
        np.testing.assert_array_equal(_run(m, {"a": av}), want)


def test_uses_reference_only_looks_inside_fused_bodies():
    x = relay.var("x", shape=(4,), dtype="float32")
    fn = relay.Function([x], relay.add(A.sort(x), x))
    assert uses_reference_only(fn)
    assert not uses_reference_only(relay.Function([x], relay.add(x, x)))


def test_the_library_says_which_kernels_are_references_and_why(tmp_path):
    """Never silent: a compiled model that runs a reference says which and why, also
    after export and load, and the VM's executable does the same."""
    with PassContext(opt_level=3):
        lib = relay.build(_topk_add_module(), target="cpu")
    refs = lib.get_lib().references()
    assert len(refs) == 1 and "topk has no C compute" in next(iter(refs.values()))
    line = lib.get_lib().describe_references()
    assert line.startswith(f"1 of {len(lib.get_lib())} kernels run as numpy references: ")
    assert "sorting needs data-dependent control flow" in line
    path = tmp_path / "topk.relayir"
    lib.export_library(str(path))
    assert relay.runtime.load_module(str(path)).get_lib().references() == refs
    exe = relay.vm.compile(_topk_add_module(), target="cpu")
    assert list(exe.kernel_library.references().values()) == list(refs.values())
    x = relay.var("x", shape=(4,), dtype="float32")
    plain = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))), "cpu")
    assert plain.get_lib().describe_references() == "all 1 kernels are C"
    assert plain.get_lib().references() == {}
