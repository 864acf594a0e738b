"""The VM's numpy-target kernel call (``NumpyKernel.call_unchecked``): no per-call type
checks (the VM checks its inputs at entry), same results as the checked call, and a
reference result of the wrong shape is still an error, never a broadcast."""

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.kernels import KernelError
from relayir.runtime.numpy_kernels import NumpyKernel


def kernel(body_of, shape=(2, 3)):
    x = relay.var("x", shape=shape, dtype="float32")
    y = relay.var("y", shape=shape, dtype="float32")
    return NumpyKernel("k", relay.Function([x, y], body_of(x, y)))


SINGLE = (lambda x, y: relay.add(x, y), lambda x, y: [x + y])
FUSED = (lambda x, y: relay.Tuple([relay.nn.relu(relay.multiply(x, y)), relay.exp(x)]),
         lambda x, y: [np.maximum(x * y, 0), np.exp(x)])


@pytest.mark.parametrize("body,want", [SINGLE, FUSED], ids=["single_op", "two_outputs"])
def test_call_unchecked_equals_the_checked_call_without_checking(monkeypatch, body, want):
    k = kernel(body)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 3), "float32"), rng.standard_normal((2, 3), "float32")
    outs = [np.empty((2, 3), "float32") for _ in want(x, y)]
    checked = [np.empty_like(o) for o in outs]
    k(x, y, *checked)

    def refuse(arrays):
        raise AssertionError("call_unchecked must not check")

    monkeypatch.setattr(k, "check", refuse)
    assert k.call_unchecked(x, y, *outs) is None
    for o, c, w in zip(outs, checked, want(x, y)):
        np.testing.assert_array_equal(o, c)
        np.testing.assert_allclose(o, w, rtol=1e-6)


def test_a_result_of_the_wrong_shape_is_an_error_not_a_broadcast():
    k = kernel(SINGLE[0])
    x = np.ones((2, 3), "float32")
    with pytest.raises(KernelError, match=r"computed shape \(2, 3\), but its type says \(1, 3\)"):
        k.call_unchecked(x, x, np.empty((1, 3), "float32"))


def test_the_vm_on_the_numpy_target_never_rechecks_kernel_arrays(monkeypatch):
    x = relay.var("x", shape=(4, 8), dtype="float32")
    y = relay.nn.softmax(relay.exp(relay.nn.softmax(x)))
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="numpy"))
    data = np.random.default_rng(1).standard_normal((4, 8), "float32")

    def refuse(self, arrays):
        raise AssertionError("the VM re-checked a kernel's arrays")

    want = relay.create_executor("debug", mod).evaluate()(data)
    monkeypatch.setattr(NumpyKernel, "check", refuse)
    np.testing.assert_allclose(vm.run(data), want, rtol=1e-5, atol=1e-6)
