"""The one input rule (``runtime.tensors.check_input``), the same in every executor: a
value converts to the input's dtype only when no value changes (numpy's safe casting for
arrays, NEP 50's weak typing for Python numbers); a non-native byte order converts."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.tensors import check_input

EXECUTORS = [("debug", "numpy"), ("graph", "numpy"), ("vm", "numpy"), ("graph", "cpu"),
             ("vm", "cpu"), ("aot", "cpu")]


def _double(dtype):
    x = relay.var("x", shape=(2,), dtype=dtype)
    return relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))


@pytest.fixture(scope="module", params=EXECUTORS, ids=[f"{e}-{t}" for e, t in EXECUTORS])
def run_f32(request):
    kind, target = request.param
    return relay.create_executor(kind, _double("float32"), target=target).evaluate()


@pytest.mark.parametrize("value", [
    np.array([1.5, 2.0], ">f4"),          # big-endian float32 is float32
    np.array([1.5, 2.0], "float16"),      # widening: no value changes
    np.array([True, False]),              # bool converts to anything
    [1.5, 2.0],                           # Python floats take the input's float dtype
    [1, 2],                               # Python ints convert to a float dtype
], ids=["big-endian", "float16", "bool", "py-floats", "py-ints"])
def test_values_that_convert_without_change_are_accepted(run_f32, value):
    want = 2 * np.asarray(value, "float32")
    np.testing.assert_array_equal(run_f32(value), want)


@pytest.mark.parametrize("value,words", [
    (np.array([1.5, 2.0]), "found float64"),          # narrowing: refused, never rounded
    (np.array([1, 2], "int64"), "found int64"),       # int64 -> float32 may round
    ([1 + 2j, 2], "complex"),
    ([1e40, 1.0], "overflows float32"),
], ids=["float64", "int64", "complex", "overflow"])
def test_values_that_would_change_are_refused_by_every_executor(run_f32, value, words):
    with pytest.raises(relay.Error, match=words):
        run_f32(value)


def test_the_refusal_names_the_astype_to_write():
    with pytest.raises(relay.Error, match=r"value.astype\('float32'\)"):
        check_input("'x'", np.zeros(2), "float32", (2,))


def test_integer_inputs_take_python_ints_in_range_and_refuse_floats():
    assert check_input("x", [1, 2], "int8", (2,)).dtype == np.int8
    assert check_input("x", np.array([1, 2], "int32"), "int64", (2,)).dtype == np.int64
    with pytest.raises(relay.Error, match="out of int8's range"):
        check_input("x", [1, 300], "int8", (2,))
    with pytest.raises(relay.Error, match="uint8's range"):
        check_input("x", [-1, 2], "uint8", (2,))
    with pytest.raises(relay.Error, match="Python floats"):
        check_input("x", [1.5, 2], "int32", (2,))
    with pytest.raises(relay.Error, match="found int64"):
        check_input("x", np.array([1, 2], "int64"), "int32", (2,))
    with pytest.raises(relay.Error, match="found float32"):  # a numpy scalar is typed
        check_input("x", np.float32(1), "int32", ())


def test_torch_tensors_including_bfloat16():
    torch = pytest.importorskip("torch")
    assert check_input("x", torch.ones(2), "float32", (2,)).dtype == np.float32
    out = check_input("x", torch.tensor([1.5, -2.0], dtype=torch.bfloat16), "bfloat16", (2,))
    np.testing.assert_array_equal(out.astype("float32"), [1.5, -2.0])


def test_big_endian_input_through_the_graph_executor_keeps_its_values():
    lib = relay.build(_double("float32"), target="cpu")
    m = relay.graph_executor.GraphModule(lib)
    m.set_input("x", np.array([1.25, -3.0], ">f4"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0), [2.5, -6.0])
