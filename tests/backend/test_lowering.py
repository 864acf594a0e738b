"""One lowering path: ``build`` and ``vm.compile`` on every target call
``backend.lowering.lower``, and it decides per function what runs as C."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.backend import lowering
from relayir.backend.target import BuildError, Target
from relayir.runtime.c_kernels import CKernel, CKernelLibrary
from relayir.runtime.kernels import KernelError
from relayir.runtime.numpy_kernels import NumpyKernel, NumpyKernelLibrary
from relayir.typing.infer import infer_expr


def _mlp():
    x = relay.var("x", shape=(2, 8))
    w = relay.var("w", shape=(4, 8))
    return relay.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w))))


def _primitive(params, body):
    fn = relay.Function(params, body).with_attr("Primitive", 1)
    infer_expr(fn)
    return fn


@pytest.fixture
def calls(monkeypatch):
    seen = []
    original = lowering.lower

    def spy(functions, target, **kwargs):
        seen.append((Target.parse(target).kind, kwargs.get("dynamic", False)))
        return original(functions, target, **kwargs)

    monkeypatch.setattr(lowering, "lower", spy)
    return seen


def test_build_and_vm_compile_on_every_target_go_through_lower(calls):
    mod = _mlp()
    x = np.random.rand(2, 8).astype("float32")
    w = np.random.rand(4, 8).astype("float32")
    expected = np.maximum(x @ w.T, 0)
    lib = relay.build(mod, target="cpu")
    gm = relay.graph_executor.GraphModule(lib)
    gm.run(x=x, w=w)
    np.testing.assert_allclose(gm.get_output(0), expected, rtol=1e-5)
    for target in ("cpu", "numpy"):
        vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target=target))
        np.testing.assert_allclose(vm.run(x, w), expected, rtol=1e-5)
    assert calls == [("cpu", False), ("cpu", True), ("numpy", True)]


def test_numpy_lowering_makes_numpy_kernels():
    x = relay.var("p0", shape=(3,))
    lib = lowering.lower([("fused_exp", _primitive([x], relay.exp(x)))], "numpy")
    assert isinstance(lib, NumpyKernelLibrary) and isinstance(lib["fused_exp"], NumpyKernel)


def test_cpu_lowering_mixes_c_and_reference_kernels():
    x, y, z = (relay.var("p0", shape=(3,)) for _ in range(3))
    lib = lowering.lower([("k_exp", _primitive([x], relay.exp(x))),
                          ("k_sort", _primitive([y], relay.sort(y))),
                          ("k_ref", _primitive([z], relay.negative(z)))],
                         "llvm", reference=["k_ref"])
    assert isinstance(lib, CKernelLibrary)
    assert isinstance(lib["k_exp"], CKernel)
    assert isinstance(lib["k_sort"], NumpyKernel)  # sort has no compute
    assert isinstance(lib["k_ref"], NumpyKernel)  # asked for by name (the VM's data-dependent)


def test_symbolic_dims_need_dynamic():
    n = relay.SymbolicDim("n")
    x = relay.var("p0", relay.TensorType((n, 4), "float32"))
    fn = _primitive([x], relay.exp(x))
    with pytest.raises(KernelError, match="symbolic dimensions"):
        lowering.lower([("k", fn)], "cpu")
    lib = lowering.lower([("k", fn)], "cpu", dynamic=True)
    assert lib["k"].dim_names


def test_unknown_targets_are_refused_before_any_work():
    with pytest.raises(BuildError, match="unknown target 'tpu'"):
        lowering.lower([], "tpu")
    with pytest.raises(BuildError, match="unknown target"):
        relay.build(_mlp(), target="tpu")
