"""The cpu VM runs data-dependent functions and dynamic dims of 1 that broadcast as C
compiled at run time for each call signature (``vm/specialize.py``), not as the numpy
reference; what has no static form still runs the reference, and says so."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import relayir as relay
from relayir.ir.types import Any
from relayir.vm.specialize import MAX_SIGNATURES

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="needs a C compiler")


def _vm(fn, target="cpu"):
    exe = relay.vm.compile(relay.IRModule.from_expr(fn), target=target)
    return exe, relay.vm.VirtualMachine(exe)


def _slice_fn():
    """``exp(x[b0:5, b1:4])`` with the begin ``b`` a run-time input (dyn.strided_slice)."""
    x = relay.var("x", shape=(6, 4))
    b = relay.var("b", shape=(2,), dtype="int64")
    body = relay.dyn.strided_slice(x, b, relay.const(np.array([5, 4], "int64")),
                                   relay.const(np.array([1, 1], "int64")))
    return relay.Function([x, b], relay.exp(body))


X = np.linspace(-2, 2, 24, dtype="float32").reshape(6, 4)


def test_a_data_dependent_slice_runs_c_per_begin_value():
    exe, vm = _vm(_slice_fn())
    assert exe.kernel_library.describe_references().startswith("all ")
    for begin in ([1, 2], [0, 0], [1, 2], [4, 3]):
        b = np.array(begin, "int64")
        got = vm.invoke("main", X, b)
        np.testing.assert_allclose(np.asarray(got), np.exp(X[begin[0]:5, begin[1]:4]),
                                   rtol=1e-6)
    (spec,) = exe.specializers.values()
    assert spec.compiled_runs == 4 and not spec.reference_runs
    assert len(spec.kernels) == 3  # one kernel per distinct begin


def test_the_specialised_executable_saves_and_loads(tmp_path):
    exe, _ = _vm(_slice_fn())
    exe.save(tmp_path / "m.relayir")
    loaded = relay.vm.Executable.load(tmp_path / "m.relayir")
    vm = relay.vm.VirtualMachine(loaded)
    got = vm.invoke("main", X, np.array([2, 1], "int64"))
    np.testing.assert_allclose(np.asarray(got), np.exp(X[2:5, 1:4]), rtol=1e-6)
    assert next(iter(loaded.specializers.values())).compiled_runs == 1


def test_a_broadcasting_dim_of_one_runs_c_at_the_calls_shapes():
    x, y = relay.var("x", shape=(Any(), 4)), relay.var("y", shape=(Any(), 4))
    exe, vm = _vm(relay.Function([x, y], relay.negative(relay.add(x, y))))
    a, b = np.ones((1, 4), "float32"), np.arange(20, dtype="float32").reshape(5, 4)
    for p, q in ((a, b), (b, a), (b, b)):
        np.testing.assert_array_equal(np.asarray(vm.invoke("main", p, q)), -(p + q))
    assert not vm.reference_runs


def test_an_op_whose_shape_is_its_data_keeps_the_reference_and_says_why():
    x = relay.var("x", shape=(8,))
    exe, vm = _vm(relay.Function([x], relay.dyn.argwhere(relay.greater(x, relay.const(0.0)))))
    assert "argwhere" in exe.kernel_library.describe_references()
    data = np.array([1, -1, 2, 0, 3, -2, 0, 5], "float32")
    np.testing.assert_array_equal(np.asarray(vm.invoke("main", data)), np.argwhere(data > 0))


def test_signatures_beyond_the_limit_run_the_reference_counted():
    exe, vm = _vm(_slice_fn())
    begins = [(i % 5, i // 5) for i in range(MAX_SIGNATURES + 2)]
    for begin in begins:
        got = vm.invoke("main", X, np.array(begin, "int64"))
        np.testing.assert_allclose(np.asarray(got), np.exp(X[begin[0]:5, begin[1]:4]),
                                   rtol=1e-6)
    (spec,) = exe.specializers.values()
    assert spec.compiled_runs == MAX_SIGNATURES
    assert spec.reference_runs == {f"more than {MAX_SIGNATURES} signatures": 2}
