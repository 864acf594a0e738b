"""The cpu VM runs data-dependent functions and dynamic dims of 1 that broadcast as C
compiled at run time for each call signature (``vm/specialize.py``), not as the numpy
reference; what has no static form still runs the reference, and says so."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import relayir as relay
from relayir.ir.op import call as call_op
from relayir.ir.types import Any
from relayir.typing import infer_expr
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


def test_a_dynamic_nms_keeps_the_reference_its_static_twin_is_data_dependent_too():
    from relayir.vm.specialize import why_not_specialisable

    boxes, scores = relay.var("b", shape=(1, 3, 4)), relay.var("s", shape=(1, 1, 3))
    k = relay.var("k", shape=(1,), dtype="int64")
    iou, thr = relay.var("iou", shape=(1,)), relay.var("thr", shape=(0,))
    fn = relay.Function([boxes, scores, k, iou, thr], call_op(
        "dyn.vision.non_max_suppression", [boxes, scores, k, iou, thr]))
    infer_expr(fn)
    assert "depends on its data" in why_not_specialisable(fn)


def test_a_dynamic_function_the_c_back_end_cannot_lower_runs_c_at_the_calls_shapes():
    # a packed dense whose weight block is a dynamic dim: no symbolic-dim kernel, but C
    # at each call's static shapes (a fuzz case, seed 20150)
    x = relay.var("x", shape=(2, 5))
    w = relay.var("w", shape=(1, 5, Any()))
    fn = relay.Function([x, w], call_op("nn.contrib_dense_pack", [x, w],
                                        weight_layout="NC8n"))
    exe, vm = _vm(fn)
    assert exe.kernel_library.describe_references().startswith("all ")
    data = np.arange(10, dtype="float32").reshape(2, 5) / 7
    weight = np.arange(40, dtype="float32").reshape(1, 5, 8) / 11
    got = np.asarray(vm.invoke("main", data, weight))
    np.testing.assert_allclose(got, data @ weight[0], rtol=1e-6)
    (spec,) = exe.specializers.values()
    assert spec.compiled_runs == 1 and not spec.reference_runs
