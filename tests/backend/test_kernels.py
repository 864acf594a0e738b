"""The kernel interface and the numpy kernels: destination passing, checks, naming,
tuple parameters and results, saving and rebuilding."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.backend.kernel_names import kernel_base_name
from relayir.backend.lowering import lower_numpy
from relayir.runtime.kernels import Kernel, KernelError
from relayir.runtime.libraries import load_library
from relayir.runtime.numpy_kernels import NumpyKernel
from relayir.typing.infer import infer_expr


def primitive(params, body):
    fn = relay.Function(params, body).with_attr("Primitive", 1)
    infer_expr(fn)
    return fn


def test_destination_passing_and_bind():
    x = relay.var("p0", shape=(2, 3))
    b = relay.var("p1", shape=(3,))
    k = NumpyKernel("fused_add_nn_relu", primitive([x, b], relay.nn.relu(x + b)))
    assert isinstance(k, Kernel)
    assert [tuple(t.shape) for t in k.input_types] == [(2, 3), (3,)]
    assert [tuple(t.shape) for t in k.output_types] == [(2, 3)]
    a = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    bias = np.array([1, 1, 1], "float32")
    out = np.full((2, 3), np.nan, "float32")
    k(a, bias, out)
    np.testing.assert_array_equal(out, np.maximum(a + bias, 0))
    run = k.bind([a, bias, out])  # pre-bound: reads the arrays as they are at call time
    a[...] = 10
    assert run() is None
    np.testing.assert_array_equal(out, np.full((2, 3), 11, "float32"))


def test_wrong_arrays_are_clear_errors():
    x = relay.var("p0", shape=(2, 3))
    k = NumpyKernel("fused_exp", primitive([x], relay.exp(x)))
    ok = np.zeros((2, 3), "float32")
    with pytest.raises(KernelError, match=r"input 0 expected \(2, 3\) float32, found \(3, 2\)"):
        k(np.zeros((3, 2), "float32"), ok)
    with pytest.raises(KernelError, match="output 0 expected .* found .* float64"):
        k(ok, np.zeros((2, 3)))
    with pytest.raises(KernelError, match="takes 1 inputs and 1 outputs, found 3"):
        k(ok, ok, ok)
    ro = np.zeros((2, 3), "float32")
    ro.flags.writeable = False
    with pytest.raises(KernelError, match="read-only"):
        k.bind([ok, ro])


def test_tuple_parameter_and_tuple_result():
    t = relay.var("p0", relay.TupleType([relay.TensorType((2,)), relay.TensorType((3,))]))
    y = relay.var("p1", shape=(5,))
    cat = relay.concatenate(t, axis=0)
    fn = primitive([t, y], relay.Tuple([cat + y, relay.split(y, [2], axis=0)[1]]))
    k = NumpyKernel("k", fn)
    assert len(k.input_types) == 3 and len(k.output_types) == 2
    a, b, c = (np.arange(2, dtype="float32"), np.arange(3, dtype="float32"),
               np.ones(5, "float32"))
    o1, o2 = np.empty(5, "float32"), np.empty(3, "float32")
    k(a, b, c, o1, o2)
    np.testing.assert_array_equal(o1, np.concatenate([a, b]) + 1)
    np.testing.assert_array_equal(o2, c[2:])


def test_constants_inside_kernels_and_dtype_of_result():
    x = relay.var("p0", shape=(4,), dtype="int32")
    fn = primitive([x], relay.cast(x * relay.const(3), "float32") + relay.const(0.5))
    k = NumpyKernel("k", fn)
    out = np.empty(4, "float32")
    k(np.arange(4, dtype="int32"), out)
    np.testing.assert_array_equal(out, np.arange(4) * 3 + 0.5)


def test_names_are_c_identifiers_and_short():
    x = relay.var("p0", shape=(2,))
    fn = primitive([x], relay.nn.relu(relay.exp(x)))
    assert kernel_base_name(fn) == "fused_exp_nn_relu"
    y = x
    for _ in range(40):
        y = relay.tanh(y)
    name = kernel_base_name(primitive([x], y))
    assert len(name) <= 64 and name.isidentifier() and name.startswith("fused_tanh_tanh")


def test_library_table_rebuilds_kernels():
    x = relay.var("p0", shape=(3,))
    lib = lower_numpy([("fused_exp", primitive([x], relay.exp(x) * relay.const(2.0)))])
    table = lib.kernel_table()
    assert table[0]["kind"] == "numpy" and "Primitive=1" in table[0]["source"]
    again = load_library("numpy", table, {}, "numpy")
    a, out = np.array([0, 1, 2], "float32"), np.empty(3, "float32")
    again["fused_exp"](a, out)
    np.testing.assert_allclose(out, np.exp(a) * 2, rtol=1e-6)
    table[0]["outputs"] = [[[4], "float32"]]
    with pytest.raises(KernelError, match="differ from the saved"):
        load_library("numpy", table, {}, "numpy")
    with pytest.raises(KernelError, match="no loader for 'cuda'"):
        load_library("cuda", table, {}, "cpu")
    with pytest.raises(KernelError, match="no kernel 'nope'"):
        lib["nope"]


def test_reference_returning_a_wrong_shape_is_an_error():
    x = relay.var("p0", shape=(3,))
    k = NumpyKernel("k", primitive([x], relay.exp(x)))
    k.output_types = (relay.TensorType((1, 3)),)  # a lying type: must not broadcast
    with pytest.raises(KernelError, match=r"computed shape \(3,\)"):
        k(np.zeros(3, "float32"), np.zeros((1, 3), "float32"))
